// tile-pipeline-mma with mma-pipelining=tma, before and after
// (TilePipelineMmaTma.cpp). A 128x256x64 f16 matmul loop (sm_90, warpgroup
// tiling) whose operands are tile.tma_ok arrays: the kernel gets two
// tensor-map arguments (last, each naming its array; one 128-byte swizzled
// panel per box: A 128x64, B 64x64), the rings are those of the cp.async
// path (wgmma reads the same layout), four mbarriers (one per slot) are
// initialized for one arrival, and the prologue issues iterations 0 and 1
// (the wgmma lags one behind), each only when the loop runs that far: one
// expect_tx of both blocks' bytes (16384 + 32768), then the TMA copies at
// the blocks' element coordinates, innermost first. The loop waits on its
// slot's barrier with the phase's parity, passes the block barrier (every
// warpgroup is done with the slot refilled next), issues iteration it + 2
// into slot (it + 2) % 4 and runs the in-flight tilegpu.mma; afterwards the
// accumulator is waited for and the barriers invalidated between barriers.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma=mma-pipelining=tma | FileCheck %s
// An operand without tile.tma_ok (its launch could not give TMA a
// descriptor) keeps the loop on the cp.async ring; so does the default mode.
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma=mma-pipelining=tma | FileCheck %s --check-prefix=FALLBACK
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma | FileCheck %s --check-prefix=ASYNC

// CHECK-LABEL: func.func @matmul(
// CHECK-SAME: %[[AA:[^:]*]]: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok}
// CHECK-SAME: %[[BA:[^:]*]]: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok}
// CHECK-SAME: %[[NK:[^:]*]]: i32
// CHECK-SAME: %[[AMAP:[^:]*]]: !tilegpu.tensor_map<128x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 0>}
// CHECK-SAME: %[[BMAP:[^:]*]]: !tilegpu.tensor_map<64x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 1>})
// CHECK-DAG: %[[PM:.*]] = tile.bid 0
// CHECK-DAG: %[[PN:.*]] = tile.bid 1
// CHECK: %[[A:.*]] = tilegpu.alloc_shared : !tilegpu.shared<128x64xf16, slots = 4, swizzle = 128>
// CHECK: %[[B:.*]] = tilegpu.alloc_shared : !tilegpu.shared<64x256xf16, slots = 4, swizzle = 128>
// CHECK: %[[BARS:.*]] = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<4>
// CHECK-COUNT-4: tilegpu.mbarrier_init %[[BARS]][%{{.*}}], %{{.*}} : !tilegpu.mbarriers<4>
// CHECK: %[[TRIPS:.*]] = arith.maxsi
// Iteration 0 into slot 0.
// CHECK: %[[LIVE0:.*]] = arith.cmpi slt, %{{.*}}, %[[TRIPS]] : i32
// CHECK: scf.if %[[LIVE0]] {
// CHECK:   %[[BYTES:.*]] = arith.constant 49152 : i32
// CHECK:   tilegpu.mbarrier_arrive_expect_tx %[[BARS]][%[[S0:.*]]], %[[BYTES]]
// CHECK:   %[[K0:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK:   %[[M0:.*]] = arith.muli %[[PM]], %{{.*}} : i32
// CHECK:   %[[SA0:.*]] = tilegpu.slot %[[A]][%[[S0]]]
// CHECK:   tilegpu.tma_load %[[AMAP]][%[[K0]], %[[M0]]] into %[[SA0]], %[[BARS]][%[[S0]]] : !tilegpu.tensor_map<128x64xf16, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<4>
// CHECK:   %[[N0:.*]] = arith.muli %[[PN]], %{{.*}} : i32
// CHECK:   %[[KB0:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
// CHECK:   %[[SB0:.*]] = tilegpu.slot %[[B]][%[[S0]]]
// CHECK:   tilegpu.tma_load %[[BMAP]][%[[N0]], %[[KB0]]] into %[[SB0]], %[[BARS]][%[[S0]]] : !tilegpu.tensor_map<64x64xf16, swizzle = 128>, !tilegpu.shared<64x256xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<4>
// CHECK: }
// Iteration 1 into slot 1.
// CHECK: scf.if
// CHECK:   tilegpu.mbarrier_arrive_expect_tx
// CHECK:   tilegpu.tma_load %[[AMAP]]
// CHECK:   tilegpu.tma_load %[[BMAP]]
// CHECK: }
// CHECK: %[[LOOP:.*]] = scf.for %[[K:.*]] = %{{.*}} to %[[NK]] step %{{.*}} iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<128x256xf32, #mma>)
// CHECK:   %[[IT:.*]] = arith.divsi
// CHECK:   %[[SLOT:.*]] = arith.remsi %[[IT]], %[[C4:.*]] : i32
// CHECK:   %[[ROUND:.*]] = arith.divsi %[[IT]], %[[C4]] : i32
// CHECK:   %[[PARITY:.*]] = arith.remsi %[[ROUND]], %{{.*}} : i32
// CHECK:   tilegpu.mbarrier_wait %[[BARS]][%[[SLOT]]], %[[PARITY]]
// CHECK:   gpu.barrier
// CHECK:   %[[AHEAD:.*]] = arith.addi %[[IT]], %{{.*}} : i32
// CHECK:   %[[NEXT:.*]] = arith.remsi %[[AHEAD]], %[[C4]] : i32
// CHECK:   %[[LIVE:.*]] = arith.cmpi slt, %[[AHEAD]], %[[TRIPS]] : i32
// CHECK:   scf.if %[[LIVE]] {
// CHECK:     tilegpu.mbarrier_arrive_expect_tx %[[BARS]][%[[NEXT]]], %{{.*}}
// CHECK:     tilegpu.tma_load %[[AMAP]][{{.*}}] into %{{.*}}, %[[BARS]][%[[NEXT]]]
// CHECK:     tilegpu.tma_load %[[BMAP]][{{.*}}] into %{{.*}}, %[[BARS]][%[[NEXT]]]
// CHECK:   }
// CHECK-NOT: tile.load
// CHECK-NOT: tile.mma
// CHECK:   %[[SA:.*]] = tilegpu.slot %[[A]]
// CHECK:   %[[SB:.*]] = tilegpu.slot %[[B]]
// CHECK:   %[[M:.*]] = tilegpu.mma %[[SA]], %[[SB]], %[[ACC]] {in_flight, tiling = {{.*}}} : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.shared<64x256xf16, slots = 1, swizzle = 128> -> tensor<128x256xf32, #mma>
// CHECK:   scf.yield %[[M]]
// CHECK: %[[W:.*]] = tilegpu.wait_mma %[[LOOP]] pending = 0
// CHECK-NEXT: gpu.barrier
// CHECK-COUNT-4: tilegpu.mbarrier_inval %[[BARS]]
// CHECK-NEXT: gpu.barrier
// CHECK: arith.truncf %[[W]]

// FALLBACK-LABEL: func.func @fallback(
// FALLBACK-NOT: tensor_map
// FALLBACK-SAME: %{{[^:]*}}: i32)
// FALLBACK-NOT: tilegpu.tma_load
// FALLBACK: tilegpu.async_copy
// FALLBACK: tilegpu.async_copy
// FALLBACK-NOT: tilegpu.tma_load
// FALLBACK: return

// ASYNC-LABEL: func.func @matmul(
// ASYNC-NOT: tensor_map
// ASYNC-NOT: tma_load
// ASYNC: tilegpu.async_copy
// ASYNC-NOT: tma_load

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

// B is not tile.tma_ok (say, 16-byte aligned rows but a broadcast): both
// operands stay on cp.async.
func.func @fallback(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                    %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
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
