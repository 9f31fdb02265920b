// RUN: tile-opt %s --split-input-file --convert-tile-to-gpu | FileCheck %s

// A spin lock: a scalar atomic_cas in a while loop, then the protected
// update, then the release by atomic_xchg. A scalar is replicated over all
// 128 threads: the first replica (lane 0 of warp 0) alone runs the cmpxchg,
// acq_rel at gpu scope, and the others read its old value from shared memory
// behind a barrier, so the whole block spins, and leaves the loop, together.
// The barrier before the atomic orders every thread's earlier accesses
// before it (the release: the stores of the protected data, made by other
// threads than the one that releases). atomicrmw is relaxed between
// fence.acq_rel.gpu, as NVPTX drops atomicrmw orderings.
#blocked = #tile.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
#slice = #tile.slice<{dim = 0, parent = #blocked}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK: gpu.module @tile_kernels attributes {tile.num_warps = 4 : i32, tile.shared_mem = 4 : i32}
  // CHECK-LABEL: gpu.func @lock
  // CHECK: scf.while
  // The owner: lane (tid.x & 31) and warp ((tid.x >> 5) & 3) both 0.
  // CHECK:   arith.andi %{{.*}}, %c31_i32{{.*}} : i32
  // CHECK:   arith.shrui %{{.*}}, %c5_i32{{.*}} : i32
  // CHECK:   arith.andi %{{.*}}, %c3_i32{{.*}} : i32
  // CHECK:   %[[OWNER:.*]] = arith.andi %{{.*}}, %{{.*}} : i1
  // CHECK-NEXT: gpu.barrier
  // CHECK-NOT: llvm.fence
  // CHECK:   %[[P:.*]] = arith.andi %{{.*}}, %[[OWNER]] : i1
  // CHECK:   %[[OLD:.*]] = scf.if %[[P]] -> (i32) {
  // CHECK:     llvm.cmpxchg %{{.*}}, %{{.*}}, %{{.*}} syncscope("device") acq_rel monotonic : !llvm.ptr<1>, i32
  // CHECK:   } else {
  // CHECK:   %[[SMEM:.*]] = llvm.mlir.addressof @tile_shared : !llvm.ptr<3>
  // CHECK:   scf.if %[[OWNER]] {
  // CHECK:     llvm.store %[[OLD]], %{{.*}} : i32, !llvm.ptr<3>
  // CHECK:   }
  // CHECK:   gpu.barrier
  // CHECK:   %[[ALL:.*]] = llvm.load %{{.*}} : !llvm.ptr<3> -> i32
  // CHECK:   %[[V:.*]] = vector.from_elements %[[ALL]] : vector<1xi32>
  // CHECK:   %[[C:.*]] = arith.cmpi eq, %[[V]]
  // CHECK:   %[[B:.*]] = vector.extract %[[C]][0]
  // CHECK:   scf.condition(%[[B]])
  // CHECK: tile.ptx.ld_global {{.*}} : i32
  // CHECK: tile.ptx.st_global {{.*}} : i32
  // CHECK: gpu.barrier
  // CHECK-NEXT: llvm.fence syncscope("device") acq_rel
  // CHECK: scf.if
  // CHECK-NEXT: llvm.atomicrmw xchg %{{.*}}, %{{.*}} syncscope("device") monotonic : !llvm.ptr<1>, i32
  // CHECK: llvm.fence syncscope("device") acq_rel
  // CHECK-NEXT: gpu.barrier
  // An unused result is not broadcast.
  // CHECK-NOT: !llvm.ptr<3>
  // CHECK: gpu.return
  func.func @lock(%locks: !tile.array<?xi32, strides = [1], align = 16>,
                  %cnt: !tile.array<?xi32, strides = [1], align = 16>) attributes {tile.kernel} {
    %one1 = arith.constant dense<1> : tensor<1xi32, #blocked>
    %c0 = arith.constant 0 : i32
    %one = arith.constant dense<1> : tensor<i32, #slice>
    %zero = arith.constant dense<0> : tensor<i32, #slice>
    scf.while : () -> () {
      %old = tile.atomic_cas %locks[%zero], %zero, %one : !tile.array<?xi32, strides = [1], align = 16>[tensor<i32, #slice>], tensor<i32, #slice>
      %held = arith.cmpi eq, %old, %one : tensor<i32, #slice>
      %h = tensor.extract %held[] : tensor<i1, #slice>
      scf.condition(%h)
    } do {
      scf.yield
    }
    %v = tile.load %cnt[%c0] : !tile.array<?xi32, strides = [1], align = 16> -> tensor<1xi32, #blocked>
    %w = arith.addi %v, %one1 : tensor<1xi32, #blocked>
    tile.store %cnt[%c0], %w : !tile.array<?xi32, strides = [1], align = 16>, tensor<1xi32, #blocked>
    %r = tile.atomic_rmw xchg %locks[%zero], %zero : !tile.array<?xi32, strides = [1], align = 16>[tensor<i32, #slice>], tensor<i32, #slice>
    return
  }
}

// -----

// One element per thread, no replicas: every thread runs its own atomic and
// keeps its old value (no shared memory); the barriers still make the tile
// op one acq_rel operation of the block.
#blocked = #tile.blocked<{sizePerThread = [1], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK: gpu.module @tile_kernels attributes {tile.num_warps = 4 : i32, tile.shared_mem = 0 : i32}
  // CHECK-LABEL: gpu.func @histogram
  // CHECK: gpu.barrier
  // CHECK-NEXT: llvm.fence syncscope("device") acq_rel
  // CHECK: %[[P:.*]] = arith.andi %{{.*}}, %true
  // CHECK: scf.if %[[P]] -> (i32) {
  // CHECK-NEXT: llvm.atomicrmw add %{{.*}}, %{{.*}} syncscope("device") monotonic : !llvm.ptr<1>, i32
  // CHECK: llvm.fence syncscope("device") acq_rel
  // CHECK-NEXT: gpu.barrier
  // CHECK-NOT: !llvm.ptr<3>
  // CHECK: tile.ptx.st_global {{.*}} : i32
  func.func @histogram(%bins: !tile.array<?xi32, strides = [1], align = 16>,
                       %idx: !tile.array<?xi32, strides = [1], align = 16, div = 16>,
                       %out: !tile.array<?xi32, strides = [1], align = 16, div = 16>) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %one = arith.constant dense<1> : tensor<128xi32, #blocked>
    %i = tile.load %idx[%c0] : !tile.array<?xi32, strides = [1], align = 16, div = 16> -> tensor<128xi32, #blocked>
    %old = tile.atomic_rmw add %bins[%i], %one : !tile.array<?xi32, strides = [1], align = 16>[tensor<128xi32, #blocked>], tensor<128xi32, #blocked>
    tile.store %out[%c0], %old : !tile.array<?xi32, strides = [1], align = 16, div = 16>, tensor<128xi32, #blocked>
    return
  }
}
