// RUN: tile-opt %s --split-input-file --tile-tiling="warpgroup-mma=true" | FileCheck %s
// RUN: tile-opt %s --split-input-file --tile-tiling | FileCheck %s --check-prefix=SYNC

// An f16 -> f32 matmul loop with 128x256x64 tiles on sm_90: 8 warps (two
// warpgroups), warps along M only, one m64n256k16 instruction shape.
// Without warpgroup-mma the same loop gets the mma.sync tiling.
// CHECK: tile.num_warps = 8
// CHECK-LABEL: func.func @matmul
// CHECK: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 256], instr = [64, 256, 16]}>}
// SYNC-LABEL: func.func @matmul
// SYNC: instr = [16, 8, 16]
func.func @matmul(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                  %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                  %C: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
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
  tile.store %C[%pm, %pn], %acc : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<128x256xf32>
  return
}

// -----

// A 64-row bf16 tile is one warpgroup: 4 warps.
// CHECK: tile.num_warps = 4
// CHECK-LABEL: func.func @rows64
// CHECK: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [4, 1], warp_tile = [16, 128], instr = [64, 128, 16]}>}
func.func @rows64(%A: !tile.array<?x?xbf16, strides = [?, 1], align = 16, div = 16>,
                  %B: !tile.array<?x?xbf16, strides = [?, 1], align = 16, div = 16>,
                  %nk: i32) -> tensor<64x128xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<64x128xf32>
  %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<64x128xf32>) : i32 {
    %a = tile.load %A[%c0, %k] : !tile.array<?x?xbf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x64xbf16>
    %b = tile.load %B[%k, %c0] : !tile.array<?x?xbf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x128xbf16>
    %r = tile.mma %a, %b, %acc0 : tensor<64x64xbf16>, tensor<64x128xbf16> -> tensor<64x128xf32>
    scf.yield %r : tensor<64x128xf32>
  }
  return %acc : tensor<64x128xf32>
}

// -----

// What wgmma cannot take keeps mma.sync: N of 32, an f16 accumulator,
// operands that are not loaded in the loop; and then every mma of that loop
// (their operands share one ring), the K = 32 one (which alone would take
// 64-byte swizzled panels, see @k32) included.
// CHECK-LABEL: func.func @others
// CHECK-COUNT-4: instr = [16, 8, 16]
func.func @others(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                  %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                  %a2: tensor<128x64xf16>, %b2: tensor<64x128xf16>, %nk: i32)
    -> (tensor<128x128xf32>, tensor<128x32xf32>, tensor<128x128xf16>, tensor<128x128xf32>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %z = arith.constant dense<0.0> : tensor<128x128xf32>
  %z32 = arith.constant dense<0.0> : tensor<128x32xf32>
  %zh = arith.constant dense<0.0> : tensor<128x128xf16>
  %r:4 = scf.for %k = %c0 to %nk step %c1 iter_args(%x = %z, %y = %z32, %w = %zh, %v = %z)
      -> (tensor<128x128xf32>, tensor<128x32xf32>, tensor<128x128xf16>, tensor<128x128xf32>) : i32 {
    %a = tile.load %A[%c0, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x32xf16>
    %b = tile.load %B[%k, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<32x128xf16>
    %x2 = tile.mma %a, %b, %x : tensor<128x32xf16>, tensor<32x128xf16> -> tensor<128x128xf32>
    %a64 = tile.load %A[%c0, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x64xf16>
    %b32 = tile.load %B[%k, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x32xf16>
    %y2 = tile.mma %a64, %b32, %y : tensor<128x64xf16>, tensor<64x32xf16> -> tensor<128x32xf32>
    %a64h = tile.load %A[%c0, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x64xf16>
    %b64h = tile.load %B[%k, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x128xf16>
    %w2 = tile.mma %a64h, %b64h, %w : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf16>
    %v2 = tile.mma %a2, %b2, %v : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %x2, %y2, %w2, %v2 : tensor<128x128xf32>, tensor<128x32xf32>, tensor<128x128xf16>, tensor<128x128xf32>
  }
  return %r#0, %r#1, %r#2, %r#3 : tensor<128x128xf32>, tensor<128x32xf32>, tensor<128x128xf16>, tensor<128x128xf32>
}

// -----

// Attention's chained mmas (Q loop-invariant, K^T and V loaded in the loop,
// P from the first mma): both get warpgroup tilings.
// CHECK-LABEL: func.func @attention
// CHECK: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 64], instr = [64, 64, 16]}>}
// CHECK: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 128], instr = [64, 128, 16]}>}
func.func @attention(%K: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                     %V: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                     %q: tensor<128x128xf16>, %n: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zs = arith.constant dense<0.0> : tensor<128x64xf32>
  %zo = arith.constant dense<0.0> : tensor<128x128xf32>
  %o = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zo) -> (tensor<128x128xf32>) : i32 {
    %k = tile.load %K[%j, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x128xf16>
    %kt = tile.permute %k, [1, 0] : tensor<64x128xf16> -> tensor<128x64xf16>
    %s = tile.mma %q, %kt, %zs : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
    %p = math.exp %s : tensor<128x64xf32>
    %ph = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xf16>
    %v = tile.load %V[%j, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x128xf16>
    %r = tile.mma %ph, %v, %acc : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %r : tensor<128x128xf32>
  }
  return %o : tensor<128x128xf32>
}

// -----

// K = 32: A's rows are 64 bytes, one 64-byte swizzle panel.
// CHECK-LABEL: func.func @k32
// CHECK: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 256], instr = [64, 256, 16]}>}
func.func @k32(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
               %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
               %nk: i32) -> tensor<128x256xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x256xf32>) : i32 {
    %a = tile.load %A[%c0, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x32xf16>
    %b = tile.load %B[%k, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<32x256xf16>
    %r = tile.mma %a, %b, %acc0 : tensor<128x32xf16>, tensor<32x256xf16> -> tensor<128x256xf32>
    scf.yield %r : tensor<128x256xf32>
  }
  return %acc : tensor<128x256xf32>
}

// -----

// tf32 and int8: wgmma reads them only K-major, so B must be the transpose
// of a loaded N x K block (the TN layout): 32 bytes of K per instruction,
// m64n256k8 for tf32, m64n256k32 for int8.
// CHECK-LABEL: func.func @tf32_tn
// CHECK: tile.mma {{.*}} {allow_tf32, tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 256], instr = [64, 256, 8]}>}
// CHECK-LABEL: func.func @int8_tn
// CHECK: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 256], instr = [64, 256, 32]}>}
// SYNC-LABEL: func.func @tf32_tn
// SYNC: instr = [16, 8, 8]
// SYNC-LABEL: func.func @int8_tn
// SYNC: instr = [16, 8, 32]
func.func @tf32_tn(%A: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
                   %Bt: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
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

func.func @int8_tn(%A: !tile.array<?x?xi8, strides = [?, 1], align = 16, div = 16>,
                   %Bt: !tile.array<?x?xi8, strides = [?, 1], align = 16, div = 16>,
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

// -----

// tf32 with B not transposed (N-major): no wgmma takes it; mma.sync.
// CHECK-LABEL: func.func @tf32_nn
// CHECK: instr = [16, 8, 8]
func.func @tf32_nn(%A: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
                   %B: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
                   %C: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
                   %nk: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %pn = tile.bid 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x128xf32>) : i32 {
    %a = tile.load %A[%pm, %k] : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<128x32xf32>
    %b = tile.load %B[%k, %pn] : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<32x128xf32>
    %r = tile.mma %a, %b, %acc0 {allow_tf32} : tensor<128x32xf32>, tensor<32x128xf32> -> tensor<128x128xf32>
    scf.yield %r : tensor<128x128xf32>
  }
  tile.store %C[%pm, %pn], %acc : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<128x128xf32>
  return
}
