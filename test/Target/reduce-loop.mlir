// A row sum of 32768 f32 (sum of squares of an f16 row): tile-tiling turns
// it into a loop over 4 chunks of 8192, so each thread keeps one chunk's
// share in registers; the chunk is reduced by shuffles once, after the loop.
// REQUIRES: ptxas
// RUN: tile-opt %s --tile-to-gpu | FileCheck %s --check-prefix=GPU
// RUN: tile-opt %s --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// GPU: tile.num_warps = 8
// GPU: scf.for {{.*}} iter_args({{.*}}) -> (vector<32xf32>)
// GPU: tile.ptx.ld_global
// GPU: scf.yield
// GPU: gpu.shuffle xor
// CHECK: .visible .entry row_sum(
// CHECK: ld.global.v4.b32
// CHECK: bra {{\$L__BB[0-9_]+}};
// CHECK: shfl.sync.bfly.b32
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

module {
  func.func @row_sum(%x: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                     %o: !tile.array<?xf32, strides = [1], align = 16, div = 16>) attributes {tile.kernel} {
    %i = tile.bid 0
    %c0 = arith.constant 0 : i32
    %a = tile.load %x[%i, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<1x32768xf16>
    %f = arith.extf %a : tensor<1x32768xf16> to tensor<1x32768xf32>
    %sq = arith.mulf %f, %f : tensor<1x32768xf32>
    %s = tile.reduce(%sq) axis = 1 : (tensor<1x32768xf32>) -> tensor<1xf32> {
    ^bb0(%p: f32, %q: f32):
      %r = arith.addf %p, %q : f32
      tile.yield %r : f32
    }
    tile.store %o[%i], %s : !tile.array<?xf32, strides = [1], align = 16, div = 16>, tensor<1xf32>
    return
  }
}
