// fp8 attention's two mmas (examples/flash_attention_fp8.py, reduced to the
// mmas): S = Q K^T with Q loaded in front of the loop and K^T by an `order`
// load, P = S rounded to e4m3, acc += P V with V given transposed (V^T's
// block permuted). The frontend widens fp8 mma operands to f16; with
// {fast_accumulation} tile-tiling narrows both back to fp8 wgmmas (k32):
// Q's A from shared memory, P's from registers (the chained mma), both Bs
// K-major (the order load becomes load + permute first). tile-pipeline-mma
// then streams K and V^T through TMA rings typed as the mmas read them
// (u8 codes viewed as e4m3 by a bitcast).
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true num-warps=8" | FileCheck %s --check-prefix=TILED
// RUN: tile-opt %s --tile-tiling="warp-tiling=true warpgroup-mma=true num-warps=8" --tile-map-threads --tile-pipeline-mma=mma-pipelining=tma | FileCheck %s --check-prefix=RING
// Without fast accumulation both stay f16 mmas of the widened operands.
// RUN: sed -e 's/{fast_accumulation}//' %s | tile-opt --tile-tiling="warp-tiling=true warpgroup-mma=true num-warps=8" | FileCheck %s --check-prefix=EXACT

// TILED-NOT: arith.extf
// TILED: tile.mma {{.*}}instr = [64, 128, 32]{{.*}} : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
// TILED: arith.truncf {{.*}} to tensor<128x128xf8E4M3FN>
// TILED: tile.mma {{.*}}instr = [64, 128, 32]{{.*}} : tensor<128x128xf8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>

// RING-DAG: tilegpu.alloc_shared : !tilegpu.shared<128x128xf8E4M3FN, slots = {{[0-9]}}, swizzle = 128>
// RING-DAG: tilegpu.tma_load {{.*}} : !tilegpu.tensor_map<1x128x128xf8E4M3FN, swizzle = 128>
// RING: scf.for
// RING: tilegpu.mma {{.*}}b_transposed{{.*}}instr = [64, 128, 32]
// RING: tilegpu.mma {{.*}}b_transposed{{.*}}instr = [64, 128, 32]

// EXACT-NOT: f8E4M3FN>, tensor<128x128xf8E4M3FN> -> tensor<128x128xf32>
// EXACT: tile.mma {{.*}} : tensor<128x128xf16>, tensor<128x128xf16> -> tensor<128x128xf32>

!u8 = !tile.array<?x?x?xi8, strides = [?, ?, 1], align = 16, div = 16>
!f16 = !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>
func.func @attention_fp8_mmas(%q: !u8 {tile.tma_ok}, %k: !u8 {tile.tma_ok}, %vt: !u8 {tile.tma_ok},
                              %out: !f16 {tile.tma_ok}, %n: i32) attributes {tile.kernel} {
  %qb = tile.bid 0
  %bh = tile.bid 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %qload = tile.load %q[%bh, %qb, %c0] : !u8 -> tensor<1x128x128xi8>
  %q2 = tile.reshape %qload : tensor<1x128x128xi8> -> tensor<128x128xi8>
  %q8 = arith.bitcast %q2 : tensor<128x128xi8> to tensor<128x128xf8E4M3FN>
  %zero = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
  %acc = scf.for %j = %c0 to %n step %c1 iter_args(%a = %zero) -> (tensor<128x128xf32>) : i32 {
    %kt = tile.load %k[%bh, %j, %c0] {order = array<i64: 0, 2, 1>} : !u8 -> tensor<1x128x128xi8>
    %kt2 = tile.reshape %kt : tensor<1x128x128xi8> -> tensor<128x128xi8>
    %kt8 = arith.bitcast %kt2 : tensor<128x128xi8> to tensor<128x128xf8E4M3FN>
    %vload = tile.load %vt[%bh, %c0, %j] : !u8 -> tensor<1x128x128xi8>
    %vt2 = tile.reshape %vload : tensor<1x128x128xi8> -> tensor<128x128xi8>
    %vt8 = arith.bitcast %vt2 : tensor<128x128xi8> to tensor<128x128xf8E4M3FN>
    %qw = arith.extf %q8 : tensor<128x128xf8E4M3FN> to tensor<128x128xf16>
    %kw = arith.extf %kt8 : tensor<128x128xf8E4M3FN> to tensor<128x128xf16>
    %s = tile.mma %qw, %kw, %zero {fast_accumulation} : tensor<128x128xf16>, tensor<128x128xf16> -> tensor<128x128xf32>
    %p8 = arith.truncf %s : tensor<128x128xf32> to tensor<128x128xf8E4M3FN>
    %v8 = tile.permute %vt8, [1, 0] : tensor<128x128xf8E4M3FN> -> tensor<128x128xf8E4M3FN>
    %pw = arith.extf %p8 : tensor<128x128xf8E4M3FN> to tensor<128x128xf16>
    %vw = arith.extf %v8 : tensor<128x128xf8E4M3FN> to tensor<128x128xf16>
    %pv = tile.mma %pw, %vw, %zero {fast_accumulation} : tensor<128x128xf16>, tensor<128x128xf16> -> tensor<128x128xf32>
    %sum = arith.addf %a, %pv : tensor<128x128xf32>
    scf.yield %sum : tensor<128x128xf32>
  }
  %o = arith.truncf %acc : tensor<128x128xf32> to tensor<128x128xf16>
  %o3 = tile.reshape %o : tensor<128x128xf16> -> tensor<1x128x128xf16>
  tile.store %out[%bh, %qb, %c0], %o3 : !f16, tensor<1x128x128xf16>
  return
}
