// RUN: tile-opt %s -convert-tile-to-host -cse -split-input-file | FileCheck %s

// broadcast: a linalg.generic reading broadcast dimensions at index 0.
// CHECK-DAG: #[[$BMAP:.*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[$ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<1x64xf32>)
// CHECK: %[[E:.*]] = tensor.empty() : tensor<32x64xf32>
// CHECK: linalg.generic {indexing_maps = [#[[$BMAP]], #[[$ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<1x64xf32>) outs(%[[E]] : tensor<32x64xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT:   linalg.yield %[[IN]] : f32
func.func @broadcast(%x: tensor<1x64xf32>) -> tensor<32x64xf32> {
  %0 = tile.broadcast %x : tensor<1x64xf32> -> tensor<32x64xf32>
  return %0 : tensor<32x64xf32>
}


// -----

// expand_dims: tensor.expand_shape, the unit dimension grouped with a
// neighbour (none for a scalar tile).
// CHECK-LABEL: func.func @expand_dims
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [64, 1] : tensor<64xf32> into tensor<64x1xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[}}[0, 1]] output_shape [1, 64] : tensor<64xf32> into tensor<1x64xf32>
// CHECK: tensor.expand_shape %{{.*}} [] output_shape [1] : tensor<f32> into tensor<1xf32>
func.func @expand_dims(%y: tensor<64xf32>, %s: tensor<f32>) -> (tensor<64x1xf32>, tensor<1x64xf32>, tensor<1xf32>) {
  %0 = tile.expand_dims %y, 1 : tensor<64xf32> -> tensor<64x1xf32>
  %1 = tile.expand_dims %y, 0 : tensor<64xf32> -> tensor<1x64xf32>
  %2 = tile.expand_dims %s, 0 : tensor<f32> -> tensor<1xf32>
  return %0, %1, %2 : tensor<64x1xf32>, tensor<1x64xf32>, tensor<1xf32>
}


// -----

// reshape: collapse to 1-d, then expand (row-major order is kept).
// CHECK-LABEL: func.func @reshape
// CHECK: %[[F:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1]] : tensor<32x64xf32> into tensor<2048xf32>
// CHECK: tensor.expand_shape %[[F]] {{\[}}[0, 1, 2]] output_shape [4, 8, 64] : tensor<2048xf32> into tensor<4x8x64xf32>
// CHECK: tensor.expand_shape %{{.*}} [] output_shape [1, 1] : tensor<f32> into tensor<1x1xf32>
// CHECK: tensor.collapse_shape %{{.*}} [] : tensor<1x1xf32> into tensor<f32>
func.func @reshape(%x: tensor<32x64xf32>, %s: tensor<f32>, %o: tensor<1x1xf32>) -> (tensor<4x8x64xf32>, tensor<1x1xf32>, tensor<f32>) {
  %0 = tile.reshape %x : tensor<32x64xf32> -> tensor<4x8x64xf32>
  %1 = tile.reshape %s : tensor<f32> -> tensor<1x1xf32>
  %2 = tile.reshape %o : tensor<1x1xf32> -> tensor<f32>
  return %0, %1, %2 : tensor<4x8x64xf32>, tensor<1x1xf32>, tensor<f32>
}


// -----

// permute: linalg.transpose with the same permutation.
// CHECK-LABEL: func.func @permute
// CHECK: %[[E:.*]] = tensor.empty() : tensor<8x2x4xf32>
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x4x8xf32>) outs(%[[E]] : tensor<8x2x4xf32>) permutation = [2, 0, 1]
func.func @permute(%x: tensor<2x4x8xf32>) -> tensor<8x2x4xf32> {
  %0 = tile.permute %x, [2, 0, 1] : tensor<2x4x8xf32> -> tensor<8x2x4xf32>
  return %0 : tensor<8x2x4xf32>
}


// -----

// iota: linalg.index cast to the element type; splat: linalg.fill.
// CHECK-LABEL: func.func @iota_splat
// CHECK-SAME: (%[[S:.*]]: f32)
// CHECK: linalg.generic
// CHECK:   %[[I:.*]] = linalg.index 0 : index
// CHECK:   %[[C:.*]] = arith.index_cast %[[I]] : index to i32
// CHECK:   linalg.yield %[[C]] : i32
// CHECK: } -> tensor<128xi32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x4xf32>
// CHECK: linalg.fill ins(%[[S]] : f32) outs(%[[E]] : tensor<4x4xf32>) -> tensor<4x4xf32>
func.func @iota_splat(%s: f32) -> (tensor<128xi32>, tensor<4x4xf32>) {
  %0 = tile.iota : tensor<128xi32>
  %1 = tile.splat %s : tensor<4x4xf32>
  return %0, %1 : tensor<128xi32>, tensor<4x4xf32>
}
