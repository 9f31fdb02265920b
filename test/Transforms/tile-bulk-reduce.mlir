// RUN: tile-opt %s --split-input-file --tile-tiling="warp-tiling=true warpgroup-mma=true staged-operands=true" --tile-map-threads --tile-pipeline-mma=mma-pipelining=tma --tile-bulk-reduce | FileCheck %s

// The fused backward's dQ: dQ^T = K^T dS^T (a warpgroup mma, 128 rows of
// the head dimension by 64 queries) added into an f32 array by relaxed
// atomics, ACC[h, q0 + j, d] for element (d, j). tile-bulk-reduce makes it
// a bulk reduction: a buffer of the accumulator's size before the loop, a
// tensor map of 1 x 64 x 32 boxes (32 f32 of d, 128-byte swizzled), the
// coordinates innermost first (d from 0, q from the loop's start, h), the
// tile's rows along the inner dimension, q the outer; a bulk_wait after the
// loop.
// CHECK-LABEL: func.func @dq
// CHECK-SAME: %[[MAP:arg[0-9]+]]: !tilegpu.tensor_map<1x64x32xf32, swizzle = 128> {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 2>}
// CHECK: %[[BUF:.*]] = tilegpu.alloc_shared : !tilegpu.shared<128x64xf32, slots = 1, swizzle = 128>
// CHECK: scf.for
// CHECK-NOT: tile.atomic_rmw
// CHECK: tilegpu.bulk_reduce_add %{{.*}} through %[[BUF]] into %[[MAP]][%c0_i32{{.*}}, %{{.*}}, %0] {inner_axis = 0 : i64, outer_dim = 1 : i64}
// CHECK: }
// CHECK-NEXT: tilegpu.bulk_wait %[[BUF]]
func.func @dq(%K: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok},
              %Q: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok},
              %ACC: !tile.array<?x?x?xf32, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok},
              %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %bh = tile.bid 1
  %kb = tile.bid 0
  %zs = arith.constant dense<0.0> : tensor<128x64xf32>
  %zq = arith.constant dense<0.0> : tensor<64x128xf32>
  %k3 = tile.load %K[%bh, %kb, %c0] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x128x128xf16>
  %k = tile.reshape %k3 : tensor<1x128x128xf16> -> tensor<128x128xf16>
  %dims = tile.iota : tensor<128xi32>
  scf.for %i = %c0 to %n step %c1 : i32 {
    %q3 = tile.load %Q[%bh, %i, %c0] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x64x128xf16>
    %q = tile.reshape %q3 : tensor<1x64x128xf16> -> tensor<64x128xf16>
    %qt = tile.permute %q, [1, 0] : tensor<64x128xf16> -> tensor<128x64xf16>
    %st = tile.mma %k, %qt, %zs : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
    %ds = arith.truncf %st : tensor<128x64xf32> to tensor<128x64xf16>
    %dst = tile.permute %ds, [1, 0] : tensor<128x64xf16> -> tensor<64x128xf16>
    %dq = tile.mma %dst, %k, %zq : tensor<64x128xf16>, tensor<128x128xf16> -> tensor<64x128xf32>
    %first = arith.muli %i, %c64 : i32
    %iota = tile.iota : tensor<64xi32>
    %base = tile.splat %first : tensor<64xi32>
    %rows = arith.addi %base, %iota : tensor<64xi32>
    %r2 = tile.expand_dims %rows, 1 : tensor<64xi32> -> tensor<64x1xi32>
    %c2 = tile.expand_dims %dims, 0 : tensor<128xi32> -> tensor<1x128xi32>
    %h = tile.splat %bh : tensor<64x128xi32>
    %r = tile.broadcast %r2 : tensor<64x1xi32> -> tensor<64x128xi32>
    %c = tile.broadcast %c2 : tensor<1x128xi32> -> tensor<64x128xi32>
    %old = tile.atomic_rmw add %ACC[%h, %r, %c], %dq {memory_order = #tile.memory_order<relaxed>, memory_scope = #tile.memory_scope<device>} : !tile.array<?x?x?xf32, strides = [?, ?, 1], align = 16, div = 16>[tensor<64x128xi32>, tensor<64x128xi32>, tensor<64x128xi32>], tensor<64x128xf32>
  }
  return
}

// -----

// Left alone: a masked update (the mask is per element), and an array
// TMA was not shown to describe (no tile.tma_ok).
// CHECK-LABEL: func.func @masked
// CHECK-NOT: tilegpu.bulk_reduce_add
// CHECK: tile.atomic_rmw add
// CHECK-NOT: tilegpu.bulk_reduce_add
// CHECK: tile.atomic_rmw add
// CHECK-NOT: tilegpu.bulk_wait
func.func @masked(%K: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok},
                  %Q: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok},
                  %ACC: !tile.array<?x?x?xf32, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok},
                  %ACC2: !tile.array<?x?x?xf32, strides = [?, ?, 1], align = 16, div = 16>,
                  %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %bh = tile.bid 1
  %kb = tile.bid 0
  %zs = arith.constant dense<0.0> : tensor<128x64xf32>
  %zq = arith.constant dense<0.0> : tensor<64x128xf32>
  %k3 = tile.load %K[%bh, %kb, %c0] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x128x128xf16>
  %k = tile.reshape %k3 : tensor<1x128x128xf16> -> tensor<128x128xf16>
  %dims = tile.iota : tensor<128xi32>
  scf.for %i = %c0 to %n step %c1 : i32 {
    %q3 = tile.load %Q[%bh, %i, %c0] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x64x128xf16>
    %q = tile.reshape %q3 : tensor<1x64x128xf16> -> tensor<64x128xf16>
    %qt = tile.permute %q, [1, 0] : tensor<64x128xf16> -> tensor<128x64xf16>
    %st = tile.mma %k, %qt, %zs : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
    %ds = arith.truncf %st : tensor<128x64xf32> to tensor<128x64xf16>
    %dst = tile.permute %ds, [1, 0] : tensor<128x64xf16> -> tensor<64x128xf16>
    %dq = tile.mma %dst, %k, %zq : tensor<64x128xf16>, tensor<128x128xf16> -> tensor<64x128xf32>
    %iota = tile.iota : tensor<64xi32>
    %r2 = tile.expand_dims %iota, 1 : tensor<64xi32> -> tensor<64x1xi32>
    %c2 = tile.expand_dims %dims, 0 : tensor<128xi32> -> tensor<1x128xi32>
    %h = tile.splat %bh : tensor<64x128xi32>
    %r = tile.broadcast %r2 : tensor<64x1xi32> -> tensor<64x128xi32>
    %c = tile.broadcast %c2 : tensor<1x128xi32> -> tensor<64x128xi32>
    %lim = tile.splat %n : tensor<64x128xi32>
    %m = arith.cmpi slt, %r, %lim : tensor<64x128xi32>
    %old = tile.atomic_rmw add %ACC[%h, %r, %c], %dq mask %m {memory_order = #tile.memory_order<relaxed>, memory_scope = #tile.memory_scope<device>} : !tile.array<?x?x?xf32, strides = [?, ?, 1], align = 16, div = 16>[tensor<64x128xi32>, tensor<64x128xi32>, tensor<64x128xi32>], tensor<64x128xf32>
    %old2 = tile.atomic_rmw add %ACC2[%h, %r, %c], %dq {memory_order = #tile.memory_order<relaxed>, memory_scope = #tile.memory_scope<device>} : !tile.array<?x?x?xf32, strides = [?, ?, 1], align = 16, div = 16>[tensor<64x128xi32>, tensor<64x128xi32>, tensor<64x128xi32>], tensor<64x128xf32>
  }
  return
}
