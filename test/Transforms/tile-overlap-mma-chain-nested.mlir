// RUN: tile-opt %s --tile-overlap-mma-chain | FileCheck %s

// bench/kernels.py's attention_persistent at D=64 (BM = BN = 128, a K/V
// ring of three slots) after tile-warp-specialize and
// tile-allocate-shared: the consumers' key loop is nested in their walk
// over the (head, query block) tiles. It is rotated tile by tile as the
// one-tile kernel's loop is (tile-overlap-mma-chain.mlir): under a guard
// inside the tile loop, S_j and P_{j-1} V_{j-1} in flight together, the
// last P V after the rotated loop and before the tile's store. The
// producer's loops are left alone.
// CHECK-LABEL: func.func @attention_persistent
// CHECK: scf.if
// CHECK:   scf.for
// CHECK:     scf.for
// CHECK-NOT:   in_flight
// CHECK: } else {
// CHECK: nvvm.setmaxregister increase 232
// CHECK: scf.for %{{.*}} iter_args(%[[DONE:.*]] = %{{.*}}) -> (i32)
// CHECK:   tilegpu.mbarrier_wait %{{.*}} : !tilegpu.mbarriers<1>
// CHECK:   scf.if %{{.*}} -> (tensor<128xf32, #{{.*}}>, tensor<128x64xf32, #mma>, tensor<128xf32, #{{.*}}>)
// CHECK:     tilegpu.mma {{.*}} {b_transposed, tiling
// CHECK:     scf.for {{.*}} -> ({{.*}}tensor<128x128xf16, #mma>{{.*}}, i32)
// CHECK:       %[[S:.*]] = tilegpu.mma {{.*}} {b_transposed, in_flight, tiling
// CHECK:       %[[O:.*]] = tilegpu.mma %{{.*}}, %{{.*}}, %{{.*}} {in_flight, tiling{{.*}} : tensor<128x128xf16, #mma>
// CHECK:       tilegpu.wait_mma %[[S]] pending = 1
// CHECK:       %[[OW:.*]] = tilegpu.wait_mma %[[O]] pending = 0
// CHECK:       tilegpu.mbarrier_arrive
// CHECK:       scf.yield {{.*}}%[[OW]]
// CHECK:     }
// CHECK-NOT: in_flight
// CHECK:     tilegpu.mma %{{.*}}, %{{.*}}, %{{.*}} {tiling{{.*}} : tensor<128x128xf16, #mma>
// CHECK:     tilegpu.mbarrier_arrive
// CHECK:   } else {
// CHECK:   tilegpu.stage_layout
// CHECK:   tile.store
// CHECK:   scf.yield
#blocked = #tile.blocked<{sizePerThread = [1, 8], threadsPerWarp = [4, 8], warpsPerCTA = [8, 1], order = [1, 0]}>
#blocked1 = #tile.blocked<{sizePerThread = [1, 1, 8], threadsPerWarp = [1, 4, 8], warpsPerCTA = [1, 8, 1], order = [2, 1, 0]}>
#mma = #tile.mma<{version = 2, warpsPerCTA = [8, 1]}>
#slice = #tile.slice<{dim = 1, parent = #mma}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @attention_persistent(%arg0: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg1: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg2: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg3: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg4: f32, %arg5: !tilegpu.tensor_map<1x128x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 1>}, %arg6: !tilegpu.tensor_map<1x128x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 2>}, %arg7: !tilegpu.tensor_map<1x128x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 0>}) attributes {tile.kernel, tilegpu.shared_bytes = 134144 : i64} {
    tilegpu.scratch_base 134144
    %cst = arith.constant dense<1.17549435E-38> : tensor<128xf32, #slice>
    %cst_0 = arith.constant dense<1.17549435E-38> : tensor<128x128xf32, #mma>
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #mma>
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<128x64xf32, #mma>
    %cst_3 = arith.constant dense<0.000000e+00> : tensor<128xf32, #slice>
    %cst_4 = arith.constant dense<0xFF800000> : tensor<128xf32, #slice>
    %c-2147483648_i32 = arith.constant -2147483648 : i32
    %c-1_i32 = arith.constant -1 : i32
    %c1_i32 = arith.constant 1 : i32
    %c0_i32 = arith.constant 0 : i32
    %c2147483647_i64 = arith.constant 2147483647 : i64
    %c1_i64 = arith.constant 1 : i64
    %c0_i64 = arith.constant 0 : i64
    %cst_5 = arith.constant 1.44269502 : f32
    %c128_i32 = arith.constant 128 : i32
    %0 = tile.dim %arg0, 1 : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>
    %1 = arith.floordivsi %0, %c128_i32 : i32
    %2 = arith.mulf %arg4, %cst_5 : f32
    %3 = tile.bid 0
    %4 = tile.dim %arg0, 0 : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>
    %5 = arith.muli %1, %4 : i32
    %6 = tile.num_blocks 0
    %7 = arith.extsi %3 : i32 to i64
    %8 = arith.extsi %5 : i32 to i64
    %9 = arith.extsi %6 : i32 to i64
    %10 = arith.cmpi slt, %9, %c0_i64 : i64
    %11 = arith.cmpi eq, %9, %c0_i64 : i64
    %12 = arith.subi %8, %7 : i64
    %13 = arith.subi %7, %8 : i64
    %14 = arith.select %10, %13, %12 : i64
    %15 = arith.subi %c0_i64, %9 : i64
    %16 = arith.select %10, %15, %9 : i64
    %17 = arith.select %11, %c1_i64, %16 : i64
    %18 = arith.subi %17, %c1_i64 : i64
    %19 = arith.addi %14, %18 : i64
    %20 = arith.divsi %19, %17 : i64
    %21 = arith.select %11, %c0_i64, %20 : i64
    %22 = arith.maxsi %21, %c0_i64 : i64
    %23 = arith.minsi %22, %c2147483647_i64 : i64
    %24 = arith.trunci %23 : i64 to i32
    %25 = tilegpu.alloc_shared {offset = 0 : i64} : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128>
    %26 = tilegpu.alloc_shared {offset = 49152 : i64} : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128>
    %27 = tilegpu.alloc_mbarriers {offset = 98304 : i64} : !tilegpu.mbarriers<3>
    %c0_i32_6 = arith.constant 0 : i32
    %c1_i32_7 = arith.constant 1 : i32
    tilegpu.mbarrier_init %27[%c0_i32_6], %c1_i32_7 : !tilegpu.mbarriers<3>
    %c1_i32_8 = arith.constant 1 : i32
    %c1_i32_9 = arith.constant 1 : i32
    tilegpu.mbarrier_init %27[%c1_i32_8], %c1_i32_9 : !tilegpu.mbarriers<3>
    %c2_i32 = arith.constant 2 : i32
    %c1_i32_10 = arith.constant 1 : i32
    tilegpu.mbarrier_init %27[%c2_i32], %c1_i32_10 : !tilegpu.mbarriers<3>
    %28 = tilegpu.alloc_mbarriers {offset = 98328 : i64} : !tilegpu.mbarriers<3>
    %c256_i32 = arith.constant 256 : i32
    %c0_i32_11 = arith.constant 0 : i32
    tilegpu.mbarrier_init %28[%c0_i32_11], %c256_i32 : !tilegpu.mbarriers<3>
    %c256_i32_12 = arith.constant 256 : i32
    %c1_i32_13 = arith.constant 1 : i32
    tilegpu.mbarrier_init %28[%c1_i32_13], %c256_i32_12 : !tilegpu.mbarriers<3>
    %c256_i32_14 = arith.constant 256 : i32
    %c2_i32_15 = arith.constant 2 : i32
    tilegpu.mbarrier_init %28[%c2_i32_15], %c256_i32_14 : !tilegpu.mbarriers<3>
    %29 = tilegpu.alloc_mbarriers {offset = 98352 : i64} : !tilegpu.mbarriers<1>
    %c0_i32_16 = arith.constant 0 : i32
    %c1_i32_17 = arith.constant 1 : i32
    tilegpu.mbarrier_init %29[%c0_i32_16], %c1_i32_17 : !tilegpu.mbarriers<1>
    %30 = tilegpu.alloc_shared {offset = 99328 : i64} : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
    %31 = nvvm.read.ptx.sreg.tid.x : i32
    %c256_i32_18 = arith.constant 256 : i32
    %32 = arith.cmpi uge, %31, %c256_i32_18 : i32
    scf.if %32 {
      tilegpu.scratch_base 134144
      nvvm.setmaxregister  decrease 40
      %c0_i32_19 = arith.constant 0 : i32
      %33 = scf.for %arg8 = %c0_i32 to %24 step %c1_i32 iter_args(%arg9 = %c0_i32_19) -> (i32)  : i32 {
        %34 = arith.muli %arg8, %6 : i32
        %35 = arith.addi %3, %34 : i32
        %36 = arith.cmpi eq, %1, %c0_i32 : i32
        %37 = arith.cmpi eq, %1, %c-1_i32 : i32
        %38 = arith.cmpi eq, %35, %c-2147483648_i32 : i32
        %39 = arith.andi %38, %37 : i1
        %40 = arith.ori %36, %39 : i1
        %41 = arith.select %40, %c1_i32, %1 : i32
        %42 = arith.floordivsi %35, %41 : i32
        %43 = arith.select %36, %c0_i32, %42 : i32
        %44 = tile.dim %arg1, 1 : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>
        %45 = arith.floordivsi %44, %c128_i32 : i32
        %c0_i32_20 = arith.constant 0 : i32
        %46 = arith.subi %45, %c0_i32 : i32
        %47 = arith.ceildivsi %46, %c1_i32 : i32
        %48 = arith.maxsi %47, %c0_i32_20 : i32
        %c1_i32_21 = arith.constant 1 : i32
        %c0_i32_22 = arith.constant 0 : i32
        scf.for %arg10 = %c0_i32_22 to %48 step %c1_i32_21  : i32 {
          %50 = arith.addi %arg9, %arg10 : i32
          %c3_i32 = arith.constant 3 : i32
          %51 = arith.remsi %50, %c3_i32 : i32
          %c3_i32_23 = arith.constant 3 : i32
          %52 = arith.cmpi sge, %50, %c3_i32_23 : i32
          scf.if %52 {
            %c1_i32_29 = arith.constant 1 : i32
            %c3_i32_30 = arith.constant 3 : i32
            %63 = arith.divsi %50, %c3_i32_30 : i32
            %64 = arith.addi %63, %c1_i32_29 : i32
            %c2_i32_31 = arith.constant 2 : i32
            %65 = arith.remsi %64, %c2_i32_31 : i32
            tilegpu.mbarrier_wait %28[%51], %65 : !tilegpu.mbarriers<3>
          }
          %53 = arith.muli %arg10, %c1_i32 : i32
          %54 = arith.addi %c0_i32, %53 : i32
          %c32768_i32 = arith.constant 32768 : i32
          tilegpu.mbarrier_arrive_expect_tx %27[%51], %c32768_i32 : !tilegpu.mbarriers<3>
          %c64_i32 = arith.constant 64 : i32
          %55 = arith.muli %c0_i32, %c64_i32 : i32
          %c128_i32_24 = arith.constant 128 : i32
          %56 = arith.muli %54, %c128_i32_24 : i32
          %c1_i32_25 = arith.constant 1 : i32
          %57 = arith.muli %43, %c1_i32_25 : i32
          %58 = tilegpu.slot %25[%51] : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
          tilegpu.tma_load %arg5[%55, %56, %57] into %58, %27[%51] : !tilegpu.tensor_map<1x128x64xf16, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<3>
          %c64_i32_26 = arith.constant 64 : i32
          %59 = arith.muli %c0_i32, %c64_i32_26 : i32
          %c128_i32_27 = arith.constant 128 : i32
          %60 = arith.muli %54, %c128_i32_27 : i32
          %c1_i32_28 = arith.constant 1 : i32
          %61 = arith.muli %43, %c1_i32_28 : i32
          %62 = tilegpu.slot %26[%51] : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
          tilegpu.tma_load %arg6[%59, %60, %61] into %62, %27[%51] : !tilegpu.tensor_map<1x128x64xf16, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<3>
        }
        %49 = arith.addi %arg9, %48 : i32
        scf.yield %49 : i32
      }
    } else {
      tilegpu.scratch_base 134144
      nvvm.setmaxregister  increase 232
      %c0_i32_19 = arith.constant 0 : i32
      %33 = tilegpu.alloc_shared {offset = 115712 : i64} : !tilegpu.shared<128x64xf16, slots = 1, row_stride = 72>
      %34 = scf.for %arg8 = %c0_i32 to %24 step %c1_i32 iter_args(%arg9 = %c0_i32_19) -> (i32)  : i32 {
        %35 = arith.subi %arg8, %c0_i32 : i32
        %36 = arith.divsi %35, %c1_i32 : i32
        %c2_i32_27 = arith.constant 2 : i32
        %37 = arith.remsi %36, %c2_i32_27 : i32
        %38 = arith.muli %arg8, %6 : i32
        %39 = arith.addi %3, %38 : i32
        %40 = arith.cmpi eq, %1, %c0_i32 : i32
        %41 = arith.cmpi eq, %1, %c-1_i32 : i32
        %42 = arith.ori %40, %41 : i1
        %43 = arith.select %42, %c1_i32, %1 : i32
        %44 = arith.remsi %39, %43 : i32
        %45 = arith.cmpi slt, %44, %c0_i32 : i32
        %46 = arith.cmpi slt, %43, %c0_i32 : i32
        %47 = arith.xori %45, %46 : i1
        %48 = arith.cmpi ne, %44, %c0_i32 : i32
        %49 = arith.andi %48, %47 : i1
        %50 = arith.addi %44, %43 : i32
        %51 = arith.select %49, %50, %44 : i32
        %52 = arith.cmpi eq, %39, %c-2147483648_i32 : i32
        %53 = arith.andi %52, %41 : i1
        %54 = arith.ori %40, %53 : i1
        %55 = arith.select %54, %c1_i32, %1 : i32
        %56 = arith.floordivsi %39, %55 : i32
        %57 = arith.select %40, %c0_i32, %56 : i32
        %58 = tile.dim %arg1, 1 : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>
        %59 = arith.floordivsi %58, %c128_i32 : i32
        %c1_i32_28 = arith.constant 1 : i32
        %c0_i32_29 = arith.constant 0 : i32
        %c1_i32_30 = arith.constant 1 : i32
        %c1_i32_31 = arith.constant 1 : i32
        %c1_i32_32 = arith.constant 1 : i32
        %c2_i32_33 = arith.constant 2 : i32
        %c0_i32_34 = arith.constant 0 : i32
        %60 = arith.subi %59, %c0_i32 : i32
        %61 = arith.ceildivsi %60, %c1_i32 : i32
        %62 = arith.maxsi %61, %c0_i32_34 : i32
        %c0_i32_35 = arith.constant 0 : i32
        %c0_i32_36 = arith.constant 0 : i32
        %63 = arith.cmpi slt, %c0_i32_36, %62 : i32
        %c1_i32_37 = arith.constant 1 : i32
        %c1_i32_38 = arith.constant 1 : i32
        %64 = arith.cmpi slt, %c1_i32_38, %62 : i32
        %c0_i32_39 = arith.constant 0 : i32
        %c1_i32_40 = arith.constant 1 : i32
        gpu.barrier
        %c16384_i32 = arith.constant 16384 : i32
        tilegpu.mbarrier_arrive_expect_tx %29[%c0_i32_39], %c16384_i32 : !tilegpu.mbarriers<1>
        %c64_i32 = arith.constant 64 : i32
        %65 = arith.muli %c0_i32, %c64_i32 : i32
        %c128_i32_41 = arith.constant 128 : i32
        %66 = arith.muli %51, %c128_i32_41 : i32
        %c1_i32_42 = arith.constant 1 : i32
        %67 = arith.muli %57, %c1_i32_42 : i32
        %68 = tilegpu.slot %30[%c0_i32_39] : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
        tilegpu.tma_load %arg7[%65, %66, %67] into %68, %29[%c0_i32_39] : !tilegpu.tensor_map<1x128x64xf16, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<1>
        tilegpu.mbarrier_wait %29[%c0_i32_39], %37 : !tilegpu.mbarriers<1>
        %69:3 = scf.for %arg10 = %c0_i32 to %59 step %c1_i32 iter_args(%arg11 = %cst_3, %arg12 = %cst_2, %arg13 = %cst_4) -> (tensor<128xf32, #slice>, tensor<128x64xf32, #mma>, tensor<128xf32, #slice>)  : i32 {
          %77 = arith.subi %arg10, %c0_i32 : i32
          %78 = arith.divsi %77, %c1_i32 : i32
          %79 = arith.addi %arg9, %78 : i32
          %c3_i32 = arith.constant 3 : i32
          %80 = arith.remsi %79, %c3_i32 : i32
          %c3_i32_47 = arith.constant 3 : i32
          %81 = arith.divsi %79, %c3_i32_47 : i32
          %c2_i32_48 = arith.constant 2 : i32
          %82 = arith.remsi %81, %c2_i32_48 : i32
          %83 = arith.subi %arg10, %c0_i32 : i32
          %84 = arith.divsi %83, %c1_i32 : i32
          %c3_i32_49 = arith.constant 3 : i32
          %85 = arith.remsi %84, %c3_i32_49 : i32
          %c2_i32_50 = arith.constant 2 : i32
          %86 = arith.divsi %84, %c3_i32_49 : i32
          %87 = arith.remsi %86, %c2_i32_50 : i32
          tilegpu.mbarrier_wait %27[%80], %82 : !tilegpu.mbarriers<3>
          %c2_i32_51 = arith.constant 2 : i32
          %88 = arith.addi %84, %c2_i32_51 : i32
          %89 = arith.remsi %88, %c3_i32_49 : i32
          %90 = arith.cmpi slt, %88, %62 : i32
          %91 = arith.subi %arg10, %c0_i32 : i32
          %92 = arith.divsi %91, %c1_i32 : i32
          %c3_i32_52 = arith.constant 3 : i32
          %c0_i32_53 = arith.constant 0 : i32
          %93 = arith.addi %92, %c0_i32_53 : i32
          %94 = arith.remsi %93, %c3_i32_52 : i32
          %c0_i32_54 = arith.constant 0 : i32
          %95 = tilegpu.slot %30[%c0_i32_54] : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
          %96 = tilegpu.slot %25[%80] : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
          %97 = tilegpu.mma %95, %96, %cst_1 {b_transposed, tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 128], instr = [64, 128, 16]}>} : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> tensor<128x128xf32, #mma>
          %98 = tile.reduce(%97) axis = 1 : (tensor<128x128xf32, #mma>) -> tensor<128xf32, #slice> {
          ^bb0(%arg14: f32, %arg15: f32):
            %139 = arith.maxnumf %arg14, %arg15 : f32
            tile.yield %139 : f32
          }
          %99 = tile.splat %2 : tensor<128xf32, #slice>
          %100 = arith.mulf %98, %99 : tensor<128xf32, #slice>
          %101 = arith.maxnumf %arg13, %100 : tensor<128xf32, #slice>
          %102 = tile.splat %2 : tensor<128x128xf32, #mma>
          %103 = arith.mulf %97, %102 : tensor<128x128xf32, #mma>
          %104 = tile.expand_dims %101, 1 : tensor<128xf32, #slice> -> tensor<128x1xf32, #mma>
          %105 = tile.broadcast %104 : tensor<128x1xf32, #mma> -> tensor<128x128xf32, #mma>
          %106 = arith.subf %103, %105 : tensor<128x128xf32, #mma>
          %107 = math.absf %106 : tensor<128x128xf32, #mma>
          %108 = arith.cmpf olt, %107, %cst_0 : tensor<128x128xf32, #mma>
          %109 = math.copysign %cst_1, %106 : tensor<128x128xf32, #mma>
          %110 = arith.select %108, %109, %106 : tensor<128x128xi1, #mma>, tensor<128x128xf32, #mma>
          %111 = math.exp2 %110 : tensor<128x128xf32, #mma>
          %112 = math.absf %111 : tensor<128x128xf32, #mma>
          %113 = arith.cmpf olt, %112, %cst_0 : tensor<128x128xf32, #mma>
          %114 = math.copysign %cst_1, %111 : tensor<128x128xf32, #mma>
          %115 = arith.select %113, %114, %111 : tensor<128x128xi1, #mma>, tensor<128x128xf32, #mma>
          %116 = arith.subf %arg13, %101 : tensor<128xf32, #slice>
          %117 = math.absf %116 : tensor<128xf32, #slice>
          %118 = arith.cmpf olt, %117, %cst : tensor<128xf32, #slice>
          %119 = math.copysign %cst_3, %116 : tensor<128xf32, #slice>
          %120 = arith.select %118, %119, %116 : tensor<128xi1, #slice>, tensor<128xf32, #slice>
          %121 = math.exp2 %120 : tensor<128xf32, #slice>
          %122 = math.absf %121 : tensor<128xf32, #slice>
          %123 = arith.cmpf olt, %122, %cst : tensor<128xf32, #slice>
          %124 = math.copysign %cst_3, %121 : tensor<128xf32, #slice>
          %125 = arith.select %123, %124, %121 : tensor<128xi1, #slice>, tensor<128xf32, #slice>
          %126 = tile.reduce(%115) axis = 1 : (tensor<128x128xf32, #mma>) -> tensor<128xf32, #slice> {
          ^bb0(%arg14: f32, %arg15: f32):
            %139 = arith.addf %arg14, %arg15 : f32
            tile.yield %139 : f32
          }
          %127 = math.fma %arg11, %125, %126 : tensor<128xf32, #slice>
          %128 = arith.truncf %115 : tensor<128x128xf32, #mma> to tensor<128x128xf16, #mma>
          %129 = tile.expand_dims %125, 1 : tensor<128xf32, #slice> -> tensor<128x1xf32, #mma>
          %130 = tile.broadcast %129 : tensor<128x1xf32, #mma> -> tensor<128x64xf32, #mma>
          %131 = arith.mulf %arg12, %130 : tensor<128x64xf32, #mma>
          %132 = arith.subi %arg10, %c0_i32 : i32
          %133 = arith.divsi %132, %c1_i32 : i32
          %c3_i32_55 = arith.constant 3 : i32
          %c0_i32_56 = arith.constant 0 : i32
          %134 = arith.addi %133, %c0_i32_56 : i32
          %135 = arith.remsi %134, %c3_i32_55 : i32
          %136 = tilegpu.slot %26[%80] : !tilegpu.shared<128x64xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
          %137 = tilegpu.mma %128, %136, %131 {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 64], instr = [64, 64, 16]}>} : tensor<128x128xf16, #mma>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> tensor<128x64xf32, #mma>
          %c3_i32_57 = arith.constant 3 : i32
          %138 = arith.remsi %79, %c3_i32_57 : i32
          tilegpu.mbarrier_arrive %28[%138] : !tilegpu.mbarriers<3>
          scf.yield %127, %137, %101 : tensor<128xf32, #slice>, tensor<128x64xf32, #mma>, tensor<128xf32, #slice>
        }
        gpu.barrier
        %c0_i32_43 = arith.constant 0 : i32
        %c1_i32_44 = arith.constant 1 : i32
        %c2_i32_45 = arith.constant 2 : i32
        %c0_i32_46 = arith.constant 0 : i32
        %70 = tile.expand_dims %69#0, 1 : tensor<128xf32, #slice> -> tensor<128x1xf32, #mma>
        %71 = tile.broadcast %70 : tensor<128x1xf32, #mma> -> tensor<128x64xf32, #mma>
        %72 = arith.divf %69#1, %71 : tensor<128x64xf32, #mma>
        %73 = arith.truncf %72 : tensor<128x64xf32, #mma> to tensor<128x64xf16, #mma>
        %74 = tilegpu.stage_layout %73 through %33 : tensor<128x64xf16, #mma>, !tilegpu.shared<128x64xf16, slots = 1, row_stride = 72> -> tensor<128x64xf16, #blocked>
        %75 = tile.reshape %74 : tensor<128x64xf16, #blocked> -> tensor<1x128x64xf16, #blocked1>
        tile.store %arg3[%57, %51, %c0_i32], %75 : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>, tensor<1x128x64xf16, #blocked1>
        %76 = arith.addi %arg9, %62 : i32
        scf.yield %76 : i32
      }
      tilegpu.scratch_base 98368
      gpu.barrier
      %c0_i32_20 = arith.constant 0 : i32
      tilegpu.mbarrier_inval %27[%c0_i32_20] : !tilegpu.mbarriers<3>
      %c1_i32_21 = arith.constant 1 : i32
      tilegpu.mbarrier_inval %27[%c1_i32_21] : !tilegpu.mbarriers<3>
      %c2_i32_22 = arith.constant 2 : i32
      tilegpu.mbarrier_inval %27[%c2_i32_22] : !tilegpu.mbarriers<3>
      %c0_i32_23 = arith.constant 0 : i32
      tilegpu.mbarrier_inval %28[%c0_i32_23] : !tilegpu.mbarriers<3>
      %c1_i32_24 = arith.constant 1 : i32
      tilegpu.mbarrier_inval %28[%c1_i32_24] : !tilegpu.mbarriers<3>
      %c2_i32_25 = arith.constant 2 : i32
      tilegpu.mbarrier_inval %28[%c2_i32_25] : !tilegpu.mbarriers<3>
      %c0_i32_26 = arith.constant 0 : i32
      tilegpu.mbarrier_inval %29[%c0_i32_26] : !tilegpu.mbarriers<1>
      tilegpu.scratch_base 0
    } {tilegpu.warp_specialized = #tilegpu.warp_specialized<consumers = 8, producers = 4>}
    tilegpu.scratch_base 0
    return
  }
}
