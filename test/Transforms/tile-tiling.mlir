// RUN: tile-opt %s --split-input-file --tile-tiling | FileCheck %s
// RUN: tile-opt %s --split-input-file --tile-tiling=num-warps=8 | FileCheck %s --check-prefix=W8
// RUN: tile-opt %s --split-input-file --tile-tiling="warp-tiling=false" | FileCheck %s --check-prefix=NOWARP

// Warp tiling of a matmul: 128x128 f16 -> f32 with tiles of 16K elements
// gets 8 warps, M split twice as often as N (4x2 warps of 32x64), k16
// instructions (tile-map-threads builds the #tile.mma layout from it).
// CHECK: module attributes {tile.num_warps = 8 : i32}
// CHECK-LABEL: func.func @matmul
// CHECK: scf.for
// CHECK: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [4, 2], warp_tile = [32, 64], instr = [16, 8, 16]}>}
// CHECK-SAME: -> tensor<128x128xf32>
// W8: tile.num_warps = 8
// W8: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [4, 2], warp_tile = [32, 64], instr = [16, 8, 16]}>}
// NOWARP: module {
// NOWARP-NOT: tile.num_warps
// NOWARP-NOT: tiling =
// NOWARP: func.func @chained
func.func @matmul(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                  %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                  %C: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
                  %nk: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %pn = tile.bid 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x128xf32>) : i32 {
    %a = tile.load %A[%pm, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x32xf16>
    %b = tile.load %B[%k, %pn] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<32x128xf16>
    %r = tile.mma %a, %b, %acc0 : tensor<128x32xf16>, tensor<32x128xf16> -> tensor<128x128xf32>
    scf.yield %r : tensor<128x128xf32>
  }
  tile.store %C[%pm, %pn], %acc : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<128x128xf32>
  return
}

// -----

// The instruction shape follows the element types: tf32 steps k by 8, int8
// by 32; f32 without allow_tf32 and f64 run on FMA and get no tiling. Small
// tiles: 4 warps; a 64x64 tile splits 2x2 into 32x32 warp tiles.
// CHECK: tile.num_warps = 4
// CHECK-LABEL: func.func @kinds
// CHECK: tile.mma {{.*}} {allow_tf32, tiling = #tile.mma_tiling<{warps = [2, 2], warp_tile = [32, 32], instr = [16, 8, 8]}>}
// CHECK: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [2, 2], warp_tile = [32, 32], instr = [16, 8, 32]}>}
// CHECK: tile.mma %{{[^{]*}} : tensor<64x32xf32>, tensor<32x64xf32> -> tensor<64x64xf32>
// CHECK: tile.mma %{{[^{]*}} : tensor<64x16xf64>, tensor<16x64xf64> -> tensor<64x64xf64>
func.func @kinds(%a: tensor<64x32xf32>, %b: tensor<32x64xf32>, %c: tensor<64x64xf32>,
                 %ai: tensor<64x64xi8>, %bi: tensor<64x64xi8>, %ci: tensor<64x64xi32>,
                 %ad: tensor<64x16xf64>, %bd: tensor<16x64xf64>, %cd: tensor<64x64xf64>)
    -> (tensor<64x64xf32>, tensor<64x64xi32>, tensor<64x64xf32>, tensor<64x64xf64>) {
  %t = tile.mma %a, %b, %c {allow_tf32} : tensor<64x32xf32>, tensor<32x64xf32> -> tensor<64x64xf32>
  %i = tile.mma %ai, %bi, %ci : tensor<64x64xi8>, tensor<64x64xi8> -> tensor<64x64xi32>
  %f = tile.mma %a, %b, %c : tensor<64x32xf32>, tensor<32x64xf32> -> tensor<64x64xf32>
  %d = tile.mma %ad, %bd, %cd : tensor<64x16xf64>, tensor<16x64xf64> -> tensor<64x64xf64>
  return %t, %i, %f, %d : tensor<64x64xf32>, tensor<64x64xi32>, tensor<64x64xf32>, tensor<64x64xf64>
}

// -----

// Chained mmas (attention: P = softmax(Q K^T) feeds P V): warps along M
// only, so that P is already in each warp's registers; more warps than
// 16-row tiles replicate (warp tile 16 rows for 64 rows over 4 warps).
// A tile of 16x8 has one instruction tile: extra warps replicate it.
// CHECK: tile.num_warps = 4
// CHECK-LABEL: func.func @chained
// CHECK: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [4, 1], warp_tile = [16, 64], instr = [16, 8, 16]}>}
// CHECK: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [4, 1], warp_tile = [16, 64], instr = [16, 8, 16]}>}
// CHECK: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [1, 4], warp_tile = [16, 8], instr = [16, 8, 16]}>}
func.func @chained(%q: tensor<64x64xf16>, %kt: tensor<64x64xf16>, %v: tensor<64x64xf16>,
                   %x: tensor<16x16xf16>, %y: tensor<16x8xf16>)
    -> (tensor<64x64xf32>, tensor<16x8xf32>) {
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %s = tile.mma %q, %kt, %z : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  %p = math.exp %s : tensor<64x64xf32>
  %ph = arith.truncf %p : tensor<64x64xf32> to tensor<64x64xf16>
  %o = tile.mma %ph, %v, %z : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  %z2 = arith.constant dense<0.0> : tensor<16x8xf32>
  %w = tile.mma %x, %y, %z2 : tensor<16x16xf16>, tensor<16x8xf16> -> tensor<16x8xf32>
  return %o, %w : tensor<64x64xf32>, tensor<16x8xf32>
}

// -----

// A warp count the module already records (resuming from a dump) is kept.
// CHECK: tile.num_warps = 2
// CHECK: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [2, 1], warp_tile = [32, 64], instr = [16, 8, 16]}>}
// W8: tile.num_warps = 8
// W8: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [4, 2], warp_tile = [16, 32], instr = [16, 8, 16]}>}
module attributes {tile.num_warps = 2 : i32} {
  func.func @recorded(%a: tensor<64x16xf16>, %b: tensor<16x64xf16>, %c: tensor<64x64xf32>) -> tensor<64x64xf32> {
    %r = tile.mma %a, %b, %c : tensor<64x16xf16>, tensor<16x64xf16> -> tensor<64x64xf32>
    return %r : tensor<64x64xf32>
  }
}
