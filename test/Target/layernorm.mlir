// Layernorm over a 2048-wide f16 row: 8 halves per 16-byte load, shuffles
// then shared memory across the four warps of the row.
// REQUIRES: ptxas
// RUN: tile-opt %s --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// CHECK: .visible .entry layernorm(
// CHECK: ld.global.v4.b32
// CHECK: shfl.sync.bfly.b32
// CHECK: bar.sync
// CHECK: st.shared
// CHECK: bar.sync
// CHECK: ld.shared
// CHECK: rsqrt.approx.f32
// CHECK: st.global.v4.b32
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

module {
  func.func @layernorm(%x: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                       %w: !tile.array<?xf32, strides = [1], align = 16, div = 16>,
                       %b: !tile.array<?xf32, strides = [1], align = 16, div = 16>,
                       %o: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                       %eps: f32) attributes {tile.kernel} {
    %i = tile.bid 0
    %c0 = arith.constant 0 : i32
    %xh = tile.load %x[%i, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<1x2048xf16>
    %a = arith.extf %xh : tensor<1x2048xf16> to tensor<1x2048xf32>
    %s = tile.reduce(%a) axis = 1 : (tensor<1x2048xf32>) -> tensor<1xf32> {
    ^bb0(%p: f32, %q: f32):
      %r = arith.addf %p, %q : f32
      tile.yield %r : f32
    }
    %n = arith.constant dense<2048.0> : tensor<1xf32>
    %mean = arith.divf %s, %n : tensor<1xf32>
    %me = tile.expand_dims %mean, 1 : tensor<1xf32> -> tensor<1x1xf32>
    %mb = tile.broadcast %me : tensor<1x1xf32> -> tensor<1x2048xf32>
    %d = arith.subf %a, %mb : tensor<1x2048xf32>
    %d2 = arith.mulf %d, %d : tensor<1x2048xf32>
    %v = tile.reduce(%d2) axis = 1 : (tensor<1x2048xf32>) -> tensor<1xf32> {
    ^bb0(%p: f32, %q: f32):
      %r = arith.addf %p, %q : f32
      tile.yield %r : f32
    }
    %var = arith.divf %v, %n : tensor<1xf32>
    %epst = tile.splat %eps : tensor<1xf32>
    %ve = arith.addf %var, %epst : tensor<1xf32>
    %rs = math.rsqrt %ve : tensor<1xf32>
    %re = tile.expand_dims %rs, 1 : tensor<1xf32> -> tensor<1x1xf32>
    %rb = tile.broadcast %re : tensor<1x1xf32> -> tensor<1x2048xf32>
    %y0 = arith.mulf %d, %rb : tensor<1x2048xf32>
    %wt = tile.load %w[%c0] : !tile.array<?xf32, strides = [1], align = 16, div = 16> -> tensor<2048xf32>
    %bt = tile.load %b[%c0] : !tile.array<?xf32, strides = [1], align = 16, div = 16> -> tensor<2048xf32>
    %we = tile.expand_dims %wt, 0 : tensor<2048xf32> -> tensor<1x2048xf32>
    %be = tile.expand_dims %bt, 0 : tensor<2048xf32> -> tensor<1x2048xf32>
    %y1 = math.fma %y0, %we, %be : tensor<1x2048xf32>
    %yh = arith.truncf %y1 : tensor<1x2048xf32> to tensor<1x2048xf16>
    tile.store %o[%i, %c0], %yh : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, tensor<1x2048xf16>
    return
  }
}
