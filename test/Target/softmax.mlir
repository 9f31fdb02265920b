// Row softmax: one warp per row, reductions by warp shuffles only, exp as
// ex2.approx.
// REQUIRES: ptxas
// RUN: tile-opt %s --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// CHECK: .visible .entry softmax(
// CHECK: ld.global.v4.b32
// CHECK: shfl.sync.bfly.b32
// CHECK: ex2.approx.f32
// CHECK: shfl.sync.bfly.b32
// CHECK: st.global.v4.b32
// CHECK-NOT: bar.sync
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

module {
  func.func @softmax(%x: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
                     %o: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>) attributes {tile.kernel} {
    %i = tile.bid 0
    %c0 = arith.constant 0 : i32
    %a = tile.load %x[%i, %c0] {padding = 0xFF800000 : f32} : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<4x1024xf32>
    %m = tile.reduce(%a) axis = 1 : (tensor<4x1024xf32>) -> tensor<4xf32> {
    ^bb0(%p: f32, %q: f32):
      %r = arith.maximumf %p, %q : f32
      tile.yield %r : f32
    }
    %me = tile.expand_dims %m, 1 : tensor<4xf32> -> tensor<4x1xf32>
    %mb = tile.broadcast %me : tensor<4x1xf32> -> tensor<4x1024xf32>
    %d = arith.subf %a, %mb : tensor<4x1024xf32>
    %e = math.exp %d : tensor<4x1024xf32>
    %s = tile.reduce(%e) axis = 1 : (tensor<4x1024xf32>) -> tensor<4xf32> {
    ^bb0(%p: f32, %q: f32):
      %r = arith.addf %p, %q : f32
      tile.yield %r : f32
    }
    %se = tile.expand_dims %s, 1 : tensor<4xf32> -> tensor<4x1xf32>
    %sb = tile.broadcast %se : tensor<4x1xf32> -> tensor<4x1024xf32>
    %y = arith.divf %e, %sb : tensor<4x1024xf32>
    tile.store %o[%i, %c0], %y : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<4x1024xf32>
    return
  }
}
