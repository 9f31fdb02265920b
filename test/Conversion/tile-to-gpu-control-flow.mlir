// RUN: tile-opt %s --split-input-file --convert-tile-to-gpu | FileCheck %s

// scf.while and scf.if carrying thread-mapped tiles and scalars: each tile
// becomes the vector of this thread's elements in the loop's and the
// branch's types (4 of 512 f32 over 128 threads); no tensor is left.
// CHECK-LABEL: gpu.func @while_if
// CHECK-NOT: tensor<
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : vector<4xf32>
// CHECK: %[[W:.*]]:3 = scf.while (%{{.*}} = %[[Z]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) : (vector<4xf32>, i32, f32) -> (vector<4xf32>, i32, f32) {
// CHECK: scf.condition(%{{.*}}) %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>, i32, f32
// CHECK: } do {
// CHECK: ^bb0(%[[ACC:.*]]: vector<4xf32>, %{{.*}}: i32, %[[F:.*]]: f32):
// CHECK: scf.if %{{.*}} -> (vector<4xf32>, f32) {
// CHECK: arith.addf %[[ACC]], %{{.*}} : vector<4xf32>
// CHECK: } else {
// CHECK: %[[SP:.*]] = vector.broadcast %[[F]] : f32 to vector<4xf32>
// CHECK: arith.subf %[[ACC]], %[[SP]] : vector<4xf32>
// CHECK: scf.yield %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>, i32, f32
// CHECK: vector.extract %[[W]]#0[0] : f32 from vector<4xf32>
// CHECK-NOT: tensor<
// CHECK: gpu.return
#blocked = #tile.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tile.num_warps = 4 : i32} {
  func.func @while_if(%x: !tile.array<?xf32, strides = [1], align = 16, div = 16>, %o: !tile.array<?xf32, strides = [1], align = 16, div = 16>, %n: i32, %s: f32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    %i = tile.bid 0
    %a = tile.load %x[%i] : !tile.array<?xf32, strides = [1], align = 16, div = 16> -> tensor<512xf32, #blocked>
    %z = arith.constant dense<0.0> : tensor<512xf32, #blocked>
    %w:3 = scf.while (%acc = %z, %k = %c0, %f = %s) : (tensor<512xf32, #blocked>, i32, f32) -> (tensor<512xf32, #blocked>, i32, f32) {
      %lt = arith.cmpi slt, %k, %n : i32
      scf.condition(%lt) %acc, %k, %f : tensor<512xf32, #blocked>, i32, f32
    } do {
    ^bb0(%acc1: tensor<512xf32, #blocked>, %k1: i32, %f1: f32):
      %rem = arith.remsi %k1, %c2 : i32
      %even = arith.cmpi eq, %rem, %c0 : i32
      %r:2 = scf.if %even -> (tensor<512xf32, #blocked>, f32) {
        %t = arith.addf %acc1, %a : tensor<512xf32, #blocked>
        scf.yield %t, %f1 : tensor<512xf32, #blocked>, f32
      } else {
        %sp = tile.splat %f1 : tensor<512xf32, #blocked>
        %t = arith.subf %acc1, %sp : tensor<512xf32, #blocked>
        %f2 = arith.mulf %f1, %f1 : f32
        scf.yield %t, %f2 : tensor<512xf32, #blocked>, f32
      }
      %k2 = arith.addi %k1, %c1 : i32
      scf.yield %r#0, %k2, %r#1 : tensor<512xf32, #blocked>, i32, f32
    }
    tile.store %o[%i], %w#0 : !tile.array<?xf32, strides = [1], align = 16, div = 16>, tensor<512xf32, #blocked>
    return
  }
}

// -----

// A layout conversion in one branch goes through shared memory inside that
// branch (its barriers run under a block-uniform condition); the kernel
// reserves the scratch.
// CHECK: gpu.module @tile_kernels attributes {tile.num_warps = 4 : i32, tile.shared_mem = 16384 : i32}
// CHECK-LABEL: gpu.func @convert_in_branch
// CHECK: scf.if %{{.*}} -> (vector<32xf32>) {
// CHECK-NOT: gpu.barrier
// CHECK: } else {
// CHECK: gpu.barrier
// CHECK: llvm.store %{{.*}} : vector<4xf32>, !llvm.ptr<3>
// CHECK: gpu.barrier
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: scf.yield %{{.*}} : vector<32xf32>
// CHECK-NOT: tensor<
// CHECK: gpu.return

#blocked = #tile.blocked<{sizePerThread = [4, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 4], order = [0, 1]}>
#blocked1 = #tile.blocked<{sizePerThread = [1, 4], threadsPerWarp = [2, 16], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {tile.num_warps = 4 : i32} {
  func.func @convert_in_branch(%x: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, %o: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, %n: i32) attributes {tile.kernel} {
    %i = tile.bid 0
    %c0 = arith.constant 0 : i32
    %c = arith.cmpi sgt, %n, %c0 : i32
    %r = scf.if %c -> (tensor<64x64xf32, #blocked>) {
      %t = tile.load %x[%i, %c0] {order = array<i64: 1, 0>} : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<64x64xf32, #blocked>
      scf.yield %t : tensor<64x64xf32, #blocked>
    } else {
      %t = tile.load %x[%i, %c0] : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<64x64xf32, #blocked1>
      %t2 = tile.convert_layout %t : tensor<64x64xf32, #blocked1> -> tensor<64x64xf32, #blocked>
      scf.yield %t2 : tensor<64x64xf32, #blocked>
    }
    tile.store %o[%i, %c0], %r : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<64x64xf32, #blocked>
    return
  }
}
