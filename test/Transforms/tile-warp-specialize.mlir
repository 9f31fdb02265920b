// tile-warp-specialize (TileWarpSpecialize.cpp) on a TMA ring of
// tile-pipeline-mma: one "empty" mbarrier per slot joins the full ones
// (initialized for the 256 consumer threads), the prologue's copies are
// gone, and an scf.if on the thread number splits the warps. The producer
// warpgroup (threads 256..383, registers cut to 40) copies every iteration
// j, waiting from j = 4 on until the consumers released slot j % 4 (parity
// (j / 4 + 1) % 2); the consumers (registers raised to 232) wait for the
// full barrier, run the in-flight wgmma without a block barrier, release
// the previous iteration's slot, and run the rest of the kernel.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma=mma-pipelining=tma --tile-warp-specialize | FileCheck %s
// Lowered: a 384-thread block; the producer's first thread issues the
// copies, the consumers' block barriers are named barrier 1 of 256 threads.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma=mma-pipelining=tma --tile-warp-specialize --tile-allocate-shared --convert-tile-to-gpu | FileCheck %s --check-prefix=GPU
// rings=attention (the compiler's default) leaves a matmul's in-flight ring
// alone.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma=mma-pipelining=tma --tile-warp-specialize=rings=attention | FileCheck %s --check-prefix=ATTENTION
// FlashAttention-3's split (producer-registers=24 consumer-registers=240):
// the block still launches with 168 registers a thread, (24 + 2 x 240) / 3.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma=mma-pipelining=tma --tile-warp-specialize="producer-registers=24 consumer-registers=240" --tile-allocate-shared --convert-tile-to-gpu | FileCheck %s --check-prefix=REGS
// setmaxnreg takes multiples of 8 from 24 to 256.
// RUN: not tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma=mma-pipelining=tma --tile-warp-specialize="consumer-registers=236" 2>&1 | FileCheck %s --check-prefix=BADREGS
// The cp.async ring has no full barriers to split around: unchanged.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma --tile-warp-specialize | FileCheck %s --check-prefix=ASYNC

// CHECK-LABEL: func.func @matmul(
// CHECK: %[[FULL:.*]] = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<4>
// CHECK-COUNT-4: tilegpu.mbarrier_init %[[FULL]]
// CHECK: %[[EMPTY:.*]] = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<4>
// CHECK: %[[C256:.*]] = arith.constant 256 : i32
// CHECK: tilegpu.mbarrier_init %[[EMPTY]][%{{.*}}], %[[C256]]
// CHECK-NOT: tilegpu.tma_load
// CHECK: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x : i32
// CHECK: %[[PRODUCER:.*]] = arith.cmpi uge, %[[TID]], %{{.*}} : i32
// CHECK: scf.if %[[PRODUCER]] {
// CHECK-NEXT: nvvm.setmaxregister decrease 40
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step
// CHECK: %[[SLOT:.*]] = arith.remsi %[[J]], %{{.*}} : i32
// CHECK: %[[REUSED:.*]] = arith.cmpi sge, %[[J]], %{{.*}} : i32
// CHECK: scf.if %[[REUSED]] {
// CHECK: tilegpu.mbarrier_wait %[[EMPTY]][%[[SLOT]]]
// CHECK: tilegpu.mbarrier_arrive_expect_tx %[[FULL]][%[[SLOT]]]
// CHECK: tilegpu.tma_load
// CHECK: tilegpu.tma_load
// CHECK: } else {
// CHECK-NEXT: nvvm.setmaxregister increase 232
// CHECK: scf.for
// CHECK: tilegpu.mbarrier_wait %[[FULL]]
// CHECK-NOT: gpu.barrier
// CHECK-NOT: tma_load
// CHECK: tilegpu.mma {{.*}}in_flight
// CHECK: scf.if
// CHECK: tilegpu.mbarrier_arrive %[[EMPTY]]
// CHECK: tilegpu.wait_mma
// CHECK: tilegpu.mbarrier_inval %[[EMPTY]]
// CHECK: tile.store
// CHECK: } {tilegpu.warp_specialized = #tilegpu.warp_specialized<consumers = 8, producers = 4>}
// CHECK-NEXT: return

// GPU-LABEL: gpu.func @matmul(
// GPU-SAME: known_block_size = array<i32: 384, 1, 1>
// GPU: nvvm.setmaxregister decrease 40
// GPU: %[[FIRST:.*]] = arith.constant 256 : i32
// GPU: arith.cmpi eq, %{{.*}}, %[[FIRST]] : i32
// GPU: nvvm.cp.async.bulk.tensor.shared.cluster.global
// GPU: nvvm.setmaxregister increase 232
// GPU: nvvm.mbarrier.arrive
// GPU: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// GPU-NOT: gpu.barrier
// GPU: gpu.return

// REGS-LABEL: gpu.func @matmul(
// REGS-SAME: nvvm.maxnreg = 168
// REGS: nvvm.setmaxregister decrease 24
// REGS: nvvm.setmaxregister increase 240

// BADREGS: error: tile-warp-specialize: setmaxnreg takes a multiple of 8 from 24 to 256 registers, not 236

// ATTENTION-LABEL: func.func @matmul(
// ATTENTION-NOT: warp_specialized
// ATTENTION: tilegpu.mma {{.*}}in_flight
// ATTENTION-NOT: warp_specialized

// ASYNC-LABEL: func.func @matmul(
// ASYNC-NOT: warp_specialized
// ASYNC: tilegpu.async_copy
// ASYNC-NOT: warp_specialized

func.func @matmul(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                  %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                  %C: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                  %nk: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %pn = tile.bid 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x256xf32>) : i32 {
    %a = tile.load %A[%pm, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x64xf16>
    %b = tile.load %B[%k, %pn] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x256xf16>
    %r = tile.mma %a, %b, %acc0 : tensor<128x64xf16>, tensor<64x256xf16> -> tensor<128x256xf32>
    scf.yield %r : tensor<128x256xf32>
  }
  %h = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xf16>
  tile.store %C[%pm, %pn], %h : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, tensor<128x256xf16>
  return
}
