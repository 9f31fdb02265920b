// RUN: tile-opt %s --split-input-file --tile-chunk-loops="max-reduce-extent=128 reduce-chunk=64" | FileCheck %s
// RUN: tile-opt %s --split-input-file --tile-chunk-loops --tile-tiling | FileCheck %s --check-prefix=DEFAULT

!A = !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>

// A row sum of 256 elements in chunks of 64: chunk 0 seeds the accumulator,
// the loop adds chunks 1..3 elementwise (the combiner on tensors), the chunk
// is reduced once after the loop. Tile indices along the axis are scaled by
// the number of chunks; padding and the other index stay.
// CHECK-LABEL: func.func @row_sum
// CHECK-SAME: (%[[X:.*]]: !tile.array{{.*}}, %[[I:.*]]: i32, %[[J:.*]]: i32)
// CHECK: %[[N:.*]] = arith.constant 4 : i32
// CHECK: %[[BASE:.*]] = arith.muli %[[J]], %[[N]] : i32
// CHECK: %[[FIRST:.*]] = tile.load %[[X]][%[[I]], %[[BASE]]] {padding = 1.000000e+00 : f32} : {{.*}} -> tensor<2x64xf32>
// CHECK: %[[ACC:.*]] = scf.for %[[K:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[FIRST]]) -> (tensor<2x64xf32>) : i32 {
// CHECK: %[[IDX:.*]] = arith.addi %[[BASE]], %[[K]] : i32
// CHECK: %[[CHUNK:.*]] = tile.load %[[X]][%[[I]], %[[IDX]]] {padding = 1.000000e+00 : f32} : {{.*}} -> tensor<2x64xf32>
// CHECK: %[[S:.*]] = arith.addf %[[A]], %[[CHUNK]] : tensor<2x64xf32>
// CHECK: scf.yield %[[S]] : tensor<2x64xf32>
// CHECK: %[[R:.*]] = tile.reduce(%[[ACC]]) axis = 1 : (tensor<2x64xf32>) -> tensor<2xf32>
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: tensor<2x256xf32>
// CHECK: return %[[R]]
// DEFAULT-LABEL: func.func @row_sum
// DEFAULT-NOT: scf.for
// DEFAULT: tile.reduce(%{{.*}}) axis = 1 : (tensor<2x256xf32>)
func.func @row_sum(%x: !A, %i: i32, %j: i32) -> tensor<2xf32> {
  %t = tile.load %x[%i, %j] {padding = 1.0 : f32} : !A -> tensor<2x256xf32>
  %r = tile.reduce(%t) axis = 1 : (tensor<2x256xf32>) -> tensor<2xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tile.yield %s : f32
  }
  return %r : tensor<2xf32>
}

// -----

!H = !tile.array<?xf16, strides = [1], align = 16, div = 16>

// The elementwise chain between the load and the reduction (a cast, a
// square, a splat constant) runs on each chunk; the merged sum and
// max reduction (tile-fuse's siblings) carries two accumulators.
// CHECK-LABEL: func.func @chain_two_results
// CHECK: %[[T0:.*]] = tile.load {{.*}} -> tensor<64xf16>
// CHECK: %[[E0:.*]] = arith.extf %[[T0]] : tensor<64xf16> to tensor<64xf32>
// CHECK: %[[C0:.*]] = arith.constant dense<2.000000e+00> : tensor<64xf32>
// CHECK: %[[M0:.*]] = arith.mulf %[[E0]], %[[C0]] : tensor<64xf32>
// CHECK: %[[Q0:.*]] = arith.mulf %[[M0]], %[[M0]] : tensor<64xf32>
// CHECK: %[[L:.*]]:2 = scf.for {{.*}} iter_args(%[[A:.*]] = %[[M0]], %[[B:.*]] = %[[Q0]]) -> (tensor<64xf32>, tensor<64xf32>) : i32 {
// CHECK: tile.load {{.*}} -> tensor<64xf16>
// CHECK: arith.extf
// CHECK: %[[M:.*]] = arith.mulf
// CHECK: %[[Q:.*]] = arith.mulf %[[M]], %[[M]] : tensor<64xf32>
// CHECK: %[[S:.*]] = arith.addf %[[A]], %[[M]] : tensor<64xf32>
// CHECK: %[[X:.*]] = arith.maximumf %[[B]], %[[Q]] : tensor<64xf32>
// CHECK: scf.yield %[[S]], %[[X]]
// CHECK: tile.reduce(%[[L]]#0, %[[L]]#1) axis = 0 : (tensor<64xf32>, tensor<64xf32>) -> (tensor<f32>, tensor<f32>)
func.func @chain_two_results(%x: !H, %i: i32) -> (tensor<f32>, tensor<f32>) {
  %t = tile.load %x[%i] : !H -> tensor<512xf16>
  %e = arith.extf %t : tensor<512xf16> to tensor<512xf32>
  %two = arith.constant dense<2.0> : tensor<512xf32>
  %m = arith.mulf %e, %two : tensor<512xf32>
  %q = arith.mulf %m, %m : tensor<512xf32>
  %r:2 = tile.reduce(%m, %q) axis = 0 : (tensor<512xf32>, tensor<512xf32>) -> (tensor<f32>, tensor<f32>) {
  ^bb0(%a0: f32, %a1: f32, %n0: f32, %n1: f32):
    %s = arith.addf %a0, %n0 : f32
    %x1 = arith.maximumf %a1, %n1 : f32
    tile.yield %s, %x1 : f32, f32
  }
  return %r#0, %r#1 : tensor<f32>, tensor<f32>
}

// -----

!A = !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>

// A transposed load (order = [1, 0]): result axis 0 is the array's dim 1,
// so that index is the one scaled.
// CHECK-LABEL: func.func @transposed
// CHECK-SAME: (%[[X:.*]]: !tile.array{{.*}}, %[[I:.*]]: i32, %[[J:.*]]: i32)
// CHECK: %[[BASE:.*]] = arith.muli %[[J]], %{{.*}} : i32
// CHECK: tile.load %[[X]][%[[I]], %[[BASE]]] {order = array<i64: 1, 0>} : {{.*}} -> tensor<64x4xf32>
// CHECK: scf.for
// CHECK: tile.reduce(%{{.*}}) axis = 0 : (tensor<64x4xf32>) -> tensor<4xf32>
func.func @transposed(%x: !A, %i: i32, %j: i32) -> tensor<4xf32> {
  %t = tile.load %x[%i, %j] {order = array<i64: 1, 0>} : !A -> tensor<256x4xf32>
  %r = tile.reduce(%t) axis = 0 : (tensor<256x4xf32>) -> tensor<4xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.maximumf %p, %q : f32
    tile.yield %s : f32
  }
  return %r : tensor<4xf32>
}

// -----

!A = !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>

// Left alone: a reduced extent within the limit; a loaded tile that is also
// stored (it is needed whole anyway); an elementwise value used elsewhere; a
// store between the load and the reduction (the chunks would read after it).
// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: scf.for
// CHECK: tile.reduce(%{{.*}}) axis = 1 : (tensor<2x128xf32>)
// CHECK: tile.reduce(%{{.*}}) axis = 1 : (tensor<2x256xf32>)
// CHECK: tile.reduce(%{{.*}}) axis = 1 : (tensor<2x256xf32>)
// CHECK: tile.reduce(%{{.*}}) axis = 1 : (tensor<2x256xf32>)
// CHECK-NOT: scf.for
// CHECK: return
func.func @left_alone(%x: !A, %y: !A, %i: i32) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x256xf32>, tensor<2xf32>) {
  %small = tile.load %x[%i, %i] : !A -> tensor<2x128xf32>
  %r0 = tile.reduce(%small) axis = 1 : (tensor<2x128xf32>) -> tensor<2xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tile.yield %s : f32
  }
  %stored = tile.load %x[%i, %i] : !A -> tensor<2x256xf32>
  tile.store %y[%i, %i], %stored : !A, tensor<2x256xf32>
  %r1 = tile.reduce(%stored) axis = 1 : (tensor<2x256xf32>) -> tensor<2xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tile.yield %s : f32
  }
  %t = tile.load %x[%i, %i] : !A -> tensor<2x256xf32>
  %e = math.exp %t : tensor<2x256xf32>
  %r2 = tile.reduce(%e) axis = 1 : (tensor<2x256xf32>) -> tensor<2xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tile.yield %s : f32
  }
  %before = tile.load %y[%i, %i] : !A -> tensor<2x256xf32>
  %zero = arith.constant dense<0.0> : tensor<2x256xf32>
  tile.store %y[%i, %i], %zero : !A, tensor<2x256xf32>
  %r3 = tile.reduce(%before) axis = 1 : (tensor<2x256xf32>) -> tensor<2xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tile.yield %s : f32
  }
  return %r0, %r1, %r2, %e, %r3 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x256xf32>, tensor<2xf32>
}

// -----

!A = !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>

// The defaults: a row of 32768 elements becomes 4 chunks of 8192; rows of
// up to 16384 stay whole.
// DEFAULT-LABEL: func.func @defaults
// DEFAULT: arith.constant 4 : i32
// DEFAULT: tile.load {{.*}} -> tensor<1x8192xf32>
// DEFAULT: scf.for
// DEFAULT: tile.reduce(%{{.*}}) axis = 1 : (tensor<1x8192xf32>)
// DEFAULT: tile.reduce(%{{.*}}) axis = 1 : (tensor<1x16384xf32>)
func.func @defaults(%x: !A, %i: i32) -> (tensor<1xf32>, tensor<1xf32>) {
  %t = tile.load %x[%i, %i] : !A -> tensor<1x32768xf32>
  %r = tile.reduce(%t) axis = 1 : (tensor<1x32768xf32>) -> tensor<1xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tile.yield %s : f32
  }
  %u = tile.load %x[%i, %i] : !A -> tensor<1x16384xf32>
  %r2 = tile.reduce(%u) axis = 1 : (tensor<1x16384xf32>) -> tensor<1xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tile.yield %s : f32
  }
  return %r, %r2 : tensor<1xf32>, tensor<1xf32>
}

// -----

!A = !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>
#blocked = #tile.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>

// Mapped IR (tiles with layouts) is left alone.
// CHECK-LABEL: func.func @mapped
// CHECK-NOT: scf.for
// CHECK: tile.reduce(%{{.*}}) axis = 1 : (tensor<1x256xf32, #blocked>)
func.func @mapped(%x: !A, %i: i32) -> tensor<1xf32, #tile.slice<{dim = 1, parent = #blocked}>> {
  %t = tile.load %x[%i, %i] : !A -> tensor<1x256xf32, #blocked>
  %r = tile.reduce(%t) axis = 1 : (tensor<1x256xf32, #blocked>) -> tensor<1xf32, #tile.slice<{dim = 1, parent = #blocked}>> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tile.yield %s : f32
  }
  return %r : tensor<1xf32, #tile.slice<{dim = 1, parent = #blocked}>>
}
