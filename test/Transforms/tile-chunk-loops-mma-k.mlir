// RUN: tile-opt %s --split-input-file --tile-chunk-loops --tile-tiling="warpgroup-mma=true" | FileCheck %s
// RUN: tile-opt %s --split-input-file --tile-chunk-loops="max-mma-k=0" --tile-tiling | FileCheck %s --check-prefix=OFF
// RUN: tile-opt %s --split-input-file --tile-chunk-loops="mma-k-chunk=16" --tile-tiling | FileCheck %s --check-prefix=SMALL
// RUN: not tile-opt %s --split-input-file --tile-chunk-loops="mma-k-chunk=48" 2>&1 | FileCheck %s --check-prefix=ERR

// An mma with K = 1024 (issue 13, item 13: the example matmul at BK = 4096
// took minutes in ptxas, its unrolled K growing the code) becomes a loop of
// 16 mmas of K = 64 on chunks of the same loads: block index k of K 1024 is
// chunk index k * 16 + j. The chunk loop is the loop around the mma, so it
// takes the wgmma tiling. With max-mma-k=0 it stays one mma.
// CHECK-LABEL: func.func @long_k
// CHECK: scf.for %[[K:[a-z0-9]+]] = {{.*}} iter_args(%[[ACC:[a-z0-9]+]] = %{{.*}})
// CHECK:   %[[C16:.*]] = arith.constant 16 : i32
// CHECK:   %[[BASE:.*]] = arith.muli %[[K]], %[[C16]] : i32
// CHECK:   %[[BASEB:.*]] = arith.muli %[[K]], %[[C16]] : i32
// CHECK:   %[[R:.*]] = scf.for %[[J:[a-z0-9]+]] = %{{.*}} to %[[C16]] step %{{.*}} iter_args(%[[ACC1:.*]] = %[[ACC]]) -> (tensor<64x64xf32>) : i32 {
// CHECK:     %[[IA:.*]] = arith.addi %[[BASE]], %[[J]] : i32
// CHECK:     %[[A:.*]] = tile.load %{{.*}}[%{{.*}}, %[[IA]]] {padding = 1.000000e+00 : f16} : {{.*}} -> tensor<64x64xf16>
// CHECK:     %[[IB:.*]] = arith.addi %[[BASEB]], %[[J]] : i32
// CHECK:     %[[B:.*]] = tile.load %{{.*}}[%[[IB]], %{{.*}}] : {{.*}} -> tensor<64x64xf16>
// CHECK:     %[[M:.*]] = tile.mma %[[A]], %[[B]], %[[ACC1]] {tiling = #tile.mma_tiling<{warps = [4, 1], warp_tile = [16, 64], instr = [64, 64, 16]}>} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
// CHECK:     scf.yield %[[M]]
// CHECK:   }
// CHECK:   scf.yield %[[R]]
// CHECK-NOT: tensor<64x1024xf16>
// OFF-LABEL: func.func @long_k
// OFF: tile.mma {{.*}} : tensor<64x1024xf16>, tensor<1024x64xf16> -> tensor<64x64xf32>
// SMALL-LABEL: func.func @long_k
// SMALL: %[[C64:.*]] = arith.constant 64 : i32
// SMALL: scf.for %{{.*}} = %{{.*}} to %[[C64]]
// SMALL: tile.mma {{.*}} : tensor<64x16xf16>, tensor<16x64xf16> -> tensor<64x64xf32>
// ERR: mma-k-chunk must be a power of two, got 48
func.func @long_k(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16>,
                  %B: !tile.array<?x?xf16, strides = [?, 1], align = 16>,
                  %C: !tile.array<?x?xf32, strides = [?, 1], align = 16>,
                  %nk: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %pn = tile.bid 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<64x64xf32>) : i32 {
    %a = tile.load %A[%pm, %k] {padding = 1.0 : f16} : !tile.array<?x?xf16, strides = [?, 1], align = 16> -> tensor<64x1024xf16>
    %b = tile.load %B[%k, %pn] : !tile.array<?x?xf16, strides = [?, 1], align = 16> -> tensor<1024x64xf16>
    %r = tile.mma %a, %b, %acc0 : tensor<64x1024xf16>, tensor<1024x64xf16> -> tensor<64x64xf32>
    scf.yield %r : tensor<64x64xf32>
  }
  tile.store %C[%pm, %pn], %acc : !tile.array<?x?xf32, strides = [?, 1], align = 16>, tensor<64x64xf32>
  return
}

// -----

// K up to max-mma-k (256) stays one mma: the common case is unchanged.
// CHECK-LABEL: func.func @short_k
// CHECK-NOT: scf.for
// CHECK: tile.mma {{.*}} : tensor<64x256xf16>, tensor<256x64xf16> -> tensor<64x64xf32>
func.func @short_k(%A: !tile.array<?x?xf16, strides = [?, 1]>,
                   %B: !tile.array<?x?xf16, strides = [?, 1]>) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %a = tile.load %A[%c0, %c0] : !tile.array<?x?xf16, strides = [?, 1]> -> tensor<64x256xf16>
  %b = tile.load %B[%c0, %c0] : !tile.array<?x?xf16, strides = [?, 1]> -> tensor<256x64xf16>
  %r = tile.mma %a, %b, %zero : tensor<64x256xf16>, tensor<256x64xf16> -> tensor<64x64xf32>
  return %r : tensor<64x64xf32>
}

// -----

// A transposed load (order = [1, 0]) reads K along its block's dim 0: the
// chunk index goes there. int8 chunks stay multiples of the instruction's
// K (32): with mma-k-chunk=16 the mma stays whole.
// CHECK-LABEL: func.func @transposed_i8
// CHECK: %[[BASE:.*]] = arith.muli %arg2, %[[C8:.*]] : i32
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %[[C8]]
// CHECK:   %[[IA:.*]] = arith.addi %[[BASE]], %[[J]]
// CHECK:   tile.load %{{.*}}[%[[IA]], %{{.*}}] {order = array<i64: 1, 0>} : {{.*}} -> tensor<32x64xi8>
// CHECK:   tile.load {{.*}} -> tensor<64x32xi8>
// CHECK:   tile.mma {{.*}} : tensor<32x64xi8>, tensor<64x32xi8> -> tensor<32x32xi32>
// SMALL-LABEL: func.func @transposed_i8
// SMALL-NOT: scf.for
// SMALL: tile.mma {{.*}} : tensor<32x512xi8>, tensor<512x32xi8> -> tensor<32x32xi32>
func.func @transposed_i8(%A: !tile.array<?x?xi8, strides = [1, ?]>,
                         %B: !tile.array<?x?xi8, strides = [?, 1]>, %i: i32) -> tensor<32x32xi32> {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0> : tensor<32x32xi32>
  %a = tile.load %A[%i, %c0] {order = array<i64: 1, 0>} : !tile.array<?x?xi8, strides = [1, ?]> -> tensor<32x512xi8>
  %b = tile.load %B[%i, %c0] : !tile.array<?x?xi8, strides = [?, 1]> -> tensor<512x32xi8>
  %r = tile.mma %a, %b, %zero : tensor<32x512xi8>, tensor<512x32xi8> -> tensor<32x32xi32>
  return %r : tensor<32x32xi32>
}

// -----

// Batched (3-d) mmas chunk K, dims 2 of A and 1 of B.
// CHECK-LABEL: func.func @batched
// CHECK: scf.for
// CHECK:   tile.load {{.*}} -> tensor<2x32x64xf16>
// CHECK:   tile.load {{.*}} -> tensor<2x64x32xf16>
// CHECK:   tile.mma {{.*}} : tensor<2x32x64xf16>, tensor<2x64x32xf16> -> tensor<2x32x32xf32>
func.func @batched(%A: !tile.array<?x?x?xf16, strides = [?, ?, 1]>,
                   %B: !tile.array<?x?x?xf16, strides = [?, ?, 1]>) -> tensor<2x32x32xf32> {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<2x32x32xf32>
  %a = tile.load %A[%c0, %c0, %c0] : !tile.array<?x?x?xf16, strides = [?, ?, 1]> -> tensor<2x32x512xf16>
  %b = tile.load %B[%c0, %c0, %c0] : !tile.array<?x?x?xf16, strides = [?, ?, 1]> -> tensor<2x512x32xf16>
  %r = tile.mma %a, %b, %zero : tensor<2x32x512xf16>, tensor<2x512x32xf16> -> tensor<2x32x32xf32>
  return %r : tensor<2x32x32xf32>
}

// -----

// Loads that are read elsewhere too, or that a store may change before the
// mma, keep the whole mma: their tile is needed (or read) where it is.
// CHECK-LABEL: func.func @kept
// CHECK-NOT: scf.for
// CHECK: tile.mma {{.*}} : tensor<64x512xf16>, tensor<512x64xf16>
// CHECK: tile.mma {{.*}} : tensor<64x512xf16>, tensor<512x64xf16>
func.func @kept(%A: !tile.array<?x?xf16, strides = [?, 1]>,
                %B: !tile.array<?x?xf16, strides = [?, 1]>,
                %v: tensor<64x512xf16>) -> (tensor<64x64xf32>, tensor<64x512xf16>, tensor<64x64xf32>) {
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %a = tile.load %A[%c0, %c0] : !tile.array<?x?xf16, strides = [?, 1]> -> tensor<64x512xf16>
  %b = tile.load %B[%c0, %c0] : !tile.array<?x?xf16, strides = [?, 1]> -> tensor<512x64xf16>
  %r = tile.mma %a, %b, %zero : tensor<64x512xf16>, tensor<512x64xf16> -> tensor<64x64xf32>
  %a2 = tile.load %A[%c0, %c0] : !tile.array<?x?xf16, strides = [?, 1]> -> tensor<64x512xf16>
  %b2 = tile.load %B[%c0, %c0] : !tile.array<?x?xf16, strides = [?, 1]> -> tensor<512x64xf16>
  tile.store %A[%c0, %c0], %v : !tile.array<?x?xf16, strides = [?, 1]>, tensor<64x512xf16>
  %r2 = tile.mma %a2, %b2, %zero : tensor<64x512xf16>, tensor<512x64xf16> -> tensor<64x64xf32>
  return %r, %a, %r2 : tensor<64x64xf32>, tensor<64x512xf16>, tensor<64x64xf32>
}

// -----

// Operands computed from loads by elementwise ops that only the mma reads
// (f32 arrays cast to f16, a scale) are recomputed per chunk, splat
// constants hoisted out of the loop (by the canonicalizer) included.
// CHECK-LABEL: func.func @cast_chain
// CHECK: scf.for
// CHECK: scf.for
// CHECK:   %[[S:.*]] = arith.constant dense<5.000000e-01> : tensor<64x64xf16>
// CHECK:   %[[A:.*]] = tile.load {{.*}} -> tensor<64x64xf32>
// CHECK:   %[[AH:.*]] = arith.truncf %[[A]] : tensor<64x64xf32> to tensor<64x64xf16>
// CHECK:   %[[AS:.*]] = arith.mulf %[[AH]], %[[S]] : tensor<64x64xf16>
// CHECK:   %[[B:.*]] = tile.load {{.*}} -> tensor<64x64xf32>
// CHECK:   %[[BH:.*]] = arith.truncf %[[B]] : tensor<64x64xf32> to tensor<64x64xf16>
// CHECK:   tile.mma %[[AS]], %[[BH]], %{{.*}} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
// CHECK-NOT: tensor<64x1024
func.func @cast_chain(%A: !tile.array<?x?xf32, strides = [?, 1]>,
                      %B: !tile.array<?x?xf32, strides = [?, 1]>, %nk: i32) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %half = arith.constant dense<0.5> : tensor<64x1024xf16>
  %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<64x64xf32>) : i32 {
    %a = tile.load %A[%c0, %k] : !tile.array<?x?xf32, strides = [?, 1]> -> tensor<64x1024xf32>
    %ah = arith.truncf %a : tensor<64x1024xf32> to tensor<64x1024xf16>
    %as = arith.mulf %ah, %half : tensor<64x1024xf16>
    %b = tile.load %B[%k, %c0] : !tile.array<?x?xf32, strides = [?, 1]> -> tensor<1024x64xf32>
    %bh = arith.truncf %b : tensor<1024x64xf32> to tensor<1024x64xf16>
    %r = tile.mma %as, %bh, %acc0 : tensor<64x1024xf16>, tensor<1024x64xf16> -> tensor<64x64xf32>
    scf.yield %r : tensor<64x64xf32>
  }
  return %acc : tensor<64x64xf32>
}
