// Gather/scatter with masks, atomics, a scan, an argmax (two-tile reduce to
// rank 0), permute, reshape and tensor.extract all reach valid PTX.
// REQUIRES: ptxas
// RUN: tile-opt %s --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// CHECK: .visible .entry misc(
// CHECK: ld.global.v4.b32
// CHECK: @%p{{[0-9]+}} ld.global.b32
// CHECK: bar.sync
// CHECK: shfl.sync.bfly.b32
// CHECK: @%p{{[0-9]+}} st.global.b32
// CHECK: atom.global.add.u32
// CHECK: atom{{.*}}.cas.b32
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

module {
  func.func @misc(%x: !tile.array<?xf32, strides = [1], align = 16, div = 16>,
                  %idx: !tile.array<?xi32, strides = [1], align = 16, div = 16>,
                  %o: !tile.array<?xf32, strides = [1], align = 16, div = 16>,
                  %m: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
                  %cnt: !tile.array<?xi32, strides = [1], align = 16, div = 16>,
                  %n: i32) attributes {tile.kernel} {
    %i = tile.bid 0
    %c0 = arith.constant 0 : i32
    %ix = tile.load %idx[%i] : !tile.array<?xi32, strides = [1], align = 16, div = 16> -> tensor<256xi32>
    %nn = tile.splat %n : tensor<256xi32>
    %mask = arith.cmpi slt, %ix, %nn : tensor<256xi32>
    %g = tile.gather %x[%ix] mask %mask : !tile.array<?xf32, strides = [1], align = 16, div = 16>[tensor<256xi32>] -> tensor<256xf32>
    %cs = tile.scan(%g) axis = 0 : (tensor<256xf32>) -> tensor<256xf32> {
    ^bb0(%p: f32, %q: f32):
      %r = arith.addf %p, %q : f32
      tile.yield %r : f32
    }
    %io = tile.iota : tensor<256xi32>
    %am:2 = tile.reduce(%cs, %io) axis = 0 : (tensor<256xf32>, tensor<256xi32>) -> (tensor<f32>, tensor<i32>) {
    ^bb0(%v0: f32, %i0: i32, %v1: f32, %i1: i32):
      %gt = arith.cmpf ogt, %v1, %v0 : f32
      %v = arith.select %gt, %v1, %v0 : f32
      %ii = arith.select %gt, %i1, %i0 : i32
      tile.yield %v, %ii : f32, i32
    }
    tile.scatter %o[%ix], %cs mask %mask : !tile.array<?xf32, strides = [1], align = 16, div = 16>[tensor<256xi32>], tensor<256xf32>
    %ones = arith.constant dense<1> : tensor<256xi32>
    %old = tile.atomic_rmw add %cnt[%ix], %ones mask %mask : !tile.array<?xi32, strides = [1], align = 16, div = 16>[tensor<256xi32>], tensor<256xi32>
    %fa = tile.atomic_rmw max %o[%ix], %g : !tile.array<?xf32, strides = [1], align = 16, div = 16>[tensor<256xi32>], tensor<256xf32>
    %cas = tile.atomic_cas %cnt[%ix], %old, %ones : !tile.array<?xi32, strides = [1], align = 16, div = 16>[tensor<256xi32>], tensor<256xi32>
    %t = tile.load %m[%i, %c0] : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<32x64xf32>
    %tp = tile.permute %t, [1, 0] : tensor<32x64xf32> -> tensor<64x32xf32>
    %rs = tile.reshape %tp : tensor<64x32xf32> -> tensor<32x64xf32>
    %ams = tensor.extract %am#0[] : tensor<f32>
    %amb = tile.splat %ams : tensor<32x64xf32>
    %sum = arith.addf %rs, %amb : tensor<32x64xf32>
    tile.store %m[%i, %c0], %sum : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<32x64xf32>
    %ce = tile.expand_dims %cas, 0 : tensor<256xi32> -> tensor<1x256xi32>
    %cr = tile.reshape %ce : tensor<1x256xi32> -> tensor<256xi32>
    tile.store %cnt[%i], %cr : !tile.array<?xi32, strides = [1], align = 16, div = 16>, tensor<256xi32>
    return
  }
}
