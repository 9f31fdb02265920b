// RUN: tile-opt %s --tile-stage-stores=tma-stores=true --tile-allocate-shared | FileCheck %s

// bench/kernels.py's attention_persistent at D=128 (BM = BN = 128) before
// tile-stage-stores: its K/V ring of three 64 KB slots and Q's 32 KB
// buffer leave no room for O's staging buffer, which would stay live
// beside the ring (the producer refills it for the next tile meanwhile).
// O goes by TMA through Q's buffer instead (FlashAttention-3's epilogue):
// Q's last reader (the tile's last S wgmma) is done before the barrier
// after the key loop, and the next tile's Q copy comes after a barrier;
// the copy is waited for before the tile loop's body ends (until it has
// read the buffer: the kernel never reads O). The store of
// a batch of one, (1, BM, D), takes a 3-d map of 1 x 64 x 64 boxes.
// CHECK-LABEL: func.func @attention_persistent(
// CHECK-SAME: %[[MAP:[^:]*]]: !tilegpu.tensor_map<1x64x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 3>}
// CHECK-SAME: tilegpu.shared_bytes = 230400
// CHECK: %[[Q:.*]] = tilegpu.alloc_shared {offset = 197632 : i64} : !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>
// CHECK-NOT: tilegpu.alloc_shared
// CHECK: } else {
// CHECK: scf.for
// CHECK:   gpu.barrier
// CHECK:   %[[QSLOT:.*]] = tilegpu.slot %[[Q]]
// CHECK:   tilegpu.tma_load %{{.*}} into %[[QSLOT]]
// CHECK:   scf.if
// CHECK:   gpu.barrier
// CHECK:   %[[O:.*]] = arith.truncf %{{.*}} : tensor<128x128xf32, #mma> to tensor<128x128xf16, #mma>
// CHECK:   tilegpu.bulk_store %[[O]] through %[[Q]] into %[[MAP]][%{{.*}}, %{{.*}}, %{{.*}}] {inner_axis = 1 : i64, outer_dim = 1 : i64}
// CHECK-NOT: tile.store
// CHECK:   tilegpu.bulk_wait %[[Q]] {read}
// CHECK-NEXT: scf.yield
#blocked = #tile.blocked<{sizePerThread = [1, 1, 4], threadsPerWarp = [1, 1, 32], warpsPerCTA = [1, 8, 1], order = [2, 1, 0]}>
#mma = #tile.mma<{version = 2, warpsPerCTA = [8, 1]}>
#slice = #tile.slice<{dim = 1, parent = #mma}>
module attributes {tile.num_warps = 8 : i32} {
  func.func @attention_persistent(%arg0: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg1: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg2: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg3: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok}, %arg4: f32, %arg5: !tilegpu.tensor_map<1x128x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 1>}, %arg6: !tilegpu.tensor_map<1x128x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 2>}, %arg7: !tilegpu.tensor_map<1x128x64xf16, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 0>}) attributes {tile.kernel, tilegpu.shared_bytes = 230400 : i64} {
    tilegpu.scratch_base 230400
    %cst = arith.constant dense<1.17549435E-38> : tensor<128xf32, #slice>
    %cst_0 = arith.constant dense<1.17549435E-38> : tensor<128x128xf32, #mma>
    %cst_1 = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #mma>
    %cst_2 = arith.constant dense<0.000000e+00> : tensor<128xf32, #slice>
    %cst_3 = arith.constant dense<0xFF800000> : tensor<128xf32, #slice>
    %c-2147483648_i32 = arith.constant -2147483648 : i32
    %c-1_i32 = arith.constant -1 : i32
    %c1_i32 = arith.constant 1 : i32
    %c0_i32 = arith.constant 0 : i32
    %c2147483647_i64 = arith.constant 2147483647 : i64
    %c1_i64 = arith.constant 1 : i64
    %c0_i64 = arith.constant 0 : i64
    %cst_4 = arith.constant 1.44269502 : f32
    %c128_i32 = arith.constant 128 : i32
    %0 = tile.dim %arg0, 1 : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>
    %1 = arith.floordivsi %0, %c128_i32 : i32
    %2 = arith.mulf %arg4, %cst_4 : f32
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
    %25 = tilegpu.alloc_shared {offset = 0 : i64} : !tilegpu.shared<128x128xf16, slots = 3, swizzle = 128>
    %26 = tilegpu.alloc_shared {offset = 98304 : i64} : !tilegpu.shared<128x128xf16, slots = 3, swizzle = 128>
    %27 = tilegpu.alloc_mbarriers {offset = 196608 : i64} : !tilegpu.mbarriers<3>
    %c0_i32_5 = arith.constant 0 : i32
    %c1_i32_6 = arith.constant 1 : i32
    tilegpu.mbarrier_init %27[%c0_i32_5], %c1_i32_6 : !tilegpu.mbarriers<3>
    %c1_i32_7 = arith.constant 1 : i32
    %c1_i32_8 = arith.constant 1 : i32
    tilegpu.mbarrier_init %27[%c1_i32_7], %c1_i32_8 : !tilegpu.mbarriers<3>
    %c2_i32 = arith.constant 2 : i32
    %c1_i32_9 = arith.constant 1 : i32
    tilegpu.mbarrier_init %27[%c2_i32], %c1_i32_9 : !tilegpu.mbarriers<3>
    %28 = tilegpu.alloc_mbarriers {offset = 196632 : i64} : !tilegpu.mbarriers<3>
    %c256_i32 = arith.constant 256 : i32
    %c0_i32_10 = arith.constant 0 : i32
    tilegpu.mbarrier_init %28[%c0_i32_10], %c256_i32 : !tilegpu.mbarriers<3>
    %c256_i32_11 = arith.constant 256 : i32
    %c1_i32_12 = arith.constant 1 : i32
    tilegpu.mbarrier_init %28[%c1_i32_12], %c256_i32_11 : !tilegpu.mbarriers<3>
    %c256_i32_13 = arith.constant 256 : i32
    %c2_i32_14 = arith.constant 2 : i32
    tilegpu.mbarrier_init %28[%c2_i32_14], %c256_i32_13 : !tilegpu.mbarriers<3>
    %29 = tilegpu.alloc_mbarriers {offset = 196656 : i64} : !tilegpu.mbarriers<1>
    %c0_i32_15 = arith.constant 0 : i32
    %c1_i32_16 = arith.constant 1 : i32
    tilegpu.mbarrier_init %29[%c0_i32_15], %c1_i32_16 : !tilegpu.mbarriers<1>
    %30 = tilegpu.alloc_shared {offset = 197632 : i64} : !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>
    %31 = nvvm.read.ptx.sreg.tid.x : i32
    %c256_i32_17 = arith.constant 256 : i32
    %32 = arith.cmpi uge, %31, %c256_i32_17 : i32
    scf.if %32 {
      tilegpu.scratch_base 230400
      nvvm.setmaxregister  decrease 40
      %c0_i32_18 = arith.constant 0 : i32
      %33 = scf.for %arg8 = %c0_i32 to %24 step %c1_i32 iter_args(%arg9 = %c0_i32_18) -> (i32)  : i32 {
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
        %c0_i32_19 = arith.constant 0 : i32
        %46 = arith.subi %45, %c0_i32 : i32
        %47 = arith.ceildivsi %46, %c1_i32 : i32
        %48 = arith.maxsi %47, %c0_i32_19 : i32
        %c1_i32_20 = arith.constant 1 : i32
        %c0_i32_21 = arith.constant 0 : i32
        scf.for %arg10 = %c0_i32_21 to %48 step %c1_i32_20  : i32 {
          %50 = arith.addi %arg9, %arg10 : i32
          %c3_i32 = arith.constant 3 : i32
          %51 = arith.remsi %50, %c3_i32 : i32
          %c3_i32_22 = arith.constant 3 : i32
          %52 = arith.cmpi sge, %50, %c3_i32_22 : i32
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
          %c65536_i32 = arith.constant 65536 : i32
          tilegpu.mbarrier_arrive_expect_tx %27[%51], %c65536_i32 : !tilegpu.mbarriers<3>
          %c128_i32_23 = arith.constant 128 : i32
          %55 = arith.muli %c0_i32, %c128_i32_23 : i32
          %c128_i32_24 = arith.constant 128 : i32
          %56 = arith.muli %54, %c128_i32_24 : i32
          %c1_i32_25 = arith.constant 1 : i32
          %57 = arith.muli %43, %c1_i32_25 : i32
          %58 = tilegpu.slot %25[%51] : !tilegpu.shared<128x128xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>
          tilegpu.tma_load %arg5[%55, %56, %57] into %58, %27[%51] : !tilegpu.tensor_map<1x128x64xf16, swizzle = 128>, !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<3>
          %c128_i32_26 = arith.constant 128 : i32
          %59 = arith.muli %c0_i32, %c128_i32_26 : i32
          %c128_i32_27 = arith.constant 128 : i32
          %60 = arith.muli %54, %c128_i32_27 : i32
          %c1_i32_28 = arith.constant 1 : i32
          %61 = arith.muli %43, %c1_i32_28 : i32
          %62 = tilegpu.slot %26[%51] : !tilegpu.shared<128x128xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>
          tilegpu.tma_load %arg6[%59, %60, %61] into %62, %27[%51] : !tilegpu.tensor_map<1x128x64xf16, swizzle = 128>, !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<3>
        }
        %49 = arith.addi %arg9, %48 : i32
        scf.yield %49 : i32
      }
    } else {
      tilegpu.scratch_base 230400
      nvvm.setmaxregister  increase 232
      %c0_i32_18 = arith.constant 0 : i32
      %33 = scf.for %arg8 = %c0_i32 to %24 step %c1_i32 iter_args(%arg9 = %c0_i32_18) -> (i32)  : i32 {
        %34 = arith.subi %arg8, %c0_i32 : i32
        %35 = arith.divsi %34, %c1_i32 : i32
        %c2_i32_26 = arith.constant 2 : i32
        %36 = arith.remsi %35, %c2_i32_26 : i32
        %37 = arith.muli %arg8, %6 : i32
        %38 = arith.addi %3, %37 : i32
        %39 = arith.cmpi eq, %1, %c0_i32 : i32
        %40 = arith.cmpi eq, %1, %c-1_i32 : i32
        %41 = arith.ori %39, %40 : i1
        %42 = arith.select %41, %c1_i32, %1 : i32
        %43 = arith.remsi %38, %42 : i32
        %44 = arith.cmpi slt, %43, %c0_i32 : i32
        %45 = arith.cmpi slt, %42, %c0_i32 : i32
        %46 = arith.xori %44, %45 : i1
        %47 = arith.cmpi ne, %43, %c0_i32 : i32
        %48 = arith.andi %47, %46 : i1
        %49 = arith.addi %43, %42 : i32
        %50 = arith.select %48, %49, %43 : i32
        %51 = arith.cmpi eq, %38, %c-2147483648_i32 : i32
        %52 = arith.andi %51, %40 : i1
        %53 = arith.ori %39, %52 : i1
        %54 = arith.select %53, %c1_i32, %1 : i32
        %55 = arith.floordivsi %38, %54 : i32
        %56 = arith.select %39, %c0_i32, %55 : i32
        %57 = tile.dim %arg1, 1 : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>
        %58 = arith.floordivsi %57, %c128_i32 : i32
        %c1_i32_27 = arith.constant 1 : i32
        %c0_i32_28 = arith.constant 0 : i32
        %c1_i32_29 = arith.constant 1 : i32
        %c1_i32_30 = arith.constant 1 : i32
        %c1_i32_31 = arith.constant 1 : i32
        %c2_i32_32 = arith.constant 2 : i32
        %c0_i32_33 = arith.constant 0 : i32
        %59 = arith.subi %58, %c0_i32 : i32
        %60 = arith.ceildivsi %59, %c1_i32 : i32
        %61 = arith.maxsi %60, %c0_i32_33 : i32
        %c0_i32_34 = arith.constant 0 : i32
        %c0_i32_35 = arith.constant 0 : i32
        %62 = arith.cmpi slt, %c0_i32_35, %61 : i32
        %c1_i32_36 = arith.constant 1 : i32
        %c1_i32_37 = arith.constant 1 : i32
        %63 = arith.cmpi slt, %c1_i32_37, %61 : i32
        %c0_i32_38 = arith.constant 0 : i32
        %c1_i32_39 = arith.constant 1 : i32
        gpu.barrier
        %c32768_i32 = arith.constant 32768 : i32
        tilegpu.mbarrier_arrive_expect_tx %29[%c0_i32_38], %c32768_i32 : !tilegpu.mbarriers<1>
        %c128_i32_40 = arith.constant 128 : i32
        %64 = arith.muli %c0_i32, %c128_i32_40 : i32
        %c128_i32_41 = arith.constant 128 : i32
        %65 = arith.muli %50, %c128_i32_41 : i32
        %c1_i32_42 = arith.constant 1 : i32
        %66 = arith.muli %56, %c1_i32_42 : i32
        %67 = tilegpu.slot %30[%c0_i32_38] : !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128> -> !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>
        tilegpu.tma_load %arg7[%64, %65, %66] into %67, %29[%c0_i32_38] : !tilegpu.tensor_map<1x128x64xf16, swizzle = 128>, !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<1>
        tilegpu.mbarrier_wait %29[%c0_i32_38], %36 : !tilegpu.mbarriers<1>
        %c3_i32 = arith.constant 3 : i32
        %c3_i32_43 = arith.constant 3 : i32
        %c2_i32_44 = arith.constant 2 : i32
        %c3_i32_45 = arith.constant 3 : i32
        %c2_i32_46 = arith.constant 2 : i32
        %c2_i32_47 = arith.constant 2 : i32
        %c3_i32_48 = arith.constant 3 : i32
        %c0_i32_49 = arith.constant 0 : i32
        %c0_i32_50 = arith.constant 0 : i32
        %c3_i32_51 = arith.constant 3 : i32
        %c0_i32_52 = arith.constant 0 : i32
        %c3_i32_53 = arith.constant 3 : i32
        %68 = arith.cmpi slt, %c0_i32, %58 : i32
        %69:3 = scf.if %68 -> (tensor<128xf32, #slice>, tensor<128x128xf32, #mma>, tensor<128xf32, #slice>) {
          %76 = arith.subi %c0_i32, %c0_i32 : i32
          %77 = arith.divsi %76, %c1_i32 : i32
          %78 = arith.addi %arg9, %77 : i32
          %79 = arith.remsi %78, %c3_i32 : i32
          %80 = arith.divsi %78, %c3_i32_43 : i32
          %81 = arith.remsi %80, %c2_i32_44 : i32
          %82 = arith.subi %c0_i32, %c0_i32 : i32
          %83 = arith.divsi %82, %c1_i32 : i32
          tilegpu.mbarrier_wait %27[%79], %81 : !tilegpu.mbarriers<3>
          %84 = arith.addi %83, %c2_i32_47 : i32
          %85 = arith.cmpi slt, %84, %61 : i32
          %86 = tilegpu.slot %30[%c0_i32_50] : !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128> -> !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>
          %87 = tilegpu.slot %25[%79] : !tilegpu.shared<128x128xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>
          %88 = tilegpu.mma %86, %87, %cst_1 {b_transposed, tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 128], instr = [64, 128, 16]}>} : !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>, !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128> -> tensor<128x128xf32, #mma>
          %89 = tile.reduce(%88) axis = 1 : (tensor<128x128xf32, #mma>) -> tensor<128xf32, #slice> {
          ^bb0(%arg10: f32, %arg11: f32):
            %140 = arith.maxnumf %arg10, %arg11 : f32
            tile.yield %140 : f32
          }
          %90 = tile.splat %2 : tensor<128xf32, #slice>
          %91 = arith.mulf %89, %90 : tensor<128xf32, #slice>
          %92 = arith.maxnumf %cst_3, %91 : tensor<128xf32, #slice>
          %93 = tile.splat %2 : tensor<128x128xf32, #mma>
          %94 = arith.mulf %88, %93 : tensor<128x128xf32, #mma>
          %95 = tile.expand_dims %92, 1 : tensor<128xf32, #slice> -> tensor<128x1xf32, #mma>
          %96 = tile.broadcast %95 : tensor<128x1xf32, #mma> -> tensor<128x128xf32, #mma>
          %97 = arith.subf %94, %96 : tensor<128x128xf32, #mma>
          %98 = math.absf %97 : tensor<128x128xf32, #mma>
          %99 = arith.cmpf olt, %98, %cst_0 : tensor<128x128xf32, #mma>
          %100 = math.copysign %cst_1, %97 : tensor<128x128xf32, #mma>
          %101 = arith.select %99, %100, %97 : tensor<128x128xi1, #mma>, tensor<128x128xf32, #mma>
          %102 = math.exp2 %101 : tensor<128x128xf32, #mma>
          %103 = math.absf %102 : tensor<128x128xf32, #mma>
          %104 = arith.cmpf olt, %103, %cst_0 : tensor<128x128xf32, #mma>
          %105 = math.copysign %cst_1, %102 : tensor<128x128xf32, #mma>
          %106 = arith.select %104, %105, %102 : tensor<128x128xi1, #mma>, tensor<128x128xf32, #mma>
          %107 = arith.subf %cst_3, %92 : tensor<128xf32, #slice>
          %108 = math.absf %107 : tensor<128xf32, #slice>
          %109 = arith.cmpf olt, %108, %cst : tensor<128xf32, #slice>
          %110 = math.copysign %cst_2, %107 : tensor<128xf32, #slice>
          %111 = arith.select %109, %110, %107 : tensor<128xi1, #slice>, tensor<128xf32, #slice>
          %112 = math.exp2 %111 : tensor<128xf32, #slice>
          %113 = math.absf %112 : tensor<128xf32, #slice>
          %114 = arith.cmpf olt, %113, %cst : tensor<128xf32, #slice>
          %115 = math.copysign %cst_2, %112 : tensor<128xf32, #slice>
          %116 = arith.select %114, %115, %112 : tensor<128xi1, #slice>, tensor<128xf32, #slice>
          %117 = tile.reduce(%106) axis = 1 : (tensor<128x128xf32, #mma>) -> tensor<128xf32, #slice> {
          ^bb0(%arg10: f32, %arg11: f32):
            %140 = arith.addf %arg10, %arg11 : f32
            tile.yield %140 : f32
          }
          %118 = math.fma %cst_2, %116, %117 : tensor<128xf32, #slice>
          %119 = arith.truncf %106 : tensor<128x128xf32, #mma> to tensor<128x128xf16, #mma>
          %120 = arith.addi %c0_i32, %c1_i32 : i32
          %121:10 = scf.for %arg10 = %120 to %58 step %c1_i32 iter_args(%arg11 = %118, %arg12 = %cst_1, %arg13 = %92, %arg14 = %83, %arg15 = %84, %arg16 = %116, %arg17 = %79, %arg18 = %119, %arg19 = %78, %arg20 = %c0_i32) -> (tensor<128xf32, #slice>, tensor<128x128xf32, #mma>, tensor<128xf32, #slice>, i32, i32, tensor<128xf32, #slice>, i32, tensor<128x128xf16, #mma>, i32, i32)  : i32 {
            %140 = arith.subi %arg10, %c0_i32 : i32
            %141 = arith.divsi %140, %c1_i32 : i32
            %142 = arith.addi %arg9, %141 : i32
            %143 = arith.remsi %142, %c3_i32 : i32
            %144 = arith.divsi %142, %c3_i32_43 : i32
            %145 = arith.remsi %144, %c2_i32_44 : i32
            %146 = arith.subi %arg10, %c0_i32 : i32
            %147 = arith.divsi %146, %c1_i32 : i32
            tilegpu.mbarrier_wait %27[%143], %145 : !tilegpu.mbarriers<3>
            %148 = arith.addi %147, %c2_i32_47 : i32
            %149 = arith.cmpi slt, %148, %61 : i32
            %150 = tilegpu.slot %30[%c0_i32_50] : !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128> -> !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>
            %151 = tilegpu.slot %25[%143] : !tilegpu.shared<128x128xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>
            %152 = tilegpu.mma %150, %151, %cst_1 {b_transposed, in_flight, tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 128], instr = [64, 128, 16]}>} : !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>, !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128> -> tensor<128x128xf32, #mma>
            %153 = arith.remsi %arg14, %c3_i32_45 : i32
            %154 = arith.divsi %arg14, %c3_i32_45 : i32
            %155 = arith.remsi %154, %c2_i32_46 : i32
            %156 = arith.remsi %arg15, %c3_i32_45 : i32
            %157 = arith.subi %arg20, %c0_i32 : i32
            %158 = arith.divsi %157, %c1_i32 : i32
            %159 = arith.addi %158, %c0_i32_49 : i32
            %160 = arith.remsi %159, %c3_i32_48 : i32
            %161 = tile.expand_dims %arg16, 1 : tensor<128xf32, #slice> -> tensor<128x1xf32, #mma>
            %162 = tile.broadcast %161 : tensor<128x1xf32, #mma> -> tensor<128x128xf32, #mma>
            %163 = arith.mulf %arg12, %162 : tensor<128x128xf32, #mma>
            %164 = arith.subi %arg20, %c0_i32 : i32
            %165 = arith.divsi %164, %c1_i32 : i32
            %166 = arith.addi %165, %c0_i32_52 : i32
            %167 = arith.remsi %166, %c3_i32_51 : i32
            %168 = tilegpu.slot %26[%arg17] : !tilegpu.shared<128x128xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>
            %169 = tilegpu.mma %arg18, %168, %163 {in_flight, tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 128], instr = [64, 128, 16]}>} : tensor<128x128xf16, #mma>, !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128> -> tensor<128x128xf32, #mma>
            %170 = tilegpu.wait_mma %152 pending = 1 : tensor<128x128xf32, #mma> -> tensor<128x128xf32, #mma>
            %171 = tile.reduce(%170) axis = 1 : (tensor<128x128xf32, #mma>) -> tensor<128xf32, #slice> {
            ^bb0(%arg21: f32, %arg22: f32):
              %204 = arith.maxnumf %arg21, %arg22 : f32
              tile.yield %204 : f32
            }
            %172 = tile.splat %2 : tensor<128xf32, #slice>
            %173 = arith.mulf %171, %172 : tensor<128xf32, #slice>
            %174 = arith.maxnumf %arg13, %173 : tensor<128xf32, #slice>
            %175 = tile.splat %2 : tensor<128x128xf32, #mma>
            %176 = arith.mulf %170, %175 : tensor<128x128xf32, #mma>
            %177 = tile.expand_dims %174, 1 : tensor<128xf32, #slice> -> tensor<128x1xf32, #mma>
            %178 = tile.broadcast %177 : tensor<128x1xf32, #mma> -> tensor<128x128xf32, #mma>
            %179 = arith.subf %176, %178 : tensor<128x128xf32, #mma>
            %180 = math.absf %179 : tensor<128x128xf32, #mma>
            %181 = arith.cmpf olt, %180, %cst_0 : tensor<128x128xf32, #mma>
            %182 = math.copysign %cst_1, %179 : tensor<128x128xf32, #mma>
            %183 = arith.select %181, %182, %179 : tensor<128x128xi1, #mma>, tensor<128x128xf32, #mma>
            %184 = math.exp2 %183 : tensor<128x128xf32, #mma>
            %185 = math.absf %184 : tensor<128x128xf32, #mma>
            %186 = arith.cmpf olt, %185, %cst_0 : tensor<128x128xf32, #mma>
            %187 = math.copysign %cst_1, %184 : tensor<128x128xf32, #mma>
            %188 = arith.select %186, %187, %184 : tensor<128x128xi1, #mma>, tensor<128x128xf32, #mma>
            %189 = arith.subf %arg13, %174 : tensor<128xf32, #slice>
            %190 = math.absf %189 : tensor<128xf32, #slice>
            %191 = arith.cmpf olt, %190, %cst : tensor<128xf32, #slice>
            %192 = math.copysign %cst_2, %189 : tensor<128xf32, #slice>
            %193 = arith.select %191, %192, %189 : tensor<128xi1, #slice>, tensor<128xf32, #slice>
            %194 = math.exp2 %193 : tensor<128xf32, #slice>
            %195 = math.absf %194 : tensor<128xf32, #slice>
            %196 = arith.cmpf olt, %195, %cst : tensor<128xf32, #slice>
            %197 = math.copysign %cst_2, %194 : tensor<128xf32, #slice>
            %198 = arith.select %196, %197, %194 : tensor<128xi1, #slice>, tensor<128xf32, #slice>
            %199 = tile.reduce(%188) axis = 1 : (tensor<128x128xf32, #mma>) -> tensor<128xf32, #slice> {
            ^bb0(%arg21: f32, %arg22: f32):
              %204 = arith.addf %arg21, %arg22 : f32
              tile.yield %204 : f32
            }
            %200 = math.fma %arg11, %198, %199 : tensor<128xf32, #slice>
            %201 = arith.truncf %188 : tensor<128x128xf32, #mma> to tensor<128x128xf16, #mma>
            %202 = tilegpu.wait_mma %169 pending = 0 : tensor<128x128xf32, #mma> -> tensor<128x128xf32, #mma>
            %203 = arith.remsi %arg19, %c3_i32_53 : i32
            tilegpu.mbarrier_arrive %28[%203] : !tilegpu.mbarriers<3>
            scf.yield %200, %202, %174, %147, %148, %198, %143, %201, %142, %arg10 : tensor<128xf32, #slice>, tensor<128x128xf32, #mma>, tensor<128xf32, #slice>, i32, i32, tensor<128xf32, #slice>, i32, tensor<128x128xf16, #mma>, i32, i32
          }
          %122 = arith.remsi %121#3, %c3_i32_45 : i32
          %123 = arith.divsi %121#3, %c3_i32_45 : i32
          %124 = arith.remsi %123, %c2_i32_46 : i32
          %125 = arith.remsi %121#4, %c3_i32_45 : i32
          %126 = arith.subi %121#9, %c0_i32 : i32
          %127 = arith.divsi %126, %c1_i32 : i32
          %128 = arith.addi %127, %c0_i32_49 : i32
          %129 = arith.remsi %128, %c3_i32_48 : i32
          %130 = tile.expand_dims %121#5, 1 : tensor<128xf32, #slice> -> tensor<128x1xf32, #mma>
          %131 = tile.broadcast %130 : tensor<128x1xf32, #mma> -> tensor<128x128xf32, #mma>
          %132 = arith.mulf %121#1, %131 : tensor<128x128xf32, #mma>
          %133 = arith.subi %121#9, %c0_i32 : i32
          %134 = arith.divsi %133, %c1_i32 : i32
          %135 = arith.addi %134, %c0_i32_52 : i32
          %136 = arith.remsi %135, %c3_i32_51 : i32
          %137 = tilegpu.slot %26[%121#6] : !tilegpu.shared<128x128xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>
          %138 = tilegpu.mma %121#7, %137, %132 {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 128], instr = [64, 128, 16]}>} : tensor<128x128xf16, #mma>, !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128> -> tensor<128x128xf32, #mma>
          %139 = arith.remsi %121#8, %c3_i32_53 : i32
          tilegpu.mbarrier_arrive %28[%139] : !tilegpu.mbarriers<3>
          scf.yield %121#0, %138, %121#2 : tensor<128xf32, #slice>, tensor<128x128xf32, #mma>, tensor<128xf32, #slice>
        } else {
          scf.yield %cst_2, %cst_1, %cst_3 : tensor<128xf32, #slice>, tensor<128x128xf32, #mma>, tensor<128xf32, #slice>
        }
        gpu.barrier
        %c0_i32_54 = arith.constant 0 : i32
        %c1_i32_55 = arith.constant 1 : i32
        %c2_i32_56 = arith.constant 2 : i32
        %c0_i32_57 = arith.constant 0 : i32
        %70 = tile.expand_dims %69#0, 1 : tensor<128xf32, #slice> -> tensor<128x1xf32, #mma>
        %71 = tile.broadcast %70 : tensor<128x1xf32, #mma> -> tensor<128x128xf32, #mma>
        %72 = arith.divf %69#1, %71 : tensor<128x128xf32, #mma>
        %73 = tile.reshape %72 : tensor<128x128xf32, #mma> -> tensor<1x128x128xf32, #blocked>
        %74 = arith.truncf %73 : tensor<1x128x128xf32, #blocked> to tensor<1x128x128xf16, #blocked>
        tile.store %arg3[%56, %50, %c0_i32], %74 : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>, tensor<1x128x128xf16, #blocked>
        %75 = arith.addi %arg9, %61 : i32
        scf.yield %75 : i32
      }
      tilegpu.scratch_base 196672
      gpu.barrier
      %c0_i32_19 = arith.constant 0 : i32
      tilegpu.mbarrier_inval %27[%c0_i32_19] : !tilegpu.mbarriers<3>
      %c1_i32_20 = arith.constant 1 : i32
      tilegpu.mbarrier_inval %27[%c1_i32_20] : !tilegpu.mbarriers<3>
      %c2_i32_21 = arith.constant 2 : i32
      tilegpu.mbarrier_inval %27[%c2_i32_21] : !tilegpu.mbarriers<3>
      %c0_i32_22 = arith.constant 0 : i32
      tilegpu.mbarrier_inval %28[%c0_i32_22] : !tilegpu.mbarriers<3>
      %c1_i32_23 = arith.constant 1 : i32
      tilegpu.mbarrier_inval %28[%c1_i32_23] : !tilegpu.mbarriers<3>
      %c2_i32_24 = arith.constant 2 : i32
      tilegpu.mbarrier_inval %28[%c2_i32_24] : !tilegpu.mbarriers<3>
      %c0_i32_25 = arith.constant 0 : i32
      tilegpu.mbarrier_inval %29[%c0_i32_25] : !tilegpu.mbarriers<1>
      tilegpu.scratch_base 0
    } {tilegpu.warp_specialized = #tilegpu.warp_specialized<consumers = 8, producers = 4>}
    tilegpu.scratch_base 0
    return
  }
}
