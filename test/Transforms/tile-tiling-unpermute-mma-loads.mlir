// RUN: tile-opt %s --split-input-file --tile-tiling="warpgroup-mma=true" | FileCheck %s

// K^T loaded with `order` (cuTile's transposed load, as the attention
// example writes it) becomes the plain load of K's block, the reshape
// dropping its unit dimension, and the 2-d transpose, which the warpgroup
// tiling reads through: both mmas get wgmma tilings (instr [64, N, 16]).
// Left as the order load, the loop stayed on mma.sync (instr [16, 8, 16]).
// CHECK-LABEL: func.func @attention_order_load
// CHECK: scf.for
// CHECK: %[[K:.*]] = tile.load %{{.*}}[%{{.*}}, %{{.*}}, %{{.*}}] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x64x128xf16>
// CHECK-NOT: order
// CHECK: %[[K2:.*]] = tile.reshape %[[K]] : tensor<1x64x128xf16> -> tensor<64x128xf16>
// CHECK: %[[KT:.*]] = tile.permute %[[K2]], [1, 0] : tensor<64x128xf16> -> tensor<128x64xf16>
// CHECK: tile.mma %{{.*}}, %[[KT]], %{{.*}} {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 64], instr = [64, 64, 16]}>}
// CHECK: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 128], instr = [64, 128, 16]}>}
func.func @attention_order_load(%K: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>, %V: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>, %q: tensor<128x128xf16>, %h: i32, %n: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zs = arith.constant dense<0.0> : tensor<128x64xf32>
  %zo = arith.constant dense<0.0> : tensor<128x128xf32>
  %o = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zo) -> (tensor<128x128xf32>) : i32 {
    %k = tile.load %K[%h, %j, %c0] {order = array<i64: 0, 2, 1>} : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x128x64xf16>
    %kt = tile.reshape %k : tensor<1x128x64xf16> -> tensor<128x64xf16>
    %s = tile.mma %q, %kt, %zs : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
    %p = math.exp %s : tensor<128x64xf32>
    %ph = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xf16>
    %v3 = tile.load %V[%h, %j, %c0] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x64x128xf16>
    %v = tile.reshape %v3 : tensor<1x64x128xf16> -> tensor<64x128xf16>
    %r = tile.mma %ph, %v, %acc : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %r : tensor<128x128xf32>
  }
  return %o : tensor<128x128xf32>
}

// -----

// A transposed load nothing but an elementwise op reads keeps its order
// (the thread mapping lays it out for coalesced reads).
// CHECK-LABEL: func.func @order_load_not_for_an_mma
// CHECK: tile.load {{.*}} {order = array<i64: 1, 0>}
// CHECK-NOT: tile.permute
func.func @order_load_not_for_an_mma(%X: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>) -> tensor<64x32xf32> {
  %c0 = arith.constant 0 : i32
  %x = tile.load %X[%c0, %c0] {order = array<i64: 1, 0>} : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<64x32xf32>
  %y = math.exp %x : tensor<64x32xf32>
  return %y : tensor<64x32xf32>
}

// -----

// A transposed A keeps its order: the warpgroup tiling would not take it
// either way, and mma.sync stages the order load as it is.
// CHECK-LABEL: func.func @transposed_a
// CHECK: tile.load {{.*}} {order = array<i64: 1, 0>}
// CHECK-NOT: tile.permute
func.func @transposed_a(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %n: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %z = arith.constant dense<0.0> : tensor<128x128xf32>
  %o = scf.for %k = %c0 to %n step %c1 iter_args(%acc = %z) -> (tensor<128x128xf32>) : i32 {
    %a = tile.load %A[%k, %c0] {order = array<i64: 1, 0>} : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x64xf16>
    %b = tile.load %B[%k, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x128xf16>
    %r = tile.mma %a, %b, %acc : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %r : tensor<128x128xf32>
  }
  return %o : tensor<128x128xf32>
}

// -----

// A 2-d transposed B (K^T of a 2-d K): the plain load and the transpose.
// CHECK-LABEL: func.func @order_load_2d
// CHECK: %[[K:.*]] = tile.load %{{.*}}[%{{.*}}, %{{.*}}] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x128xf16>
// CHECK: %[[KT:.*]] = tile.permute %[[K]], [1, 0] : tensor<64x128xf16> -> tensor<128x64xf16>
// CHECK: tile.mma %{{.*}}, %[[KT]], %{{.*}} {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 64], instr = [64, 64, 16]}>}
func.func @order_load_2d(%K: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %q: tensor<128x128xf16>, %n: i32) -> tensor<128x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zs = arith.constant dense<0.0> : tensor<128x64xf32>
  %o = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zs) -> (tensor<128x64xf32>) : i32 {
    %kt = tile.load %K[%j, %c0] {order = array<i64: 1, 0>} : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x64xf16>
    %s = tile.mma %q, %kt, %acc : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
    scf.yield %s : tensor<128x64xf32>
  }
  return %o : tensor<128x64xf32>
}
