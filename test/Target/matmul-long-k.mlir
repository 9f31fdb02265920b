// The example matmul with K tiles of 4096 (issue 13, item 13): f16 arrays
// whose extents are not multiples of 16 (K = 200 is ragged) took ~170 s and
// 2.6 GB in ptxas on sm_90, the mma unrolled over all of K (2048 mma.sync
// and as many masked loads per thread). tile-tiling splits it into a loop
// of K = 64 chunks: the PTX holds one chunk's instructions (32 mma.sync for
// 4 warps of 16x64) whatever K is, and aligned arrays keep the wgmma ring.
// REQUIRES: ptxas
// RUN: tile-opt %s --tile-to-llvm-nvvm="warpgroup-mma=true" --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: grep -c "mma.sync.aligned.m16n8k16" %t.ptx | FileCheck %s --check-prefix=MMAS
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: sed -e 's/, div = 16>/, align = 16, div = 16>/g' -e 's/strides = \[?, 1\]>/strides = [?, 1], align = 16, div = 16>/g' %s > %t.aligned.mlir
// RUN: tile-opt %t.aligned.mlir --tile-to-llvm-nvvm="warpgroup-mma=true" --tile-emit-ptx=output=%t.wg.ptx -o /dev/null
// RUN: grep -c "wgmma.mma_async" %t.wg.ptx | FileCheck %s --check-prefix=WGMMAS
// RUN: %ptxas -arch=sm_90a %t.wg.ptx -o %t.wg.cubin

// MMAS: {{^}}32{{$}}
// WGMMAS: {{^}}4{{$}}
module {
  func.func @matmul(%A: !tile.array<?x?xf16, strides = [?, 1]>,
                    %B: !tile.array<?x?xf16, strides = [?, 1]>,
                    %C: !tile.array<?x?xf32, strides = [?, 1], div = 16>,
                    %K: i32) attributes {tile.kernel} {
    %pm = tile.bid 0
    %pn = tile.bid 1
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %bk = arith.constant 4096 : i32
    %nk = arith.ceildivsi %K, %bk : i32
    %zero = arith.constant dense<0.0> : tensor<64x64xf32>
    %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<64x64xf32>) : i32 {
      %a = tile.load %A[%pm, %k] : !tile.array<?x?xf16, strides = [?, 1]> -> tensor<64x4096xf16>
      %b = tile.load %B[%k, %pn] : !tile.array<?x?xf16, strides = [?, 1]> -> tensor<4096x64xf16>
      %r = tile.mma %a, %b, %acc0 : tensor<64x4096xf16>, tensor<4096x64xf16> -> tensor<64x64xf32>
      scf.yield %r : tensor<64x64xf32>
    }
    tile.store %C[%pm, %pn], %acc : !tile.array<?x?xf32, strides = [?, 1], div = 16>, tensor<64x64xf32>
    return
  }
}
