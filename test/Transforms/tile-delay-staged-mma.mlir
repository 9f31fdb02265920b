// RUN: tile-opt %s --tile-delay-staged-mma | FileCheck %s

// examples/flash_attention_backward.py's attention_dkdvdq at D 64 (BM = BN
// = 128, TILE_STAGED_MMA=1, TILE_BULK_REDUCE=1, TILE_SPLIT_MASKS=0) as
// tile-allocate-shared left it. The consumer warpgroups hand dS's two
// slots over by mbarriers (two `full`, two `empty`, 256 arrivals each,
// initialized before the roles split) instead of meeting at the staging's
// barrier; dQ = dS K and its bulk reduction run one iteration late (for
// iv - 1 when iv > 0, for the last iteration after the loop).
// CHECK-LABEL: func.func @attention_dkdvdq
// CHECK: %[[FULL:.*]] = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<2>
// CHECK: %[[EMPTY:.*]] = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<2>
// CHECK: tilegpu.mbarrier_init %[[FULL]][%{{.*}}], %c256
// CHECK: tilegpu.mbarrier_init %[[EMPTY]][%{{.*}}], %c256
// CHECK: scf.if
// CHECK: } else {
// CHECK: scf.for %[[IV:.*]] = %[[LB:.*]] to %[[UB:.*]] step
// CHECK:   tilegpu.mbarrier_wait %[[EMPTY]][%[[SLOT:.*]]], %{{.*}} :
// CHECK-NEXT: tilegpu.stage_operand {{.*}} {unsynchronized}
// CHECK-NEXT: tilegpu.mbarrier_arrive %[[FULL]][%[[SLOT]]]
// CHECK-NOT: tilegpu.mma
// CHECK:   %[[LATER:.*]] = arith.cmpi sgt, %[[IV]], %[[LB]]
// CHECK:   scf.if %[[LATER]] {
// CHECK:     %[[PREV:.*]] = arith.subi %[[IV]], %c1
// CHECK:     tilegpu.mbarrier_wait %[[FULL]]
// CHECK-NEXT: %[[DQ:.*]] = tilegpu.mma {{.*}} {a_transposed
// CHECK-NEXT: tilegpu.mbarrier_arrive %[[EMPTY]]
// CHECK-NEXT: tilegpu.bulk_reduce_add %[[DQ]]
// CHECK:   scf.yield
// CHECK: %[[RAN:.*]] = arith.cmpi sgt, %[[UB]], %[[LB]]
// CHECK: scf.if %[[RAN]] {
// CHECK:   tilegpu.mbarrier_wait %[[FULL]]
// CHECK-NEXT: %[[LAST:.*]] = tilegpu.mma {{.*}} {a_transposed
// CHECK-NEXT: tilegpu.mbarrier_arrive %[[EMPTY]]
// CHECK-NEXT: tilegpu.bulk_reduce_add %[[LAST]]
// CHECK: gpu.barrier
// CHECK: tilegpu.mbarrier_inval %[[FULL]]
// CHECK: tilegpu.bulk_wait
#blocked = #tile.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]}>
#blocked1 = #tile.blocked<{sizePerThread = [1, 1, 8], threadsPerWarp = [1, 4, 8], warpsPerCTA = [1, 8, 1], order = [2, 1, 0]}>
#mma = #tile.mma<{version = 2, warpsPerCTA = [8, 1]}>
#slice = #tile.slice<{dim = 0, parent = #mma}>
#slice1 = #tile.slice<{dim = 1, parent = #mma}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @attention_dkdvdq(%arg0: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg1: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg2: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg3: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg4: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> {tile.tma_ok}, %arg5: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> {tile.tma_ok}, %arg6: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg7: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg8: !tile.array<?x?x?xf32, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg9: i32, %arg10: f32, %arg11: !tilegpu.tensor_map<1x128x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 0>}, %arg12: !tilegpu.tensor_map<1x128x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 3>}, %arg13: !tilegpu.tensor_map<1x128x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 1>}, %arg14: !tilegpu.tensor_map<1x128x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 2>}, %arg15: !tilegpu.tensor_map<1x64x32xf32, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 8>}) attributes {tile.disjoint_arrays = array<i32: 8, 0, 8, 3>, tile.kernel, tilegpu.shared_bytes = 230400 : i64} {
    tilegpu.scratch_base 230400
    %cst = arith.constant dense<1.17549435E-38> : tensor<128x128xf32, #mma>
    %cst_0 = arith.constant 1.44269502 : f32
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #mma>
    %cst_2 = arith.constant dense<1.44269502> : tensor<128xf32, #slice>
    %c1_i32 = arith.constant 1 : i32
    %cst_3 = arith.constant dense<0.000000e+00> : tensor<128x64xf32, #mma>
    %c128_i32 = arith.constant 128 : i32
    %c0_i32 = arith.constant 0 : i32
    %0 = tile.bid 0
    %1 = tile.bid 1
    %2 = arith.muli %0, %c128_i32 : i32
    %3 = tile.iota : tensor<128xi32, #slice1>
    %4 = tile.iota : tensor<128xi32, #slice>
    %5 = tile.splat %2 : tensor<128xi32, #slice1>
    %6 = arith.addi %5, %3 : tensor<128xi32, #slice1>
    %7 = arith.ceildivsi %arg9, %c128_i32 : i32
    %8 = tile.iota : tensor<64xi32, #slice>
    %9 = tilegpu.alloc_shared {offset = 0 : i64} : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128>
    %10 = tilegpu.alloc_shared {offset = 49152 : i64} : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128>
    %11 = tilegpu.alloc_mbarriers {offset = 98304 : i64} : !tilegpu.mbarriers<3>
    %c1_i32_4 = arith.constant 1 : i32
    %c0_i32_5 = arith.constant 0 : i32
    tilegpu.mbarrier_init %11[%c0_i32_5], %c1_i32_4 : !tilegpu.mbarriers<3>
    %c1_i32_6 = arith.constant 1 : i32
    %c1_i32_7 = arith.constant 1 : i32
    tilegpu.mbarrier_init %11[%c1_i32_7], %c1_i32_6 : !tilegpu.mbarriers<3>
    %c1_i32_8 = arith.constant 1 : i32
    %c2_i32 = arith.constant 2 : i32
    tilegpu.mbarrier_init %11[%c2_i32], %c1_i32_8 : !tilegpu.mbarriers<3>
    %12 = tilegpu.alloc_mbarriers {offset = 98328 : i64} : !tilegpu.mbarriers<3>
    %c256_i32 = arith.constant 256 : i32
    %c0_i32_9 = arith.constant 0 : i32
    tilegpu.mbarrier_init %12[%c0_i32_9], %c256_i32 : !tilegpu.mbarriers<3>
    %c256_i32_10 = arith.constant 256 : i32
    %c1_i32_11 = arith.constant 1 : i32
    tilegpu.mbarrier_init %12[%c1_i32_11], %c256_i32_10 : !tilegpu.mbarriers<3>
    %c256_i32_12 = arith.constant 256 : i32
    %c2_i32_13 = arith.constant 2 : i32
    tilegpu.mbarrier_init %12[%c2_i32_13], %c256_i32_12 : !tilegpu.mbarriers<3>
    %c0_i32_14 = arith.constant 0 : i32
    %13 = arith.subi %7, %c0_i32 : i32
    %14 = arith.ceildivsi %13, %c1_i32 : i32
    %15 = arith.maxsi %14, %c0_i32_14 : i32
    %c0_i32_15 = arith.constant 0 : i32
    %c0_i32_16 = arith.constant 0 : i32
    %16 = arith.cmpi slt, %c0_i32_16, %15 : i32
    %c1_i32_17 = arith.constant 1 : i32
    %c1_i32_18 = arith.constant 1 : i32
    %17 = arith.cmpi slt, %c1_i32_18, %15 : i32
    %18 = tilegpu.alloc_mbarriers {offset = 98352 : i64} : !tilegpu.mbarriers<1>
    %c0_i32_19 = arith.constant 0 : i32
    %c1_i32_20 = arith.constant 1 : i32
    tilegpu.mbarrier_init %18[%c0_i32_19], %c1_i32_20 : !tilegpu.mbarriers<1>
    gpu.barrier
    %c32768_i32 = arith.constant 32768 : i32
    tilegpu.mbarrier_arrive_expect_tx %18[%c0_i32_19], %c32768_i32 : !tilegpu.mbarriers<1>
    %19 = tilegpu.alloc_shared {offset = 99328 : i64} : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
    %c64_i32 = arith.constant 64 : i32
    %20 = arith.muli %c0_i32, %c64_i32 : i32
    %c128_i32_21 = arith.constant 128 : i32
    %21 = arith.muli %0, %c128_i32_21 : i32
    %c1_i32_22 = arith.constant 1 : i32
    %22 = arith.muli %1, %c1_i32_22 : i32
    %23 = tilegpu.slot %19[%c0_i32_19] : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
    tilegpu.tma_load %arg13[%20, %21, %22] into %23, %18[%c0_i32_19] : !tilegpu.tensor_map<1x128x64xf16, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<1>
    %24 = tilegpu.alloc_shared {offset = 115712 : i64} : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
    %c64_i32_23 = arith.constant 64 : i32
    %25 = arith.muli %c0_i32, %c64_i32_23 : i32
    %c128_i32_24 = arith.constant 128 : i32
    %26 = arith.muli %0, %c128_i32_24 : i32
    %c1_i32_25 = arith.constant 1 : i32
    %27 = arith.muli %1, %c1_i32_25 : i32
    %28 = tilegpu.slot %24[%c0_i32_19] : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
    tilegpu.tma_load %arg14[%25, %26, %27] into %28, %18[%c0_i32_19] : !tilegpu.tensor_map<1x128x64xf16, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<1>
    tilegpu.mbarrier_wait %18[%c0_i32_19], %c0_i32_19 : !tilegpu.mbarriers<1>
    %29 = tilegpu.alloc_shared {offset = 132096 : i64} : !tilegpu.shared<128x128xf16, slots = 2, swizzle = 128>
    %30 = tilegpu.alloc_shared {offset = 197632 : i64} : !tilegpu.shared<128x64xf32, slots = 1, swizzle = 128>
    %31 = nvvm.read.ptx.sreg.tid.x : i32
    %c256_i32_26 = arith.constant 256 : i32
    %32 = arith.cmpi uge, %31, %c256_i32_26 : i32
    scf.if %32 {
      tilegpu.scratch_base 230400
      nvvm.setmaxregister  decrease 40
      %c1_i32_27 = arith.constant 1 : i32
      %c0_i32_28 = arith.constant 0 : i32
      scf.for %arg16 = %c0_i32_28 to %15 step %c1_i32_27  : i32 {
        %c3_i32 = arith.constant 3 : i32
        %33 = arith.remsi %arg16, %c3_i32 : i32
        %c3_i32_29 = arith.constant 3 : i32
        %34 = arith.cmpi sge, %arg16, %c3_i32_29 : i32
        scf.if %34 {
          %c1_i32_37 = arith.constant 1 : i32
          %c3_i32_38 = arith.constant 3 : i32
          %45 = arith.divsi %arg16, %c3_i32_38 : i32
          %46 = arith.addi %45, %c1_i32_37 : i32
          %c2_i32_39 = arith.constant 2 : i32
          %47 = arith.remsi %46, %c2_i32_39 : i32
          tilegpu.mbarrier_wait %12[%33], %47 : !tilegpu.mbarriers<3>
        }
        %35 = arith.muli %arg16, %c1_i32 : i32
        %36 = arith.addi %c0_i32, %35 : i32
        %c32768_i32_30 = arith.constant 32768 : i32
        tilegpu.mbarrier_arrive_expect_tx %11[%33], %c32768_i32_30 : !tilegpu.mbarriers<3>
        %c64_i32_31 = arith.constant 64 : i32
        %37 = arith.muli %c0_i32, %c64_i32_31 : i32
        %c128_i32_32 = arith.constant 128 : i32
        %38 = arith.muli %36, %c128_i32_32 : i32
        %c1_i32_33 = arith.constant 1 : i32
        %39 = arith.muli %1, %c1_i32_33 : i32
        %40 = tilegpu.slot %9[%33] : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        tilegpu.tma_load %arg11[%37, %38, %39] into %40, %11[%33] : !tilegpu.tensor_map<1x128x64xf16, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<3>
        %c64_i32_34 = arith.constant 64 : i32
        %41 = arith.muli %c0_i32, %c64_i32_34 : i32
        %c128_i32_35 = arith.constant 128 : i32
        %42 = arith.muli %36, %c128_i32_35 : i32
        %c1_i32_36 = arith.constant 1 : i32
        %43 = arith.muli %1, %c1_i32_36 : i32
        %44 = tilegpu.slot %10[%33] : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        tilegpu.tma_load %arg12[%41, %42, %43] into %44, %11[%33] : !tilegpu.tensor_map<1x128x64xf16, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<3>
      }
    } else {
      tilegpu.scratch_base 230400
      nvvm.setmaxregister  increase 232
      %33:2 = scf.for %arg16 = %c0_i32 to %7 step %c1_i32 iter_args(%arg17 = %cst_3, %arg18 = %cst_3) -> (tensor<128x64xf32, #mma>, tensor<128x64xf32, #mma>)  : i32 {
        %42 = arith.subi %arg16, %c0_i32 : i32
        %43 = arith.divsi %42, %c1_i32 : i32
        %44 = arith.subi %arg16, %c0_i32 : i32
        %45 = arith.divsi %44, %c1_i32 : i32
        %c3_i32 = arith.constant 3 : i32
        %46 = arith.remsi %45, %c3_i32 : i32
        %c2_i32_34 = arith.constant 2 : i32
        %47 = arith.divsi %45, %c3_i32 : i32
        %48 = arith.remsi %47, %c2_i32_34 : i32
        tilegpu.mbarrier_wait %11[%46], %48 : !tilegpu.mbarriers<3>
        %c2_i32_35 = arith.constant 2 : i32
        %49 = arith.addi %45, %c2_i32_35 : i32
        %50 = arith.remsi %49, %c3_i32 : i32
        %51 = arith.cmpi slt, %49, %15 : i32
        %52 = tile.load %arg4[%1, %arg16] : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<1x128xf32, #mma>
        %53 = tile.reshape %52 : tensor<1x128xf32, #mma> -> tensor<128xf32, #slice>
        %54 = arith.mulf %53, %cst_2 : tensor<128xf32, #slice>
        %55 = tile.load %arg5[%1, %arg16] : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<1x128xf32, #mma>
        %56 = tile.reshape %55 : tensor<1x128xf32, #mma> -> tensor<128xf32, #slice>
        %57 = arith.muli %arg16, %c128_i32 : i32
        %58 = tile.splat %57 : tensor<128xi32, #slice>
        %59 = tile.splat %57 : tensor<128xi32, #slice1>
        %60 = arith.addi %58, %4 : tensor<128xi32, #slice>
        %61 = arith.addi %59, %3 : tensor<128xi32, #slice1>
        %62 = arith.subi %arg16, %c0_i32 : i32
        %63 = arith.divsi %62, %c1_i32 : i32
        %c3_i32_36 = arith.constant 3 : i32
        %c0_i32_37 = arith.constant 0 : i32
        %64 = arith.addi %63, %c0_i32_37 : i32
        %65 = arith.remsi %64, %c3_i32_36 : i32
        %c0_i32_38 = arith.constant 0 : i32
        %66 = tilegpu.slot %19[%c0_i32_38] : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        %67 = tilegpu.slot %9[%65] : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        %68 = tilegpu.mma %66, %67, %cst_1 {b_transposed, tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 128], instr = [64, 128, 16]}>} : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> tensor<128x128xf32, #mma>
        %69 = tile.expand_dims %6, 1 : tensor<128xi32, #slice1> -> tensor<128x1xi32, #mma>
        %70 = tile.splat %arg9 : tensor<128x1xi32, #mma>
        %71 = arith.cmpi slt, %69, %70 : tensor<128x1xi32, #mma>
        %72 = tile.expand_dims %60, 0 : tensor<128xi32, #slice> -> tensor<1x128xi32, #mma>
        %73 = tile.splat %arg9 : tensor<1x128xi32, #mma>
        %74 = arith.cmpi slt, %72, %73 : tensor<1x128xi32, #mma>
        %75 = tile.broadcast %71 : tensor<128x1xi1, #mma> -> tensor<128x128xi1, #mma>
        %76 = tile.broadcast %74 : tensor<1x128xi1, #mma> -> tensor<128x128xi1, #mma>
        %77 = arith.andi %75, %76 : tensor<128x128xi1, #mma>
        %78 = arith.mulf %arg10, %cst_0 : f32
        %79 = tile.splat %78 : tensor<128x128xf32, #mma>
        %80 = arith.mulf %68, %79 : tensor<128x128xf32, #mma>
        %81 = tile.expand_dims %54, 0 : tensor<128xf32, #slice> -> tensor<1x128xf32, #mma>
        %82 = tile.broadcast %81 : tensor<1x128xf32, #mma> -> tensor<128x128xf32, #mma>
        %83 = arith.subf %80, %82 : tensor<128x128xf32, #mma>
        %84 = math.absf %83 : tensor<128x128xf32, #mma>
        %85 = arith.cmpf olt, %84, %cst : tensor<128x128xf32, #mma>
        %86 = math.copysign %cst_1, %83 : tensor<128x128xf32, #mma>
        %87 = arith.select %85, %86, %83 : tensor<128x128xi1, #mma>, tensor<128x128xf32, #mma>
        %88 = math.exp2 %87 : tensor<128x128xf32, #mma>
        %89 = math.absf %88 : tensor<128x128xf32, #mma>
        %90 = arith.cmpf olt, %89, %cst : tensor<128x128xf32, #mma>
        %91 = math.copysign %cst_1, %88 : tensor<128x128xf32, #mma>
        %92 = arith.select %90, %91, %88 : tensor<128x128xi1, #mma>, tensor<128x128xf32, #mma>
        %93 = arith.select %77, %92, %cst_1 : tensor<128x128xi1, #mma>, tensor<128x128xf32, #mma>
        %94 = arith.truncf %93 : tensor<128x128xf32, #mma> to tensor<128x128xf16, #mma>
        %95 = arith.subi %arg16, %c0_i32 : i32
        %96 = arith.divsi %95, %c1_i32 : i32
        %c3_i32_39 = arith.constant 3 : i32
        %c0_i32_40 = arith.constant 0 : i32
        %97 = arith.addi %96, %c0_i32_40 : i32
        %98 = arith.remsi %97, %c3_i32_39 : i32
        %99 = tilegpu.slot %10[%98] : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        %100 = tilegpu.mma %94, %99, %arg17 {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 64], instr = [64, 64, 16]}>} : tensor<128x128xf16, #mma>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> tensor<128x64xf32, #mma>
        %101 = arith.subi %arg16, %c0_i32 : i32
        %102 = arith.divsi %101, %c1_i32 : i32
        %c3_i32_41 = arith.constant 3 : i32
        %c0_i32_42 = arith.constant 0 : i32
        %103 = arith.addi %102, %c0_i32_42 : i32
        %104 = arith.remsi %103, %c3_i32_41 : i32
        %c0_i32_43 = arith.constant 0 : i32
        %105 = tilegpu.slot %24[%c0_i32_43] : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        %106 = tilegpu.slot %10[%104] : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        %107 = tilegpu.mma %105, %106, %cst_1 {b_transposed, tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 128], instr = [64, 128, 16]}>} : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> tensor<128x128xf32, #mma>
        %108 = tile.expand_dims %56, 0 : tensor<128xf32, #slice> -> tensor<1x128xf32, #mma>
        %109 = tile.broadcast %108 : tensor<1x128xf32, #mma> -> tensor<128x128xf32, #mma>
        %110 = arith.subf %107, %109 : tensor<128x128xf32, #mma>
        %111 = arith.mulf %93, %110 : tensor<128x128xf32, #mma>
        %112 = tile.splat %arg10 : tensor<128x128xf32, #mma>
        %113 = arith.mulf %111, %112 : tensor<128x128xf32, #mma>
        %114 = arith.truncf %113 : tensor<128x128xf32, #mma> to tensor<128x128xf16, #mma>
        %115 = arith.subi %arg16, %c0_i32 : i32
        %116 = arith.divsi %115, %c1_i32 : i32
        %c3_i32_44 = arith.constant 3 : i32
        %c0_i32_45 = arith.constant 0 : i32
        %117 = arith.addi %116, %c0_i32_45 : i32
        %118 = arith.remsi %117, %c3_i32_44 : i32
        %119 = tilegpu.slot %9[%118] : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        %120 = tilegpu.mma %114, %119, %arg18 {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 64], instr = [64, 64, 16]}>} : tensor<128x128xf16, #mma>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> tensor<128x64xf32, #mma>
        %121 = arith.subi %arg16, %c0_i32 : i32
        %122 = arith.divsi %121, %c1_i32 : i32
        %c2_i32_46 = arith.constant 2 : i32
        %c0_i32_47 = arith.constant 0 : i32
        %123 = arith.addi %122, %c0_i32_47 : i32
        %124 = arith.remsi %123, %c2_i32_46 : i32
        %125 = tilegpu.slot %29[%124] : !tilegpu.shared<128x128xf16, slots = 2, swizzle = 128> -> !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>
        tilegpu.stage_operand %114 into %125 : tensor<128x128xf16, #mma>, !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>
        %c0_i32_48 = arith.constant 0 : i32
        %126 = tilegpu.slot %19[%c0_i32_48] : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        %127 = tilegpu.mma %125, %126, %cst_3 {a_transposed, tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 64], instr = [64, 64, 16]}>} : !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> tensor<128x64xf32, #mma>
        %c3_i32_49 = arith.constant 3 : i32
        %128 = arith.remsi %43, %c3_i32_49 : i32
        tilegpu.mbarrier_arrive %12[%128] : !tilegpu.mbarriers<3>
        %129 = tile.expand_dims %61, 1 : tensor<128xi32, #slice1> -> tensor<128x1xi32, #mma>
        %130 = tile.expand_dims %8, 0 : tensor<64xi32, #slice> -> tensor<1x64xi32, #mma>
        %131 = tile.splat %1 : tensor<128x64xi32, #mma>
        %132 = tile.broadcast %129 : tensor<128x1xi32, #mma> -> tensor<128x64xi32, #mma>
        %133 = tile.broadcast %130 : tensor<1x64xi32, #mma> -> tensor<128x64xi32, #mma>
        %c0_i32_50 = arith.constant 0 : i32
        tilegpu.bulk_reduce_add %127 through %30 into %arg15[%c0_i32_50, %57, %1] {inner_axis = 1 : i64, outer_dim = 1 : i64} : tensor<128x64xf32, #mma>, !tilegpu.shared<128x64xf32, slots = 1, swizzle = 128>, !tilegpu.tensor_map<1x64x32xf32, swizzle = 128>
        scf.yield %100, %120 : tensor<128x64xf32, #mma>, tensor<128x64xf32, #mma>
      }
      tilegpu.bulk_wait %30 : !tilegpu.shared<128x64xf32, slots = 1, swizzle = 128>
      tilegpu.scratch_base 98368
      gpu.barrier
      %c0_i32_27 = arith.constant 0 : i32
      tilegpu.mbarrier_inval %11[%c0_i32_27] : !tilegpu.mbarriers<3>
      %c1_i32_28 = arith.constant 1 : i32
      tilegpu.mbarrier_inval %11[%c1_i32_28] : !tilegpu.mbarriers<3>
      %c2_i32_29 = arith.constant 2 : i32
      tilegpu.mbarrier_inval %11[%c2_i32_29] : !tilegpu.mbarriers<3>
      %c0_i32_30 = arith.constant 0 : i32
      tilegpu.mbarrier_inval %12[%c0_i32_30] : !tilegpu.mbarriers<3>
      %c1_i32_31 = arith.constant 1 : i32
      tilegpu.mbarrier_inval %12[%c1_i32_31] : !tilegpu.mbarriers<3>
      %c2_i32_32 = arith.constant 2 : i32
      tilegpu.mbarrier_inval %12[%c2_i32_32] : !tilegpu.mbarriers<3>
      %c0_i32_33 = arith.constant 0 : i32
      tilegpu.mbarrier_inval %18[%c0_i32_33] : !tilegpu.mbarriers<1>
      tilegpu.scratch_base 18432
      gpu.barrier
      %34 = arith.truncf %33#1 : tensor<128x64xf32, #mma> to tensor<128x64xf16, #mma>
      %35 = tilegpu.alloc_shared {offset = 0 : i64} : !tilegpu.shared<128x64xf16, slots = 1, row_stride = 72>
      %36 = tilegpu.stage_layout %34 through %35 : tensor<128x64xf16, #mma>, !tilegpu.shared<128x64xf16, slots = 1, row_stride = 72> -> tensor<128x64xf16, #blocked>
      %37 = tile.reshape %36 : tensor<128x64xf16, #blocked> -> tensor<1x128x64xf16, #blocked1>
      tile.store %arg6[%1, %0, %c0_i32], %37 : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>, tensor<1x128x64xf16, #blocked1>
      %38 = arith.truncf %33#0 : tensor<128x64xf32, #mma> to tensor<128x64xf16, #mma>
      %39 = tilegpu.alloc_shared {offset = 0 : i64} : !tilegpu.shared<128x64xf16, slots = 1, row_stride = 72>
      %40 = tilegpu.stage_layout %38 through %39 : tensor<128x64xf16, #mma>, !tilegpu.shared<128x64xf16, slots = 1, row_stride = 72> -> tensor<128x64xf16, #blocked>
      tilegpu.scratch_base 0
      %41 = tile.reshape %40 : tensor<128x64xf16, #blocked> -> tensor<1x128x64xf16, #blocked1>
      tile.store %arg7[%1, %0, %c0_i32], %41 : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>, tensor<1x128x64xf16, #blocked1>
    } {tilegpu.warp_specialized = #tilegpu.warp_specialized<consumers = 8, producers = 4>}
    tilegpu.scratch_base 0
    return
  }
}
