// RUN: tile-opt %s --tile-defer-mma-waits | FileCheck %s
// RUN: tile-opt %s --tile-defer-mma-waits=move-mmas=false \
// RUN:   | FileCheck %s --check-prefix=IN-PLACE

// examples/flash_attention_backward.py's attention_dkdv at D 64 (BM = BN =
// 128; TILE_SPLIT_MASKS=0: one consumer loop) as tile-allocate-shared left
// it. The consumer loop's four wgmmas become deferred: dP^T = V dO^T moves
// up beside S^T = K Q^T (neither reads an mma result; dV += P^T dO, which
// does, stays after them); S^T is waited for with one group left, where
// the softmax first reads it; dP^T with dV left, where dS^T reads it; dV
// and dK at the slot's release (the producer may overwrite what they
// read), before the yield. The producer loop has no mma: untouched.
// CHECK-LABEL: func.func @attention_dkdv
// CHECK: scf.for
// CHECK-NOT: wait_mma
// CHECK: tilegpu.tma_load
// CHECK: scf.for
// CHECK:   tilegpu.mbarrier_wait
// CHECK:   %[[ST:.*]] = tilegpu.mma {{.*}} {b_transposed, deferred, tiling
// CHECK-NOT: arith.mulf
// CHECK:   %[[DPT:.*]] = tilegpu.mma {{.*}} {b_transposed, deferred, tiling
// CHECK:   %[[STW:.*]] = tilegpu.wait_mma %[[ST]] pending = 1
// CHECK-NEXT: arith.mulf %[[STW]]
// CHECK:   math.exp2
// CHECK:   %[[DV:.*]] = tilegpu.mma %{{.*}}, %{{.*}}, %{{.*}} {deferred, tiling
// CHECK:   %[[DPTW:.*]] = tilegpu.wait_mma %[[DPT]] pending = 1
// CHECK-NEXT: arith.subf %[[DPTW]]
// CHECK:   %[[DK:.*]] = tilegpu.mma %{{.*}}, %{{.*}}, %{{.*}} {deferred, tiling
// CHECK:   %[[W:.*]]:2 = tilegpu.wait_mma %[[DV]], %[[DK]] pending = 0
// CHECK-NEXT: tilegpu.mbarrier_arrive
// CHECK-NEXT: scf.yield %[[W]]#0, %[[W]]#1

// move-mmas=false (TILE_DEFER_MMA_WAITS=in-place): the mmas keep the
// kernel's order and only the waits move: dV += P^T dO and dP^T = V dO^T
// are issued back to back and waited for together where dS^T reads dP^T,
// so S^T and dP^T are never live at once.
// IN-PLACE-LABEL: func.func @attention_dkdv
// IN-PLACE: scf.for
// IN-PLACE: scf.for
// IN-PLACE:   %[[ST:.*]] = tilegpu.mma {{.*}} {b_transposed, deferred, tiling
// IN-PLACE-NOT: tilegpu.mma
// IN-PLACE:   %[[STW:.*]] = tilegpu.wait_mma %[[ST]] pending = 0
// IN-PLACE-NEXT: arith.mulf %[[STW]]
// IN-PLACE:   math.exp2
// IN-PLACE:   %[[DV:.*]] = tilegpu.mma %{{.*}}, %{{.*}}, %{{.*}} {deferred, tiling
// IN-PLACE-NOT: wait_mma
// IN-PLACE:   %[[DPT:.*]] = tilegpu.mma {{.*}} {b_transposed, deferred, tiling
// IN-PLACE:   %[[W:.*]]:2 = tilegpu.wait_mma %[[DV]], %[[DPT]] pending = 0
// IN-PLACE-NEXT: arith.subf %[[W]]#1
// IN-PLACE:   %[[DK:.*]] = tilegpu.mma %{{.*}}, %{{.*}}, %{{.*}} {deferred, tiling
// IN-PLACE: %[[DKW:.*]] = tilegpu.wait_mma %[[DK]] pending = 0
// IN-PLACE-NEXT: tilegpu.mbarrier_arrive
// IN-PLACE-NEXT: scf.yield %[[W]]#0, %[[DKW]]
#blocked = #tile.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]}>
#blocked1 = #tile.blocked<{sizePerThread = [1, 1, 8], threadsPerWarp = [1, 4, 8], warpsPerCTA = [1, 8, 1], order = [2, 1, 0]}>
#mma = #tile.mma<{version = 2, warpsPerCTA = [8, 1]}>
#slice = #tile.slice<{dim = 0, parent = #mma}>
#slice1 = #tile.slice<{dim = 1, parent = #mma}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @attention_dkdv(%arg0: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg1: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg2: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg3: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg4: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> {tile.tma_ok}, %arg5: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> {tile.tma_ok}, %arg6: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg7: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg8: i32, %arg9: f32, %arg10: !tilegpu.tensor_map<1x128x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 0>}, %arg11: !tilegpu.tensor_map<1x128x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 3>}, %arg12: !tilegpu.tensor_map<1x128xf32> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 4>}, %arg13: !tilegpu.tensor_map<1x128xf32> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 5>}, %arg14: !tilegpu.tensor_map<1x128x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 1>}, %arg15: !tilegpu.tensor_map<1x128x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 2>}) attributes {tile.kernel, tilegpu.shared_bytes = 135168 : i64} {
    tilegpu.scratch_base 135168
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
    %7 = arith.ceildivsi %arg8, %c128_i32 : i32
    %8 = tilegpu.alloc_shared {offset = 0 : i64} : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128>
    %9 = tilegpu.alloc_shared {offset = 49152 : i64} : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128>
    %10 = tilegpu.alloc_shared {offset = 98304 : i64} : !tilegpu.shared<1x128xf32, slots = 3>
    %11 = tilegpu.alloc_shared {offset = 99840 : i64} : !tilegpu.shared<1x128xf32, slots = 3>
    %12 = tilegpu.alloc_mbarriers {offset = 101376 : i64} : !tilegpu.mbarriers<3>
    %c1_i32_4 = arith.constant 1 : i32
    %c0_i32_5 = arith.constant 0 : i32
    tilegpu.mbarrier_init %12[%c0_i32_5], %c1_i32_4 : !tilegpu.mbarriers<3>
    %c1_i32_6 = arith.constant 1 : i32
    %c1_i32_7 = arith.constant 1 : i32
    tilegpu.mbarrier_init %12[%c1_i32_7], %c1_i32_6 : !tilegpu.mbarriers<3>
    %c1_i32_8 = arith.constant 1 : i32
    %c2_i32 = arith.constant 2 : i32
    tilegpu.mbarrier_init %12[%c2_i32], %c1_i32_8 : !tilegpu.mbarriers<3>
    %13 = tilegpu.alloc_mbarriers {offset = 101400 : i64} : !tilegpu.mbarriers<3>
    %c256_i32 = arith.constant 256 : i32
    %c0_i32_9 = arith.constant 0 : i32
    tilegpu.mbarrier_init %13[%c0_i32_9], %c256_i32 : !tilegpu.mbarriers<3>
    %c256_i32_10 = arith.constant 256 : i32
    %c1_i32_11 = arith.constant 1 : i32
    tilegpu.mbarrier_init %13[%c1_i32_11], %c256_i32_10 : !tilegpu.mbarriers<3>
    %c256_i32_12 = arith.constant 256 : i32
    %c2_i32_13 = arith.constant 2 : i32
    tilegpu.mbarrier_init %13[%c2_i32_13], %c256_i32_12 : !tilegpu.mbarriers<3>
    %c0_i32_14 = arith.constant 0 : i32
    %14 = arith.subi %7, %c0_i32 : i32
    %15 = arith.ceildivsi %14, %c1_i32 : i32
    %16 = arith.maxsi %15, %c0_i32_14 : i32
    %c0_i32_15 = arith.constant 0 : i32
    %c0_i32_16 = arith.constant 0 : i32
    %17 = arith.cmpi slt, %c0_i32_16, %16 : i32
    %c1_i32_17 = arith.constant 1 : i32
    %c1_i32_18 = arith.constant 1 : i32
    %18 = arith.cmpi slt, %c1_i32_18, %16 : i32
    %19 = tilegpu.alloc_mbarriers {offset = 101424 : i64} : !tilegpu.mbarriers<1>
    %c0_i32_19 = arith.constant 0 : i32
    %c1_i32_20 = arith.constant 1 : i32
    tilegpu.mbarrier_init %19[%c0_i32_19], %c1_i32_20 : !tilegpu.mbarriers<1>
    gpu.barrier
    %c32768_i32 = arith.constant 32768 : i32
    tilegpu.mbarrier_arrive_expect_tx %19[%c0_i32_19], %c32768_i32 : !tilegpu.mbarriers<1>
    %20 = tilegpu.alloc_shared {offset = 102400 : i64} : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
    %c64_i32 = arith.constant 64 : i32
    %21 = arith.muli %c0_i32, %c64_i32 : i32
    %c128_i32_21 = arith.constant 128 : i32
    %22 = arith.muli %0, %c128_i32_21 : i32
    %c1_i32_22 = arith.constant 1 : i32
    %23 = arith.muli %1, %c1_i32_22 : i32
    %24 = tilegpu.slot %20[%c0_i32_19] : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
    tilegpu.tma_load %arg14[%21, %22, %23] into %24, %19[%c0_i32_19] : !tilegpu.tensor_map<1x128x64xf16, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<1>
    %25 = tilegpu.alloc_shared {offset = 118784 : i64} : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
    %c64_i32_23 = arith.constant 64 : i32
    %26 = arith.muli %c0_i32, %c64_i32_23 : i32
    %c128_i32_24 = arith.constant 128 : i32
    %27 = arith.muli %0, %c128_i32_24 : i32
    %c1_i32_25 = arith.constant 1 : i32
    %28 = arith.muli %1, %c1_i32_25 : i32
    %29 = tilegpu.slot %25[%c0_i32_19] : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
    tilegpu.tma_load %arg15[%26, %27, %28] into %29, %19[%c0_i32_19] : !tilegpu.tensor_map<1x128x64xf16, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<1>
    tilegpu.mbarrier_wait %19[%c0_i32_19], %c0_i32_19 : !tilegpu.mbarriers<1>
    %30 = nvvm.read.ptx.sreg.tid.x : i32
    %c256_i32_26 = arith.constant 256 : i32
    %31 = arith.cmpi uge, %30, %c256_i32_26 : i32
    scf.if %31 {
      tilegpu.scratch_base 135168
      nvvm.setmaxregister  decrease 40
      %c1_i32_27 = arith.constant 1 : i32
      %c0_i32_28 = arith.constant 0 : i32
      scf.for %arg16 = %c0_i32_28 to %16 step %c1_i32_27  : i32 {
        %c3_i32 = arith.constant 3 : i32
        %32 = arith.remsi %arg16, %c3_i32 : i32
        %c3_i32_29 = arith.constant 3 : i32
        %33 = arith.cmpi sge, %arg16, %c3_i32_29 : i32
        scf.if %33 {
          %c1_i32_40 = arith.constant 1 : i32
          %c3_i32_41 = arith.constant 3 : i32
          %50 = arith.divsi %arg16, %c3_i32_41 : i32
          %51 = arith.addi %50, %c1_i32_40 : i32
          %c2_i32_42 = arith.constant 2 : i32
          %52 = arith.remsi %51, %c2_i32_42 : i32
          tilegpu.mbarrier_wait %13[%32], %52 : !tilegpu.mbarriers<3>
        }
        %34 = arith.muli %arg16, %c1_i32 : i32
        %35 = arith.addi %c0_i32, %34 : i32
        %c33792_i32 = arith.constant 33792 : i32
        tilegpu.mbarrier_arrive_expect_tx %12[%32], %c33792_i32 : !tilegpu.mbarriers<3>
        %c64_i32_30 = arith.constant 64 : i32
        %36 = arith.muli %c0_i32, %c64_i32_30 : i32
        %c128_i32_31 = arith.constant 128 : i32
        %37 = arith.muli %35, %c128_i32_31 : i32
        %c1_i32_32 = arith.constant 1 : i32
        %38 = arith.muli %1, %c1_i32_32 : i32
        %39 = tilegpu.slot %8[%32] : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        tilegpu.tma_load %arg10[%36, %37, %38] into %39, %12[%32] : !tilegpu.tensor_map<1x128x64xf16, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<3>
        %c64_i32_33 = arith.constant 64 : i32
        %40 = arith.muli %c0_i32, %c64_i32_33 : i32
        %c128_i32_34 = arith.constant 128 : i32
        %41 = arith.muli %35, %c128_i32_34 : i32
        %c1_i32_35 = arith.constant 1 : i32
        %42 = arith.muli %1, %c1_i32_35 : i32
        %43 = tilegpu.slot %9[%32] : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        tilegpu.tma_load %arg11[%40, %41, %42] into %43, %12[%32] : !tilegpu.tensor_map<1x128x64xf16, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<3>
        %c128_i32_36 = arith.constant 128 : i32
        %44 = arith.muli %35, %c128_i32_36 : i32
        %c1_i32_37 = arith.constant 1 : i32
        %45 = arith.muli %1, %c1_i32_37 : i32
        %46 = tilegpu.slot %10[%32] : !tilegpu.shared<1x128xf32, slots = 3> -> !tilegpu.shared<1x128xf32, slots = 1>
        tilegpu.tma_load %arg12[%44, %45] into %46, %12[%32] : !tilegpu.tensor_map<1x128xf32>, !tilegpu.shared<1x128xf32, slots = 1>, !tilegpu.mbarriers<3>
        %c128_i32_38 = arith.constant 128 : i32
        %47 = arith.muli %35, %c128_i32_38 : i32
        %c1_i32_39 = arith.constant 1 : i32
        %48 = arith.muli %1, %c1_i32_39 : i32
        %49 = tilegpu.slot %11[%32] : !tilegpu.shared<1x128xf32, slots = 3> -> !tilegpu.shared<1x128xf32, slots = 1>
        tilegpu.tma_load %arg13[%47, %48] into %49, %12[%32] : !tilegpu.tensor_map<1x128xf32>, !tilegpu.shared<1x128xf32, slots = 1>, !tilegpu.mbarriers<3>
      }
    } else {
      tilegpu.scratch_base 135168
      nvvm.setmaxregister  increase 232
      %32:2 = scf.for %arg16 = %c0_i32 to %7 step %c1_i32 iter_args(%arg17 = %cst_3, %arg18 = %cst_3) -> (tensor<128x64xf32, #mma>, tensor<128x64xf32, #mma>)  : i32 {
        %43 = arith.subi %arg16, %c0_i32 : i32
        %44 = arith.divsi %43, %c1_i32 : i32
        %45 = arith.subi %arg16, %c0_i32 : i32
        %46 = arith.divsi %45, %c1_i32 : i32
        %c3_i32 = arith.constant 3 : i32
        %47 = arith.remsi %46, %c3_i32 : i32
        %c2_i32_34 = arith.constant 2 : i32
        %48 = arith.divsi %46, %c3_i32 : i32
        %49 = arith.remsi %48, %c2_i32_34 : i32
        tilegpu.mbarrier_wait %12[%47], %49 : !tilegpu.mbarriers<3>
        %c2_i32_35 = arith.constant 2 : i32
        %50 = arith.addi %46, %c2_i32_35 : i32
        %51 = arith.remsi %50, %c3_i32 : i32
        %52 = arith.cmpi slt, %50, %16 : i32
        %53 = arith.subi %arg16, %c0_i32 : i32
        %54 = arith.divsi %53, %c1_i32 : i32
        %c3_i32_36 = arith.constant 3 : i32
        %c0_i32_37 = arith.constant 0 : i32
        %55 = arith.addi %54, %c0_i32_37 : i32
        %56 = arith.remsi %55, %c3_i32_36 : i32
        %57 = tilegpu.slot %10[%56] : !tilegpu.shared<1x128xf32, slots = 3> -> !tilegpu.shared<1x128xf32, slots = 1>
        %58 = arith.subi %arg16, %c0_i32 : i32
        %59 = arith.divsi %58, %c1_i32 : i32
        %c3_i32_38 = arith.constant 3 : i32
        %c0_i32_39 = arith.constant 0 : i32
        %60 = arith.addi %59, %c0_i32_39 : i32
        %61 = arith.remsi %60, %c3_i32_38 : i32
        %62 = tilegpu.slot %11[%61] : !tilegpu.shared<1x128xf32, slots = 3> -> !tilegpu.shared<1x128xf32, slots = 1>
        %63 = arith.muli %arg16, %c128_i32 : i32
        %64 = tile.splat %63 : tensor<128xi32, #slice>
        %65 = arith.addi %64, %4 : tensor<128xi32, #slice>
        %66 = arith.subi %arg16, %c0_i32 : i32
        %67 = arith.divsi %66, %c1_i32 : i32
        %c3_i32_40 = arith.constant 3 : i32
        %c0_i32_41 = arith.constant 0 : i32
        %68 = arith.addi %67, %c0_i32_41 : i32
        %69 = arith.remsi %68, %c3_i32_40 : i32
        %c0_i32_42 = arith.constant 0 : i32
        %70 = tilegpu.slot %20[%c0_i32_42] : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        %71 = tilegpu.slot %8[%69] : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        %72 = tilegpu.mma %70, %71, %cst_1 {b_transposed, tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 128], instr = [64, 128, 16]}>} : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> tensor<128x128xf32, #mma>
        %73 = tile.expand_dims %6, 1 : tensor<128xi32, #slice1> -> tensor<128x1xi32, #mma>
        %74 = tile.splat %arg8 : tensor<128x1xi32, #mma>
        %75 = arith.cmpi slt, %73, %74 : tensor<128x1xi32, #mma>
        %76 = tile.expand_dims %65, 0 : tensor<128xi32, #slice> -> tensor<1x128xi32, #mma>
        %77 = tile.splat %arg8 : tensor<1x128xi32, #mma>
        %78 = arith.cmpi slt, %76, %77 : tensor<1x128xi32, #mma>
        %79 = tile.broadcast %75 : tensor<128x1xi1, #mma> -> tensor<128x128xi1, #mma>
        %80 = tile.broadcast %78 : tensor<1x128xi1, #mma> -> tensor<128x128xi1, #mma>
        %81 = arith.andi %79, %80 : tensor<128x128xi1, #mma>
        %82 = arith.mulf %arg9, %cst_0 : f32
        %83 = tile.splat %82 : tensor<128x128xf32, #mma>
        %84 = arith.mulf %72, %83 : tensor<128x128xf32, #mma>
        %85 = tilegpu.read_shared %57 : !tilegpu.shared<1x128xf32, slots = 1> -> tensor<1x128xf32, #mma>
        %86 = tile.reshape %85 : tensor<1x128xf32, #mma> -> tensor<128xf32, #slice>
        %87 = arith.mulf %86, %cst_2 : tensor<128xf32, #slice>
        %88 = tile.expand_dims %87, 0 : tensor<128xf32, #slice> -> tensor<1x128xf32, #mma>
        %89 = tile.broadcast %88 : tensor<1x128xf32, #mma> -> tensor<128x128xf32, #mma>
        %90 = arith.subf %84, %89 : tensor<128x128xf32, #mma>
        %91 = math.absf %90 : tensor<128x128xf32, #mma>
        %92 = arith.cmpf olt, %91, %cst : tensor<128x128xf32, #mma>
        %93 = math.copysign %cst_1, %90 : tensor<128x128xf32, #mma>
        %94 = arith.select %92, %93, %90 : tensor<128x128xi1, #mma>, tensor<128x128xf32, #mma>
        %95 = math.exp2 %94 : tensor<128x128xf32, #mma>
        %96 = math.absf %95 : tensor<128x128xf32, #mma>
        %97 = arith.cmpf olt, %96, %cst : tensor<128x128xf32, #mma>
        %98 = math.copysign %cst_1, %95 : tensor<128x128xf32, #mma>
        %99 = arith.select %97, %98, %95 : tensor<128x128xi1, #mma>, tensor<128x128xf32, #mma>
        %100 = arith.select %81, %99, %cst_1 : tensor<128x128xi1, #mma>, tensor<128x128xf32, #mma>
        %101 = arith.truncf %100 : tensor<128x128xf32, #mma> to tensor<128x128xf16, #mma>
        %102 = arith.subi %arg16, %c0_i32 : i32
        %103 = arith.divsi %102, %c1_i32 : i32
        %c3_i32_43 = arith.constant 3 : i32
        %c0_i32_44 = arith.constant 0 : i32
        %104 = arith.addi %103, %c0_i32_44 : i32
        %105 = arith.remsi %104, %c3_i32_43 : i32
        %106 = tilegpu.slot %9[%105] : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        %107 = tilegpu.mma %101, %106, %arg17 {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 64], instr = [64, 64, 16]}>} : tensor<128x128xf16, #mma>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> tensor<128x64xf32, #mma>
        %108 = arith.subi %arg16, %c0_i32 : i32
        %109 = arith.divsi %108, %c1_i32 : i32
        %c3_i32_45 = arith.constant 3 : i32
        %c0_i32_46 = arith.constant 0 : i32
        %110 = arith.addi %109, %c0_i32_46 : i32
        %111 = arith.remsi %110, %c3_i32_45 : i32
        %c0_i32_47 = arith.constant 0 : i32
        %112 = tilegpu.slot %25[%c0_i32_47] : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        %113 = tilegpu.slot %9[%111] : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        %114 = tilegpu.mma %112, %113, %cst_1 {b_transposed, tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 128], instr = [64, 128, 16]}>} : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> tensor<128x128xf32, #mma>
        %115 = tilegpu.read_shared %62 : !tilegpu.shared<1x128xf32, slots = 1> -> tensor<1x128xf32, #mma>
        %116 = tile.reshape %115 : tensor<1x128xf32, #mma> -> tensor<128xf32, #slice>
        %117 = tile.expand_dims %116, 0 : tensor<128xf32, #slice> -> tensor<1x128xf32, #mma>
        %118 = tile.broadcast %117 : tensor<1x128xf32, #mma> -> tensor<128x128xf32, #mma>
        %119 = arith.subf %114, %118 : tensor<128x128xf32, #mma>
        %120 = arith.mulf %100, %119 : tensor<128x128xf32, #mma>
        %121 = arith.truncf %120 : tensor<128x128xf32, #mma> to tensor<128x128xf16, #mma>
        %122 = arith.subi %arg16, %c0_i32 : i32
        %123 = arith.divsi %122, %c1_i32 : i32
        %c3_i32_48 = arith.constant 3 : i32
        %c0_i32_49 = arith.constant 0 : i32
        %124 = arith.addi %123, %c0_i32_49 : i32
        %125 = arith.remsi %124, %c3_i32_48 : i32
        %126 = tilegpu.slot %8[%125] : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        %127 = tilegpu.mma %121, %126, %arg18 {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 64], instr = [64, 64, 16]}>} : tensor<128x128xf16, #mma>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> tensor<128x64xf32, #mma>
        %c3_i32_50 = arith.constant 3 : i32
        %128 = arith.remsi %44, %c3_i32_50 : i32
        tilegpu.mbarrier_arrive %13[%128] : !tilegpu.mbarriers<3>
        scf.yield %107, %127 : tensor<128x64xf32, #mma>, tensor<128x64xf32, #mma>
      }
      tilegpu.scratch_base 101440
      gpu.barrier
      %c0_i32_27 = arith.constant 0 : i32
      tilegpu.mbarrier_inval %12[%c0_i32_27] : !tilegpu.mbarriers<3>
      %c1_i32_28 = arith.constant 1 : i32
      tilegpu.mbarrier_inval %12[%c1_i32_28] : !tilegpu.mbarriers<3>
      %c2_i32_29 = arith.constant 2 : i32
      tilegpu.mbarrier_inval %12[%c2_i32_29] : !tilegpu.mbarriers<3>
      %c0_i32_30 = arith.constant 0 : i32
      tilegpu.mbarrier_inval %13[%c0_i32_30] : !tilegpu.mbarriers<3>
      %c1_i32_31 = arith.constant 1 : i32
      tilegpu.mbarrier_inval %13[%c1_i32_31] : !tilegpu.mbarriers<3>
      %c2_i32_32 = arith.constant 2 : i32
      tilegpu.mbarrier_inval %13[%c2_i32_32] : !tilegpu.mbarriers<3>
      %c0_i32_33 = arith.constant 0 : i32
      tilegpu.mbarrier_inval %19[%c0_i32_33] : !tilegpu.mbarriers<1>
      tilegpu.scratch_base 18432
      gpu.barrier
      %33 = tile.splat %arg9 : tensor<128x64xf32, #mma>
      %34 = arith.mulf %32#1, %33 : tensor<128x64xf32, #mma>
      %35 = arith.truncf %34 : tensor<128x64xf32, #mma> to tensor<128x64xf16, #mma>
      %36 = tilegpu.alloc_shared {offset = 0 : i64} : !tilegpu.shared<128x64xf16, slots = 1, row_stride = 72>
      %37 = tilegpu.stage_layout %35 through %36 : tensor<128x64xf16, #mma>, !tilegpu.shared<128x64xf16, slots = 1, row_stride = 72> -> tensor<128x64xf16, #blocked>
      %38 = tile.reshape %37 : tensor<128x64xf16, #blocked> -> tensor<1x128x64xf16, #blocked1>
      tile.store %arg6[%1, %0, %c0_i32], %38 : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>, tensor<1x128x64xf16, #blocked1>
      %39 = arith.truncf %32#0 : tensor<128x64xf32, #mma> to tensor<128x64xf16, #mma>
      %40 = tilegpu.alloc_shared {offset = 0 : i64} : !tilegpu.shared<128x64xf16, slots = 1, row_stride = 72>
      %41 = tilegpu.stage_layout %39 through %40 : tensor<128x64xf16, #mma>, !tilegpu.shared<128x64xf16, slots = 1, row_stride = 72> -> tensor<128x64xf16, #blocked>
      tilegpu.scratch_base 0
      %42 = tile.reshape %41 : tensor<128x64xf16, #blocked> -> tensor<1x128x64xf16, #blocked1>
      tile.store %arg7[%1, %0, %c0_i32], %42 : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>, tensor<1x128x64xf16, #blocked1>
    } {tilegpu.warp_specialized = #tilegpu.warp_specialized<consumers = 8, producers = 4>}
    tilegpu.scratch_base 0
    return
  }
}
