// RUN: tile-opt %s --tile-overlap-mma-chain | FileCheck %s
// RUN: tile-opt %s --tile-overlap-mma-chain=ping-pong=true | FileCheck %s --check-prefix=PP
// RUN: tile-opt %s --tile-overlap-mma-chain=late-ops-first=true | FileCheck %s --check-prefix=LATE

// bench/kernels.py's attention at D=64 (BM = BN = 128, a ring of three
// slots) after tile-warp-specialize and tile-allocate-shared. The consumer
// loop is rotated: iteration 0's S and softmax before it, the last P V
// after it, all under a guard for no iteration; in the loop S_j and
// P_{j-1} V_{j-1} are issued in flight, S_j waited for with one group
// left (the softmax runs beside P V), then P V, then the slot of j - 1 is
// released. P crosses the iterations as f16.
// CHECK-LABEL: func.func @attention
// CHECK-NOT: nvvm.barrier
// With late-ops-first, O's rescale (by the carried a_{j-1}) comes first in
// the loop, pinned by a wait for no group, and P_{j-1} V_{j-1} reads it.
// LATE: scf.for
// LATE:   %[[SCALED:.*]] = arith.mulf %{{.*}} : tensor<128x64xf32, #mma>
// LATE:   %[[PINNED:.*]] = tilegpu.wait_mma %[[SCALED]] pending = 0
// LATE:   tilegpu.mma {{.*}} {b_transposed, in_flight
// LATE:   tilegpu.mma %{{.*}}, %{{.*}}, %[[PINNED]] {in_flight
// LATE:   tilegpu.wait_mma {{.*}} pending = 1
// With ping-pong (two consumer warpgroups): warpgroup 1 gives warpgroup 0
// the first turn (named barrier 3); each iteration waits for its turn
// before S_j and passes it after P_{j-1} V_{j-1}; after the loop
// warpgroup 0 takes the last turn warpgroup 1 passed.
// PP-LABEL: func.func @attention
// PP: nvvm.setmaxregister increase 232
// PP: %[[TID:.*]] = nvvm.read.ptx.sreg.tid.x
// PP: %[[GROUP:.*]] = arith.divui %[[TID]], %c128{{.*}}
// PP: %[[MINE:.*]] = arith.addi %[[GROUP]], %c3{{.*}}
// PP: %[[OTHER:.*]] = arith.subi %c7{{.*}}, %[[MINE]]
// PP: scf.if
// PP: nvvm.barrier.arrive id = %c3{{.*}} number_of_threads = %c256
// PP: scf.for
// PP:   nvvm.barrier id = %[[MINE]] number_of_threads = %c256
// PP-NEXT: tilegpu.mma {{.*}} {b_transposed, in_flight
// PP:   tilegpu.mma {{.*}} {in_flight
// PP-NEXT: nvvm.barrier.arrive id = %[[OTHER]] number_of_threads = %c256
// PP:   tilegpu.wait_mma {{.*}} pending = 1
// PP: }
// PP: arith.cmpi eq, %[[GROUP]], %c0{{.*}}
// PP: scf.if
// PP: nvvm.barrier id = %[[MINE]] number_of_threads = %c256
// CHECK: nvvm.setmaxregister increase 232
// CHECK: scf.if %{{.*}} -> (tensor<128xf32, #{{.*}}>, tensor<128x64xf32, #mma>, tensor<128xf32, #{{.*}}>)
// CHECK: tilegpu.mbarrier_wait
// CHECK: %[[S0:.*]] = tilegpu.mma {{.*}} {b_transposed, tiling
// CHECK: tile.reduce(%[[S0]])
// CHECK: scf.for {{.*}} iter_args({{.*}}) -> ({{.*}}tensor<128x128xf16, #mma>{{.*}}, i32)
// CHECK:   tilegpu.mbarrier_wait
// CHECK:   %[[S:.*]] = tilegpu.mma {{.*}} {b_transposed, in_flight, tiling
// CHECK-NOT: tile.reduce
// CHECK:   %[[O:.*]] = tilegpu.mma %{{.*}}, %{{.*}}, %{{.*}} {in_flight, tiling{{.*}} : tensor<128x128xf16, #mma>
// CHECK:   %[[SW:.*]] = tilegpu.wait_mma %[[S]] pending = 1
// CHECK:   tile.reduce(%[[SW]])
// CHECK:   %[[OW:.*]] = tilegpu.wait_mma %[[O]] pending = 0
// CHECK:   tilegpu.mbarrier_arrive
// CHECK:   scf.yield {{.*}}%[[OW]]
// CHECK: }
// CHECK-NOT: in_flight
// CHECK: tilegpu.mma %{{.*}}, %{{.*}}, %{{.*}} {tiling{{.*}} : tensor<128x128xf16, #mma>
// CHECK: tilegpu.mbarrier_arrive
// CHECK: } else {
// CHECK: scf.yield %cst
#blocked = #tile.blocked<{sizePerThread = [1, 1, 4], threadsPerWarp = [1, 2, 16], warpsPerCTA = [1, 8, 1], order = [2, 1, 0]}>
#mma = #tile.mma<{version = 2, warpsPerCTA = [8, 1]}>
#slice = #tile.slice<{dim = 1, parent = #mma}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @attention(%arg0: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg1: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg2: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg3: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg4: f32, %arg5: !tilegpu.tensor_map<1x128x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 1>}, %arg6: !tilegpu.tensor_map<1x128x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 2>}, %arg7: !tilegpu.tensor_map<1x128x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 0>}) attributes {tile.kernel, tilegpu.shared_bytes = 115712 : i64} {
    %cst = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #mma>
    %c1_i32 = arith.constant 1 : i32
    %c128_i32 = arith.constant 128 : i32
    %cst_0 = arith.constant dense<0.000000e+00> : tensor<128x64xf32, #mma>
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<128xf32, #slice>
    %cst_2 = arith.constant dense<0xFF800000> : tensor<128xf32, #slice>
    %cst_3 = arith.constant 1.44269502 : f32
    %c0_i32 = arith.constant 0 : i32
    %0 = tile.bid 0
    %1 = tile.bid 1
    %2 = arith.mulf %arg4, %cst_3 : f32
    %3 = tile.dim %arg1, 1 : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>
    %4 = arith.floordivsi %3, %c128_i32 : i32
    %5 = tilegpu.alloc_shared {offset = 0 : i64} : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128>
    %6 = tilegpu.alloc_shared {offset = 49152 : i64} : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128>
    %7 = tilegpu.alloc_mbarriers {offset = 98304 : i64} : !tilegpu.mbarriers<3>
    %c1_i32_4 = arith.constant 1 : i32
    %c0_i32_5 = arith.constant 0 : i32
    tilegpu.mbarrier_init %7[%c0_i32_5], %c1_i32_4 : !tilegpu.mbarriers<3>
    %c1_i32_6 = arith.constant 1 : i32
    %c1_i32_7 = arith.constant 1 : i32
    tilegpu.mbarrier_init %7[%c1_i32_7], %c1_i32_6 : !tilegpu.mbarriers<3>
    %c1_i32_8 = arith.constant 1 : i32
    %c2_i32 = arith.constant 2 : i32
    tilegpu.mbarrier_init %7[%c2_i32], %c1_i32_8 : !tilegpu.mbarriers<3>
    %8 = tilegpu.alloc_mbarriers {offset = 98328 : i64} : !tilegpu.mbarriers<3>
    %c256_i32 = arith.constant 256 : i32
    %c0_i32_9 = arith.constant 0 : i32
    tilegpu.mbarrier_init %8[%c0_i32_9], %c256_i32 : !tilegpu.mbarriers<3>
    %c256_i32_10 = arith.constant 256 : i32
    %c1_i32_11 = arith.constant 1 : i32
    tilegpu.mbarrier_init %8[%c1_i32_11], %c256_i32_10 : !tilegpu.mbarriers<3>
    %c256_i32_12 = arith.constant 256 : i32
    %c2_i32_13 = arith.constant 2 : i32
    tilegpu.mbarrier_init %8[%c2_i32_13], %c256_i32_12 : !tilegpu.mbarriers<3>
    %c0_i32_14 = arith.constant 0 : i32
    %9 = arith.subi %4, %c0_i32 : i32
    %10 = arith.ceildivsi %9, %c1_i32 : i32
    %11 = arith.maxsi %10, %c0_i32_14 : i32
    %c0_i32_15 = arith.constant 0 : i32
    %c0_i32_16 = arith.constant 0 : i32
    %12 = arith.cmpi slt, %c0_i32_16, %11 : i32
    %c1_i32_17 = arith.constant 1 : i32
    %c1_i32_18 = arith.constant 1 : i32
    %13 = arith.cmpi slt, %c1_i32_18, %11 : i32
    %14 = tilegpu.alloc_mbarriers {offset = 98352 : i64} : !tilegpu.mbarriers<1>
    %c0_i32_19 = arith.constant 0 : i32
    %c1_i32_20 = arith.constant 1 : i32
    tilegpu.mbarrier_init %14[%c0_i32_19], %c1_i32_20 : !tilegpu.mbarriers<1>
    gpu.barrier
    %c16384_i32 = arith.constant 16384 : i32
    tilegpu.mbarrier_arrive_expect_tx %14[%c0_i32_19], %c16384_i32 : !tilegpu.mbarriers<1>
    %15 = tilegpu.alloc_shared {offset = 99328 : i64} : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
    %c64_i32 = arith.constant 64 : i32
    %16 = arith.muli %c0_i32, %c64_i32 : i32
    %c128_i32_21 = arith.constant 128 : i32
    %17 = arith.muli %0, %c128_i32_21 : i32
    %c1_i32_22 = arith.constant 1 : i32
    %18 = arith.muli %1, %c1_i32_22 : i32
    %19 = tilegpu.slot %15[%c0_i32_19] : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
    tilegpu.tma_load %arg7[%16, %17, %18] into %19, %14[%c0_i32_19] : !tilegpu.tensor_map<1x128x64xf16, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<1>
    tilegpu.mbarrier_wait %14[%c0_i32_19], %c0_i32_19 : !tilegpu.mbarriers<1>
    %20 = nvvm.read.ptx.sreg.tid.x : i32
    %c256_i32_23 = arith.constant 256 : i32
    %21 = arith.cmpi uge, %20, %c256_i32_23 : i32
    scf.if %21 {
      nvvm.setmaxregister  decrease 40
      %c1_i32_24 = arith.constant 1 : i32
      %c0_i32_25 = arith.constant 0 : i32
      scf.for %arg8 = %c0_i32_25 to %11 step %c1_i32_24  : i32 {
        %c3_i32 = arith.constant 3 : i32
        %22 = arith.remsi %arg8, %c3_i32 : i32
        %c3_i32_26 = arith.constant 3 : i32
        %23 = arith.cmpi sge, %arg8, %c3_i32_26 : i32
        scf.if %23 {
          %c1_i32_33 = arith.constant 1 : i32
          %c3_i32_34 = arith.constant 3 : i32
          %34 = arith.divsi %arg8, %c3_i32_34 : i32
          %35 = arith.addi %34, %c1_i32_33 : i32
          %c2_i32_35 = arith.constant 2 : i32
          %36 = arith.remsi %35, %c2_i32_35 : i32
          tilegpu.mbarrier_wait %8[%22], %36 : !tilegpu.mbarriers<3>
        }
        %24 = arith.muli %arg8, %c1_i32 : i32
        %25 = arith.addi %c0_i32, %24 : i32
        %c32768_i32 = arith.constant 32768 : i32
        tilegpu.mbarrier_arrive_expect_tx %7[%22], %c32768_i32 : !tilegpu.mbarriers<3>
        %c64_i32_27 = arith.constant 64 : i32
        %26 = arith.muli %c0_i32, %c64_i32_27 : i32
        %c128_i32_28 = arith.constant 128 : i32
        %27 = arith.muli %25, %c128_i32_28 : i32
        %c1_i32_29 = arith.constant 1 : i32
        %28 = arith.muli %1, %c1_i32_29 : i32
        %29 = tilegpu.slot %5[%22] : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        tilegpu.tma_load %arg5[%26, %27, %28] into %29, %7[%22] : !tilegpu.tensor_map<1x128x64xf16, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<3>
        %c64_i32_30 = arith.constant 64 : i32
        %30 = arith.muli %c0_i32, %c64_i32_30 : i32
        %c128_i32_31 = arith.constant 128 : i32
        %31 = arith.muli %25, %c128_i32_31 : i32
        %c1_i32_32 = arith.constant 1 : i32
        %32 = arith.muli %1, %c1_i32_32 : i32
        %33 = tilegpu.slot %6[%22] : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        tilegpu.tma_load %arg6[%30, %31, %32] into %33, %7[%22] : !tilegpu.tensor_map<1x128x64xf16, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<3>
      }
    } else {
      nvvm.setmaxregister  increase 232
      %22:3 = scf.for %arg8 = %c0_i32 to %4 step %c1_i32 iter_args(%arg9 = %cst_1, %arg10 = %cst_0, %arg11 = %cst_2) -> (tensor<128xf32, #slice>, tensor<128x64xf32, #mma>, tensor<128xf32, #slice>)  : i32 {
        %28 = arith.subi %arg8, %c0_i32 : i32
        %29 = arith.divsi %28, %c1_i32 : i32
        %c3_i32 = arith.constant 3 : i32
        %30 = arith.remsi %29, %c3_i32 : i32
        %c2_i32_31 = arith.constant 2 : i32
        %31 = arith.divsi %29, %c3_i32 : i32
        %32 = arith.remsi %31, %c2_i32_31 : i32
        tilegpu.mbarrier_wait %7[%30], %32 : !tilegpu.mbarriers<3>
        %c2_i32_32 = arith.constant 2 : i32
        %33 = arith.addi %29, %c2_i32_32 : i32
        %34 = arith.remsi %33, %c3_i32 : i32
        %35 = arith.cmpi slt, %33, %11 : i32
        %36 = arith.subi %arg8, %c0_i32 : i32
        %37 = arith.divsi %36, %c1_i32 : i32
        %c3_i32_33 = arith.constant 3 : i32
        %c0_i32_34 = arith.constant 0 : i32
        %38 = arith.addi %37, %c0_i32_34 : i32
        %39 = arith.remsi %38, %c3_i32_33 : i32
        %c0_i32_35 = arith.constant 0 : i32
        %40 = tilegpu.slot %15[%c0_i32_35] : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        %41 = tilegpu.slot %5[%39] : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        %42 = tilegpu.mma %40, %41, %cst {b_transposed, tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 128], instr = [64, 128, 16]}>} : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> tensor<128x128xf32, #mma>
        %43 = tile.reduce(%42) axis = 1 : (tensor<128x128xf32, #mma>) -> tensor<128xf32, #slice> {
        ^bb0(%arg12: f32, %arg13: f32):
          %70 = arith.maxnumf %arg12, %arg13 : f32
          tile.yield %70 : f32
        }
        %44 = tile.splat %2 : tensor<128xf32, #slice>
        %45 = arith.mulf %43, %44 : tensor<128xf32, #slice>
        %46 = arith.maxnumf %arg11, %45 : tensor<128xf32, #slice>
        %47 = tile.splat %2 : tensor<128x128xf32, #mma>
        %48 = arith.mulf %42, %47 : tensor<128x128xf32, #mma>
        %49 = tile.expand_dims %46, 1 : tensor<128xf32, #slice> -> tensor<128x1xf32, #mma>
        %50 = tile.broadcast %49 : tensor<128x1xf32, #mma> -> tensor<128x128xf32, #mma>
        %51 = arith.subf %48, %50 : tensor<128x128xf32, #mma>
        %52 = math.exp2 %51 : tensor<128x128xf32, #mma>
        %53 = arith.subf %arg11, %46 : tensor<128xf32, #slice>
        %54 = math.exp2 %53 : tensor<128xf32, #slice>
        %55 = tile.reduce(%52) axis = 1 : (tensor<128x128xf32, #mma>) -> tensor<128xf32, #slice> {
        ^bb0(%arg12: f32, %arg13: f32):
          %70 = arith.addf %arg12, %arg13 : f32
          tile.yield %70 : f32
        }
        %56 = math.fma %arg9, %54, %55 : tensor<128xf32, #slice>
        %57 = arith.truncf %52 : tensor<128x128xf32, #mma> to tensor<128x128xf16, #mma>
        %58 = tile.expand_dims %54, 1 : tensor<128xf32, #slice> -> tensor<128x1xf32, #mma>
        %59 = tile.broadcast %58 : tensor<128x1xf32, #mma> -> tensor<128x64xf32, #mma>
        %60 = arith.mulf %arg10, %59 : tensor<128x64xf32, #mma>
        %61 = arith.subi %arg8, %c0_i32 : i32
        %62 = arith.divsi %61, %c1_i32 : i32
        %c3_i32_36 = arith.constant 3 : i32
        %c0_i32_37 = arith.constant 0 : i32
        %63 = arith.addi %62, %c0_i32_37 : i32
        %64 = arith.remsi %63, %c3_i32_36 : i32
        %65 = tilegpu.slot %6[%64] : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        %66 = tilegpu.mma %57, %65, %60 {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 64], instr = [64, 64, 16]}>} : tensor<128x128xf16, #mma>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> tensor<128x64xf32, #mma>
        %67 = arith.subi %arg8, %c0_i32 : i32
        %68 = arith.divsi %67, %c1_i32 : i32
        %c3_i32_38 = arith.constant 3 : i32
        %69 = arith.remsi %68, %c3_i32_38 : i32
        tilegpu.mbarrier_arrive %8[%69] : !tilegpu.mbarriers<3>
        scf.yield %56, %66, %46 : tensor<128xf32, #slice>, tensor<128x64xf32, #mma>, tensor<128xf32, #slice>
      }
      gpu.barrier
      %c0_i32_24 = arith.constant 0 : i32
      tilegpu.mbarrier_inval %7[%c0_i32_24] : !tilegpu.mbarriers<3>
      %c1_i32_25 = arith.constant 1 : i32
      tilegpu.mbarrier_inval %7[%c1_i32_25] : !tilegpu.mbarriers<3>
      %c2_i32_26 = arith.constant 2 : i32
      tilegpu.mbarrier_inval %7[%c2_i32_26] : !tilegpu.mbarriers<3>
      %c0_i32_27 = arith.constant 0 : i32
      tilegpu.mbarrier_inval %8[%c0_i32_27] : !tilegpu.mbarriers<3>
      %c1_i32_28 = arith.constant 1 : i32
      tilegpu.mbarrier_inval %8[%c1_i32_28] : !tilegpu.mbarriers<3>
      %c2_i32_29 = arith.constant 2 : i32
      tilegpu.mbarrier_inval %8[%c2_i32_29] : !tilegpu.mbarriers<3>
      %c0_i32_30 = arith.constant 0 : i32
      tilegpu.mbarrier_inval %14[%c0_i32_30] : !tilegpu.mbarriers<1>
      gpu.barrier
      %23 = tile.expand_dims %22#0, 1 : tensor<128xf32, #slice> -> tensor<128x1xf32, #mma>
      %24 = tile.broadcast %23 : tensor<128x1xf32, #mma> -> tensor<128x64xf32, #mma>
      %25 = arith.divf %22#1, %24 : tensor<128x64xf32, #mma>
      %26 = tile.reshape %25 : tensor<128x64xf32, #mma> -> tensor<1x128x64xf32, #blocked>
      %27 = arith.truncf %26 : tensor<1x128x64xf32, #blocked> to tensor<1x128x64xf16, #blocked>
      tile.store %arg3[%1, %0, %c0_i32], %27 : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>, tensor<1x128x64xf16, #blocked>
    } {tilegpu.warp_specialized = #tilegpu.warp_specialized<consumers = 8, producers = 4>}
    return
  }
}
