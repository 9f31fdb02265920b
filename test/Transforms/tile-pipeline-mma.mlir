// The software pipelining of mma loops, before and after. A 128x256x32 f16
// matmul loop (sm_90, warpgroup tiling): A and B get a ring each (64- and
// 128-byte swizzled panels), the prologue copies two iterations (the wgmma
// lags one behind, so 4 slots keep 2 in flight), the loop carries the
// groups' tokens, waits for the oldest, refills, and runs a tilegpu.mma on
// this iteration's slots that stays in flight across the back edge; after
// the loop the accumulator is waited for. The loads and the tile.mma are
// gone.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma | FileCheck %s
// Without a warpgroup tiling (mma.sync): rows padded by 16 bytes, 3 slots
// (one iteration of lag less), the result waited in the loop.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true" --tile-map-threads --tile-pipeline-mma | FileCheck %s --check-prefix=SYNC
// num-stages asks for ring depth.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma=num-stages=3 | FileCheck %s --check-prefix=S3
// Registers: the next iteration's loads issued before this one's mma.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true" --tile-map-threads --tile-pipeline-mma=mma-pipelining=regs | FileCheck %s --check-prefix=REGS
// Off: the loop as it was.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true" --tile-map-threads --tile-pipeline-mma=mma-pipelining=off | FileCheck %s --check-prefix=OFF
// RUN: not tile-opt %s --tile-pipeline-mma=mma-pipelining=fast 2>&1 | FileCheck %s --check-prefix=BAD

// CHECK-LABEL: func.func @matmul
// CHECK: %[[A:.*]] = tilegpu.alloc_shared : !tilegpu.shared<128x32xf16, slots = 4, swizzle = 64>
// CHECK: %[[B:.*]] = tilegpu.alloc_shared : !tilegpu.shared<32x256xf16, slots = 4, swizzle = 128>
// CHECK: %[[A0:.*]] = tilegpu.slot %[[A]][%{{.*}}]
// CHECK: %[[CA0:.*]] = tilegpu.async_copy %{{.*}}[%{{.*}}, %{{.*}}] into %[[A0]]
// CHECK: %[[B0:.*]] = tilegpu.slot %[[B]][%{{.*}}]
// CHECK: %[[CB0:.*]] = tilegpu.async_copy %{{.*}}[%{{.*}}, %{{.*}}] into %[[B0]]
// CHECK: %[[G0:.*]] = tilegpu.async_group %[[CA0]], %[[CB0]]
// CHECK: %[[G1:.*]] = tilegpu.async_group
// CHECK: %[[LOOP:.*]]:3 = scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}}, %[[T0:.*]] = %[[G0]], %[[T1:.*]] = %[[G1]])
// CHECK-NEXT: tilegpu.async_wait %[[T0]] pending = 1
// CHECK-NEXT: nvvm.fence.proxy
// CHECK-NEXT: gpu.barrier
// CHECK: tilegpu.async_copy
// CHECK: tilegpu.async_copy
// CHECK: %[[GN:.*]] = tilegpu.async_group
// CHECK-NOT: tile.load
// CHECK-NOT: tile.mma
// CHECK: %[[SA:.*]] = tilegpu.slot %[[A]]
// CHECK: %[[SB:.*]] = tilegpu.slot %[[B]]
// CHECK: %[[M:.*]] = tilegpu.mma %[[SA]], %[[SB]], %[[ACC]] {in_flight, tiling = {{.*}}} : !tilegpu.shared<128x32xf16, slots = 1, swizzle = 64>, !tilegpu.shared<32x256xf16, slots = 1, swizzle = 128> -> tensor<128x256xf32, #mma>
// CHECK: scf.yield %[[M]], %[[T1]], %[[GN]]
// CHECK: %[[W:.*]] = tilegpu.wait_mma %[[LOOP]]#0 pending = 0
// CHECK-NEXT: tilegpu.async_wait %[[LOOP]]#2 pending = 0
// CHECK-NEXT: gpu.barrier
// CHECK: arith.truncf %[[W]]

// SYNC-LABEL: func.func @matmul
// SYNC: tilegpu.alloc_shared : !tilegpu.shared<128x32xf16, slots = 4, row_stride = 40>
// SYNC: tilegpu.alloc_shared : !tilegpu.shared<32x256xf16, slots = 4, row_stride = 264>
// SYNC: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[T0:.*]] = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}})
// SYNC-NEXT: tilegpu.async_wait %[[T0]] pending = 2
// SYNC-NEXT: gpu.barrier
// SYNC: tilegpu.mma {{.*}} : !tilegpu.shared<128x32xf16, slots = 1, row_stride = 40>, !tilegpu.shared<32x256xf16, slots = 1, row_stride = 264> -> tensor<128x256xf32, #mma>
// SYNC-NOT: tilegpu.wait_mma
// SYNC: tilegpu.async_wait {{.*}} pending = 0

// S3: tilegpu.alloc_shared : !tilegpu.shared<128x32xf16, slots = 3, swizzle = 64>
// S3: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[T0:.*]] = %{{.*}})
// S3-NEXT: tilegpu.async_wait %[[T0]] pending = 0

// REGS-LABEL: func.func @matmul
// REGS-NOT: tilegpu
// REGS: tile.load
// REGS: tile.load
// REGS: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[A:.*]] = %{{.*}}, %[[B:.*]] = %{{.*}})
// REGS: tile.load
// REGS: tile.load
// REGS: tile.mma %[[A]], %[[B]]

// OFF-LABEL: func.func @matmul
// OFF-NOT: tilegpu
// OFF: scf.for
// OFF-NEXT: tile.load
// OFF-NEXT: tile.load
// OFF-NEXT: tile.mma

// BAD: tile-pipeline-mma: mma-pipelining must be off, regs, async or tma, not 'fast'

func.func @matmul(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                  %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                  %C: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                  %nk: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %pn = tile.bid 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x256xf32>) : i32 {
    %a = tile.load %A[%pm, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x32xf16>
    %b = tile.load %B[%k, %pn] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<32x256xf16>
    %r = tile.mma %a, %b, %acc0 : tensor<128x32xf16>, tensor<32x256xf16> -> tensor<128x256xf32>
    scf.yield %r : tensor<128x256xf32>
  }
  %h = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xf16>
  tile.store %C[%pm, %pn], %h : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, tensor<128x256xf16>
  return
}
