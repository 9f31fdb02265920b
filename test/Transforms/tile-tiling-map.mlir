// RUN: tile-opt %s --tile-map-threads | FileCheck %s
// RUN: tile-opt %s --tile-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: not tile-opt %s --tile-map-threads=num-warps=8 2>&1 | FileCheck %s --check-prefix=ERR

// tile-map-threads takes the warp count and each mma's warp grid from what
// tile-tiling recorded: here 1x4 warps, where it would choose 2x2 itself.
// The lowering then gives each warp 64x16 of the tile: 4 x 2 mma.sync per
// k step, 2 k steps of 16.
// CHECK: #[[$M:.*]] = #tile.mma<{version = 2, warpsPerCTA = [1, 4]}>
// CHECK: tile.num_warps = 4
// CHECK: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [1, 4], warp_tile = [64, 16], instr = [16, 8, 16]}>} : {{.*}} -> tensor<64x64xf32, #[[$M]]>
// GPU: tile.num_warps = 4
// GPU-COUNT-16: nvvm.mma.sync
// GPU-NOT: nvvm.mma.sync
// ERR: error: 'tile.mma' op was tiled for 4 warps, but num_warps is 8
!A = !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>
!C = !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>
module attributes {tile.num_warps = 4 : i32} {
  func.func @mm(%a: !A, %b: !A, %c: !C) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %x = tile.load %a[%c0, %c0] : !A -> tensor<64x32xf16>
    %y = tile.load %b[%c0, %c0] : !A -> tensor<32x64xf16>
    %z = arith.constant dense<0.0> : tensor<64x64xf32>
    %r = tile.mma %x, %y, %z {tiling = #tile.mma_tiling<{warps = [1, 4], warp_tile = [64, 16], instr = [16, 8, 16]}>} : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
    tile.store %c[%c0, %c0], %r : !C, tensor<64x64xf32>
    return
  }
}
