// A 8192-wide layernorm row (bench/kernels.py, traced): the code a
// memory-bound row kernel needs. The backend schedules for register pressure
// (80 registers, not 114: two more blocks per SM), divides with div.full and
// contracts a * b + c into fma, as Triton does.
// REQUIRES: ptxas
// RUN: tile-opt %s --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// CHECK: .maxntid 256, 1, 1
// CHECK-NOT: div.rn.f32
// CHECK: div.full.f32
// CHECK-NOT: div.rn.f32
// CHECK: fma.rn.f32
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// PTXAS: Used {{([1-8]?[0-9]|9[0-6])}} registers

module attributes {tile.num_warps = 8 : i32} {
  func.func @layernorm(%arg0: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %arg1: !tile.array<?xf16, strides = [1], align = 16, div = 16>, %arg2: !tile.array<?xf16, strides = [1], align = 16, div = 16>, %arg3: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %arg4: f32) attributes {tile.kernel} {
    %0 = tile.bid 0
    %1 = tile.dim %arg0, 1 : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>
    %c0_i32 = arith.constant 0 : i32
    %2 = tile.load %arg0[%0, %c0_i32] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<1x8192xf16>
    %3 = arith.extf %2 : tensor<1x8192xf16> to tensor<1x8192xf32>
    %4 = tile.reduce(%3) axis = 1 : (tensor<1x8192xf32>) -> tensor<1xf32> {
    ^bb0(%arg5: f32, %arg6: f32):
      %36 = arith.addf %arg5, %arg6 : f32
      tile.yield %36 : f32
    }
    %5 = tile.expand_dims %4, 1 : tensor<1xf32> -> tensor<1x1xf32>
    %6 = arith.sitofp %1 : i32 to f32
    %7 = tile.splat %6 : tensor<1x1xf32>
    %8 = arith.divf %5, %7 : tensor<1x1xf32>
    %9 = tile.iota : tensor<8192xi32>
    %10 = tile.expand_dims %9, 0 : tensor<8192xi32> -> tensor<1x8192xi32>
    %11 = tile.splat %1 : tensor<1x8192xi32>
    %12 = arith.cmpi slt, %10, %11 : tensor<1x8192xi32>
    %13 = tile.broadcast %8 : tensor<1x1xf32> -> tensor<1x8192xf32>
    %14 = arith.subf %3, %13 : tensor<1x8192xf32>
    %cst = arith.constant dense<0.000000e+00> : tensor<1x8192xf32>
    %15 = arith.select %12, %14, %cst : tensor<1x8192xi1>, tensor<1x8192xf32>
    %16 = arith.mulf %15, %15 : tensor<1x8192xf32>
    %17 = tile.reduce(%16) axis = 1 : (tensor<1x8192xf32>) -> tensor<1xf32> {
    ^bb0(%arg5: f32, %arg6: f32):
      %36 = arith.addf %arg5, %arg6 : f32
      tile.yield %36 : f32
    }
    %18 = tile.expand_dims %17, 1 : tensor<1xf32> -> tensor<1x1xf32>
    %19 = arith.sitofp %1 : i32 to f32
    %20 = tile.splat %19 : tensor<1x1xf32>
    %21 = arith.divf %18, %20 : tensor<1x1xf32>
    %22 = tile.load %arg1[%c0_i32] : !tile.array<?xf16, strides = [1], align = 16, div = 16> -> tensor<8192xf16>
    %23 = arith.extf %22 : tensor<8192xf16> to tensor<8192xf32>
    %24 = tile.expand_dims %23, 0 : tensor<8192xf32> -> tensor<1x8192xf32>
    %25 = tile.load %arg2[%c0_i32] : !tile.array<?xf16, strides = [1], align = 16, div = 16> -> tensor<8192xf16>
    %26 = arith.extf %25 : tensor<8192xf16> to tensor<8192xf32>
    %27 = tile.expand_dims %26, 0 : tensor<8192xf32> -> tensor<1x8192xf32>
    %28 = tile.splat %arg4 : tensor<1x1xf32>
    %29 = arith.addf %21, %28 : tensor<1x1xf32>
    %30 = math.rsqrt %29 : tensor<1x1xf32>
    %31 = tile.broadcast %30 : tensor<1x1xf32> -> tensor<1x8192xf32>
    %32 = arith.mulf %15, %31 : tensor<1x8192xf32>
    %33 = arith.mulf %32, %24 : tensor<1x8192xf32>
    %34 = arith.addf %33, %27 : tensor<1x8192xf32>
    %35 = arith.truncf %34 : tensor<1x8192xf32> to tensor<1x8192xf16>
    tile.store %arg3[%0, %c0_i32], %35 : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, tensor<1x8192xf16>
    return
  }
}
