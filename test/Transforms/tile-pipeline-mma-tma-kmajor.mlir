// tile-pipeline-mma with mma-pipelining=tma on the K-major kinds (tf32,
// int8, fp8), which wgmma reads only with B given transposed: A [m][k] and
// B^T [n][k] are both boxes of 128-byte K panels (A 128x32 f32, B^T 256x32
// f32; int8 128 of K), their rings hold B^T as loaded (n rows of k), the
// tilegpu.mma reads it b_transposed and stays in flight, and after the loop
// the accumulator is waited for: f32, or int8's i32.
// RUN: tile-opt %s --split-input-file --tile-tiling="warp-tiling=true warpgroup-mma=true" --tile-map-threads --tile-pipeline-mma=mma-pipelining=tma | FileCheck %s

// CHECK-LABEL: func.func @tf32_tn(
// CHECK-SAME: !tilegpu.tensor_map<128x32xf32, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 0>}
// CHECK-SAME: !tilegpu.tensor_map<256x32xf32, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 1>})
// CHECK: tilegpu.alloc_shared : !tilegpu.shared<128x32xf32, slots = 4, swizzle = 128>
// CHECK: tilegpu.alloc_shared : !tilegpu.shared<256x32xf32, slots = 4, swizzle = 128>
// CHECK: scf.for
// CHECK: tilegpu.mbarrier_wait
// CHECK: tilegpu.mma {{.*}} {b_transposed, in_flight, tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 256], instr = [64, 256, 8]}>}
// CHECK: tilegpu.wait_mma %{{.*}} pending = 0 : tensor<128x256xf32, #{{.*}}>
func.func @tf32_tn(%A: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                   %Bt: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                   %C: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
                   %nk: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %pn = tile.bid 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x256xf32>) : i32 {
    %a = tile.load %A[%pm, %k] : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<128x32xf32>
    %bt = tile.load %Bt[%pn, %k] : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<256x32xf32>
    %b = tile.permute %bt, [1, 0] : tensor<256x32xf32> -> tensor<32x256xf32>
    %r = tile.mma %a, %b, %acc0 {allow_tf32} : tensor<128x32xf32>, tensor<32x256xf32> -> tensor<128x256xf32>
    scf.yield %r : tensor<128x256xf32>
  }
  tile.store %C[%pm, %pn], %acc : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<128x256xf32>
  return
}

// -----

// CHECK-LABEL: func.func @int8_tn(
// CHECK-SAME: !tilegpu.tensor_map<128x128xi8, swizzle = 128>
// CHECK-SAME: !tilegpu.tensor_map<256x128xi8, swizzle = 128>
// CHECK: tilegpu.mma {{.*}} {b_transposed, in_flight, tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 256], instr = [64, 256, 32]}>}
// CHECK: tilegpu.wait_mma %{{.*}} pending = 0 : tensor<128x256xi32, #{{.*}}>
func.func @int8_tn(%A: !tile.array<?x?xi8, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                   %Bt: !tile.array<?x?xi8, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                   %C: !tile.array<?x?xi32, strides = [?, 1], align = 16, div = 16>,
                   %nk: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %pn = tile.bid 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0> : tensor<128x256xi32>
  %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x256xi32>) : i32 {
    %a = tile.load %A[%pm, %k] : !tile.array<?x?xi8, strides = [?, 1], align = 16, div = 16> -> tensor<128x128xi8>
    %bt = tile.load %Bt[%pn, %k] : !tile.array<?x?xi8, strides = [?, 1], align = 16, div = 16> -> tensor<256x128xi8>
    %b = tile.permute %bt, [1, 0] : tensor<256x128xi8> -> tensor<128x256xi8>
    %r = tile.mma %a, %b, %acc0 : tensor<128x128xi8>, tensor<128x256xi8> -> tensor<128x256xi32>
    scf.yield %r : tensor<128x256xi32>
  }
  tile.store %C[%pm, %pn], %acc : !tile.array<?x?xi32, strides = [?, 1], align = 16, div = 16>, tensor<128x256xi32>
  return
}
