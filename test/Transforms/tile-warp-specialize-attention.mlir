// An attention-shaped loop (two wgmmas, B = K^T and V loaded in the loop,
// A in registers) under tile-pipeline-mma=tma (pipelineTmaB in
// TilePipelineMmaTma.cpp): K and V stream through TMA rings guarded by
// one full mbarrier per slot, no cp.async; each mma still waits for its
// result, so iteration i refills the slot of iteration i - 1 (S - 1 = 3
// iterations copied in front of the loop).
// The shared-ring case (one block two wgmmas read, the backward's Q as Q^T
// and Q) is pinned by test_tma.py's test_attention_backward_runs_on_wgmma.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads=num-warps=8 --tile-pipeline-mma=mma-pipelining=tma | FileCheck %s --check-prefix=RING
// tile-warp-specialize rings=attention splits it: the consumers release
// the slot of iteration i after its last mma (no block barrier, no lag).
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads=num-warps=8 --tile-pipeline-mma=mma-pipelining=tma --tile-warp-specialize=rings=attention | FileCheck %s --check-prefix=WS
// ping-pong: each wgmma waits for its warpgroup's turn (named barrier 3 +
// warpgroup), hands the turn over once issued, then waits for its result;
// warpgroup 1 hands warpgroup 0 the first turn.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads=num-warps=8 --tile-pipeline-mma=mma-pipelining=tma --tile-warp-specialize="rings=attention ping-pong=true" | FileCheck %s --check-prefix=PP
// Lowered, the in-flight register-A wgmma is committed before the turn is
// handed over and waited for after.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads=num-warps=8 --tile-pipeline-mma=mma-pipelining=tma --tile-warp-specialize="rings=attention ping-pong=true" --tile-allocate-shared --convert-tile-to-gpu | FileCheck %s --check-prefix=PPGPU

// RING-LABEL: func.func @attention(
// RING-NOT: tilegpu.async_copy
// RING: %[[FULL:.*]] = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<4>
// RING-COUNT-3: tilegpu.mbarrier_arrive_expect_tx %[[FULL]][%{{.*}}], %c16384_i32
// Q, loaded in front of the loop, is copied once by TMA into a one-slot
// buffer (its own mbarrier, waited for right before the loop) that the
// first wgmma reads as A.
// RING: %[[QBAR:.*]] = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<1>
// RING: %[[Q:.*]] = tilegpu.alloc_shared : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
// RING: tilegpu.tma_load %{{.*}} into %{{.*}}, %[[QBAR]]
// RING: tilegpu.mbarrier_wait %[[QBAR]]
// RING-NEXT: scf.for
// RING: tilegpu.mbarrier_wait %[[FULL]]
// RING-NEXT: gpu.barrier
// RING: tilegpu.mbarrier_arrive_expect_tx %[[FULL]]
// RING: tilegpu.tma_load
// RING: tilegpu.tma_load
// RING: %[[QSLOT:.*]] = tilegpu.slot %[[Q]]
// RING: tilegpu.mma %[[QSLOT]], %{{.*}} {b_transposed, tiling
// RING: math.exp2
// RING: tilegpu.mma %{{.*}} {tiling
// RING-NOT: tilegpu.async_copy
// RING: tilegpu.mbarrier_inval %[[FULL]]
// RING: tilegpu.mbarrier_inval %[[QBAR]]

// A store between Q's load and the loop: the copy would be issued after it,
// so Q stays in registers (no one-slot buffer, no mbarrier of its own).
// RING-LABEL: func.func @store_between(
// RING-NOT: tilegpu.mbarriers<1>
// RING: scf.for
// RING: tilegpu.mma %{{.*}}, %{{.*}}, %{{.*}} {b_transposed, tiling{{.*}} : tensor<128x64xf16

// WS-LABEL: func.func @attention(
// WS: %[[FULL:.*]] = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<4>
// WS: %[[EMPTY:.*]] = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<4>
// WS: scf.if
// WS-NEXT: nvvm.setmaxregister decrease 40
// WS: tilegpu.mbarrier_wait %[[EMPTY]]
// WS: tilegpu.tma_load
// WS: tilegpu.tma_load
// WS: } else {
// WS-NEXT: nvvm.setmaxregister increase 232
// WS: scf.for
// WS: tilegpu.mbarrier_wait %[[FULL]]
// WS-NOT: gpu.barrier
// WS: tilegpu.mma %{{.*}} {b_transposed, tiling
// WS: tilegpu.mma %{{.*}} {tiling
// WS-NOT: tilegpu.mma
// WS: tilegpu.mbarrier_arrive %[[EMPTY]]
// WS-NEXT: scf.yield
// WS: } {tilegpu.warp_specialized = #tilegpu.warp_specialized<consumers = 8, producers = 4>}

// PP-LABEL: func.func @attention(
// PP: nvvm.setmaxregister increase 232
// PP: %[[GROUP:.*]] = arith.divui %{{.*}}, %c128_i32
// PP: %[[MINE:.*]] = arith.addi %[[GROUP]], %c3_i32
// PP: %[[OTHER:.*]] = arith.subi %c7_i32{{.*}}, %[[MINE]]
// PP: %[[SECOND:.*]] = arith.cmpi eq, %[[GROUP]]
// PP: scf.if %[[SECOND]] {
// PP: nvvm.barrier.arrive id = %c3_i32{{.*}} number_of_threads = %[[N:.*]]
// PP: scf.for
// PP: nvvm.barrier id = %[[MINE]] number_of_threads = %[[N]]
// PP-NEXT: %[[S:.*]] = tilegpu.mma {{.*}}b_transposed, in_flight
// PP-NEXT: nvvm.barrier.arrive id = %[[OTHER]] number_of_threads = %[[N]]
// PP-NEXT: %[[SW:.*]] = tilegpu.wait_mma %[[S]] pending = 0
// PP-NEXT: math.exp2 %[[SW]]
// PP: nvvm.barrier id = %[[MINE]]
// PP-NEXT: %[[O:.*]] = tilegpu.mma {{.*}}in_flight
// PP-NEXT: nvvm.barrier.arrive id = %[[OTHER]]
// PP-NEXT: %[[OW:.*]] = tilegpu.wait_mma %[[O]] pending = 0
// PP: scf.yield %[[OW]]

// PPGPU-LABEL: gpu.func @attention(
// PPGPU: nvvm.barrier id
// PPGPU: nvvm.wgmma.fence.aligned
// PPGPU: nvvm.wgmma.commit.group.sync.aligned
// PPGPU: nvvm.barrier.arrive
// PPGPU: tile.ptx.wgmma_wait

// A (1, 64) row the loop loads beside K and V (the backward's lse and
// delta per query block) comes through a ring of its own (unswizzled TMA
// copies of 256 bytes on the same full barriers, which expect K's, V's
// and its bytes) and is read where first used: here after the second mma.
// RING-LABEL: func.func @row_loads(
// RING: tilegpu.alloc_shared : !tilegpu.shared<1x64xf32, slots = 4>
// RING: %[[FULL:.*]] = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<4>
// RING-COUNT-3: tilegpu.mbarrier_arrive_expect_tx %[[FULL]][%{{.*}}], %c16640_i32
// RING: scf.for
// RING-NOT: tile.load
// RING: tilegpu.tma_load %{{.*}} into %{{.*}}, %[[FULL]][%{{.*}}] : !tilegpu.tensor_map<1x64xf32>, !tilegpu.shared<1x64xf32, slots = 1>
// RING: tilegpu.mma
// RING: tilegpu.mma
// RING-NEXT: %[[ROW:.*]] = tilegpu.read_shared %{{.*}} : !tilegpu.shared<1x64xf32, slots = 1> -> tensor<1x64xf32
// RING-NEXT: tile.reshape %[[ROW]]
// RING: scf.yield
// The consumers release a slot after its last read, the row's.
// WS-LABEL: func.func @row_loads(
// WS: tilegpu.alloc_mbarriers : !tilegpu.mbarriers<4>
// WS: %[[EMPTY:.*]] = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<4>
// WS: } else {
// WS: scf.for
// WS: tilegpu.mma
// WS: tilegpu.mma
// WS: tilegpu.read_shared
// WS-NOT: tile.reshape
// WS: tilegpu.mbarrier_arrive %[[EMPTY]]
// WS: tile.reshape
// WS: scf.yield

func.func @attention(%Q: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                     %K: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                     %V: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                     %O: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                     %n: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %q = tile.load %Q[%pm, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x64xf16>
  %o = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x64xf32>) : i32 {
    %k = tile.load %K[%j, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x64xf16>
    %v = tile.load %V[%j, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x64xf16>
    %kt = tile.permute %k, [1, 0] : tensor<64x64xf16> -> tensor<64x64xf16>
    %s = tile.mma %q, %kt, %zero : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    %p = math.exp2 %s : tensor<128x64xf32>
    %p16 = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xf16>
    %r = tile.mma %p16, %v, %acc : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    scf.yield %r : tensor<128x64xf32>
  }
  %o16 = arith.truncf %o : tensor<128x64xf32> to tensor<128x64xf16>
  tile.store %O[%pm, %c0], %o16 : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, tensor<128x64xf16>
  return
}

func.func @store_between(%Q: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                         %K: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                         %V: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                         %O: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                         %n: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %q = tile.load %Q[%pm, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x64xf16>
  %ones = arith.constant dense<1.0> : tensor<128x64xf16>
  tile.store %Q[%pm, %c0], %ones : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, tensor<128x64xf16>
  %o = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x64xf32>) : i32 {
    %k = tile.load %K[%j, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x64xf16>
    %v = tile.load %V[%j, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x64xf16>
    %kt = tile.permute %k, [1, 0] : tensor<64x64xf16> -> tensor<64x64xf16>
    %s = tile.mma %q, %kt, %zero : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    %p16 = arith.truncf %s : tensor<128x64xf32> to tensor<128x64xf16>
    %r = tile.mma %p16, %v, %acc : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    scf.yield %r : tensor<128x64xf32>
  }
  %o16 = arith.truncf %o : tensor<128x64xf32> to tensor<128x64xf16>
  tile.store %O[%pm, %c0], %o16 : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, tensor<128x64xf16>
  return
}

func.func @row_loads(%Q: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                     %K: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                     %V: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                     %R: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                     %O: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
                     %n: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %q = tile.load %Q[%pm, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x64xf16>
  %o = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x64xf32>) : i32 {
    %k = tile.load %K[%j, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x64xf16>
    %v = tile.load %V[%j, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x64xf16>
    %row = tile.load %R[%pm, %j] : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<1x64xf32>
    %flat = tile.reshape %row : tensor<1x64xf32> -> tensor<64xf32>
    %kt = tile.permute %k, [1, 0] : tensor<64x64xf16> -> tensor<64x64xf16>
    %s = tile.mma %q, %kt, %zero : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    %p = math.exp2 %s : tensor<128x64xf32>
    %p16 = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xf16>
    %r = tile.mma %p16, %v, %acc : tensor<128x64xf16>, tensor<64x64xf16> -> tensor<128x64xf32>
    %e = tile.expand_dims %flat, 0 : tensor<64xf32> -> tensor<1x64xf32>
    %b = tile.broadcast %e : tensor<1x64xf32> -> tensor<128x64xf32>
    %next = arith.addf %r, %b : tensor<128x64xf32>
    scf.yield %next : tensor<128x64xf32>
  }
  tile.store %O[%pm, %c0], %o : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<128x64xf32>
  return
}
