// RUN: tile-opt %s -convert-tile-to-host -cse -split-input-file | FileCheck %s

// mma: linalg.matmul, whose body extends f16 inputs to the f32 accumulator.
// CHECK-LABEL: func.func @mma
// CHECK-SAME: (%[[A:.*]]: tensor<64x32xf16>, %[[B:.*]]: tensor<32x128xf16>, %[[C:.*]]: tensor<64x128xf32>)
// CHECK: %[[R:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<64x32xf16>, tensor<32x128xf16>) outs(%[[C]] : tensor<64x128xf32>) -> tensor<64x128xf32>
// CHECK: return %[[R]]
func.func @mma(%a: tensor<64x32xf16>, %b: tensor<32x128xf16>, %c: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %0 = tile.mma %a, %b, %c : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
  return %0 : tensor<64x128xf32>
}


// -----

// 3-d mma: linalg.batch_matmul (tf32 is allowed, full f32 is exact).
// CHECK-LABEL: func.func @bmm
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x16x8xf32>, tensor<2x8x16xf32>) outs(%{{.*}} : tensor<2x16x16xf32>) -> tensor<2x16x16xf32>
func.func @bmm(%a: tensor<2x16x8xf32>, %b: tensor<2x8x16xf32>, %c: tensor<2x16x16xf32>) -> tensor<2x16x16xf32> {
  %0 = tile.mma %a, %b, %c {allow_tf32} : tensor<2x16x8xf32>, tensor<2x8x16xf32> -> tensor<2x16x16xf32>
  return %0 : tensor<2x16x16xf32>
}


// -----

// reduce: the first slice seeds the accumulator, linalg.reduce combines the
// rest with the cloned combiner, so combiners need no neutral element.
// CHECK-LABEL: func.func @reduce
// CHECK-SAME: (%[[X:.*]]: tensor<8x64xf32>)
// CHECK: %[[INIT:.*]] = tensor.extract_slice %[[X]][0, 0] [8, 1] [1, 1] : tensor<8x64xf32> to tensor<8xf32>
// CHECK: %[[REST:.*]] = tensor.extract_slice %[[X]][0, 1] [8, 63] [1, 1] : tensor<8x64xf32> to tensor<8x63xf32>
// CHECK: %[[R:.*]] = linalg.reduce { arith.maximumf } ins(%[[REST]] : tensor<8x63xf32>) outs(%[[INIT]] : tensor<8xf32>) dimensions = [1]
// CHECK: return %[[R]]
func.func @reduce(%x: tensor<8x64xf32>) -> tensor<8xf32> {
  %0 = tile.reduce(%x) axis = 1 : (tensor<8x64xf32>) -> tensor<8xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.maximumf %p, %q : f32
    tile.yield %s : f32
  }
  return %0 : tensor<8xf32>
}


// -----

// Several tiles reduce together; the combiner takes (accumulated, new) and
// linalg.reduce's body (new, accumulated): the arguments are swapped.
// CHECK-LABEL: func.func @argmax
// CHECK: %[[V0:.*]] = tensor.extract_slice %{{.*}}[0] [1] [1] : tensor<64xf32> to tensor<f32>
// CHECK: %[[I0:.*]] = tensor.extract_slice %{{.*}}[0] [1] [1] : tensor<64xi32> to tensor<i32>
// CHECK: %[[R:.*]]:2 = linalg.reduce ins(%{{.*}}, %{{.*}} : tensor<63xf32>, tensor<63xi32>) outs(%[[V0]], %[[I0]] : tensor<f32>, tensor<i32>) dimensions = [0]
// CHECK-NEXT: (%[[NV:.*]]: f32, %[[NI:.*]]: i32, %[[AV:.*]]: f32, %[[AI:.*]]: i32) {
// CHECK-NEXT:   %[[GT:.*]] = arith.cmpf ogt, %[[NV]], %[[AV]] : f32
// CHECK-NEXT:   %[[SV:.*]] = arith.select %[[GT]], %[[NV]], %[[AV]] : f32
// CHECK-NEXT:   %[[SI:.*]] = arith.select %[[GT]], %[[NI]], %[[AI]] : i32
// CHECK-NEXT:   linalg.yield %[[SV]], %[[SI]] : f32, i32
func.func @argmax(%x: tensor<64xf32>, %i: tensor<64xi32>) -> (tensor<f32>, tensor<i32>) {
  %0:2 = tile.reduce(%x, %i) axis = 0 : (tensor<64xf32>, tensor<64xi32>) -> (tensor<f32>, tensor<i32>) {
  ^bb0(%v0: f32, %i0: i32, %v1: f32, %i1: i32):
    %gt = arith.cmpf ogt, %v1, %v0 : f32
    %v = arith.select %gt, %v1, %v0 : f32
    %k = arith.select %gt, %i1, %i0 : i32
    tile.yield %v, %k : f32, i32
  }
  return %0#0, %0#1 : tensor<f32>, tensor<i32>
}


// -----

// scan: a loop along the axis (backwards when reversed) combining each slice
// of the source with the previous slice of the result.
// CHECK-LABEL: func.func @scan
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32>)
// CHECK: %[[R:.*]] = scf.for %[[K:.*]] = %c1 to %c16 step %c1 iter_args(%[[ACC:.*]] = %[[X]]) -> (tensor<4x16xf32>) {
// CHECK:   %[[POS:.*]] = arith.subi %c15, %[[K]] : index
// CHECK:   %[[PREV:.*]] = arith.addi %[[POS]], %c1 : index
// CHECK:   %[[P:.*]] = tensor.extract_slice %[[ACC]][0, %[[PREV]]] [4, 1] [1, 1] : tensor<4x16xf32> to tensor<4xf32>
// CHECK:   %[[S:.*]] = tensor.extract_slice %[[X]][0, %[[POS]]] [4, 1] [1, 1] : tensor<4x16xf32> to tensor<4xf32>
// CHECK:   %[[G:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[S]] : tensor<4xf32>, tensor<4xf32>)
// CHECK:     arith.addf
// CHECK:   %[[U:.*]] = tensor.insert_slice %[[G]] into %[[ACC]][0, %[[POS]]] [4, 1] [1, 1]
// CHECK:   scf.yield %[[U]]
// CHECK: return %[[R]]
func.func @scan(%x: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %0 = tile.scan(%x) axis = 1 attributes {reverse} : (tensor<4x16xf32>) -> tensor<4x16xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tile.yield %s : f32
  }
  return %0 : tensor<4x16xf32>
}
