// RUN: tile-opt %s -tile-fuse -split-input-file | FileCheck %s

// Two reductions of one shape along one axis become one (layernorm's sum and
// sum of squares): the data is walked once and the block synchronizes once.
// CHECK-LABEL: func @merge_siblings
// CHECK-SAME: (%[[X:.*]]: tensor<8x64xf32>)
// CHECK: %[[SQ:.*]] = arith.mulf %[[X]], %[[X]]
// CHECK: %[[R:.*]]:2 = tile.reduce(%[[X]], %[[SQ]]) axis = 1 : (tensor<8x64xf32>, tensor<8x64xf32>) -> (tensor<8xf32>, tensor<8xf32>)
// CHECK-NEXT: ^bb0(%[[A0:.*]]: f32, %[[A1:.*]]: f32, %[[N0:.*]]: f32, %[[N1:.*]]: f32):
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[A0]], %[[N0]]
// CHECK-NEXT: %[[M:.*]] = arith.maximumf %[[A1]], %[[N1]]
// CHECK-NEXT: tile.yield %[[S]], %[[M]]
// CHECK-NOT: tile.reduce
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @merge_siblings(%x: tensor<8x64xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %sq = arith.mulf %x, %x : tensor<8x64xf32>
  %0 = tile.reduce(%x) axis = 1 : (tensor<8x64xf32>) -> tensor<8xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tile.yield %s : f32
  }
  %1 = tile.reduce(%sq) axis = 1 : (tensor<8x64xf32>) -> tensor<8xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.maximumf %p, %q : f32
    tile.yield %s : f32
  }
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// A reduction that consumes another's result cannot merge with it (softmax's
// max, then sum of exp(x - max)).
// CHECK-LABEL: func @dependent_stay_apart
// CHECK: tile.reduce(%{{.*}}) axis = 0
// CHECK: tile.reduce(%{{.*}}) axis = 0
func.func @dependent_stay_apart(%x: tensor<64xf32>) -> tensor<f32> {
  %0 = tile.reduce(%x) axis = 0 : (tensor<64xf32>) -> tensor<f32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.maximumf %p, %q : f32
    tile.yield %s : f32
  }
  %m = tile.reshape %0 : tensor<f32> -> tensor<1xf32>
  %b = tile.broadcast %m : tensor<1xf32> -> tensor<64xf32>
  %d = arith.subf %x, %b : tensor<64xf32>
  %1 = tile.reduce(%d) axis = 0 : (tensor<64xf32>) -> tensor<f32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tile.yield %s : f32
  }
  return %1 : tensor<f32>
}

// -----

// Different axes stay apart.
// CHECK-LABEL: func @axes_differ
// CHECK: tile.reduce(%{{.*}}) axis = 0
// CHECK: tile.reduce(%{{.*}}) axis = 1
func.func @axes_differ(%x: tensor<8x8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = tile.reduce(%x) axis = 0 : (tensor<8x8xf32>) -> tensor<8xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tile.yield %s : f32
  }
  %1 = tile.reduce(%x) axis = 1 : (tensor<8x8xf32>) -> tensor<8xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tile.yield %s : f32
  }
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// An mma with a zero accumulator followed by an addition takes the addend as
// its accumulator.
// CHECK-LABEL: func @mma_epilogue
// CHECK-SAME: (%[[A:.*]]: tensor<16x16xf16>, %[[B:.*]]: tensor<16x16xf16>, %[[C:.*]]: tensor<16x16xf32>)
// CHECK-NEXT: %[[M:.*]] = tile.mma %[[A]], %[[B]], %[[C]]
// CHECK-NEXT: return %[[M]]
func.func @mma_epilogue(%a: tensor<16x16xf16>, %b: tensor<16x16xf16>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %z = arith.constant dense<0.0> : tensor<16x16xf32>
  %m = tile.mma %a, %b, %z : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  %r = arith.addf %c, %m : tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}

// -----

// A non-zero accumulator is kept: folding would change the result.
// CHECK-LABEL: func @mma_nonzero_acc
// CHECK: tile.mma
// CHECK: arith.addf
func.func @mma_nonzero_acc(%a: tensor<16x16xf16>, %c: tensor<16x16xf32>) -> tensor<16x16xf32> {
  %m = tile.mma %a, %a, %c : tensor<16x16xf16>, tensor<16x16xf16> -> tensor<16x16xf32>
  %r = arith.addf %c, %m : tensor<16x16xf32>
  return %r : tensor<16x16xf32>
}

// -----

// A combiner that captures a value computed after the earlier reduction
// (cuTile's captured scalars) stays a reduction of its own: merged, the
// capture would be used before it is defined.
// CHECK-LABEL: func @capture_after
// CHECK: %[[S:.*]] = tile.reduce
// CHECK: %[[C:.*]] = tensor.extract
// CHECK: tile.reduce
// CHECK: arith.minnumf %{{.*}}, %[[C]]
func.func @capture_after(%x: tensor<8x8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = tile.reduce(%x) axis = 1 : (tensor<8x8xf32>) -> tensor<8xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tile.yield %s : f32
  }
  %t = tile.reduce(%0) axis = 0 : (tensor<8xf32>) -> tensor<f32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tile.yield %s : f32
  }
  %c = tensor.extract %t[] : tensor<f32>
  %1 = tile.reduce(%x) axis = 1 : (tensor<8x8xf32>) -> tensor<8xf32> {
  ^bb0(%p: f32, %q: f32):
    %m = arith.maxnumf %p, %q : f32
    %s = arith.minnumf %m, %c : f32
    tile.yield %s : f32
  }
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}

// -----

// A capture defined before both merges as any source does.
// CHECK-LABEL: func @capture_before
// CHECK: tile.reduce(%{{.*}}, %{{.*}}) axis = 1
// CHECK-NOT: tile.reduce
func.func @capture_before(%x: tensor<8x8xf32>, %c: f32) -> (tensor<8xf32>, tensor<8xf32>) {
  %0 = tile.reduce(%x) axis = 1 : (tensor<8x8xf32>) -> tensor<8xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tile.yield %s : f32
  }
  %1 = tile.reduce(%x) axis = 1 : (tensor<8x8xf32>) -> tensor<8xf32> {
  ^bb0(%p: f32, %q: f32):
    %m = arith.maxnumf %p, %q : f32
    %s = arith.minnumf %m, %c : f32
    tile.yield %s : f32
  }
  return %0, %1 : tensor<8xf32>, tensor<8xf32>
}
