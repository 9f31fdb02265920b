// RUN: tile-opt %s | tile-opt | FileCheck %s
// RUN: tile-opt %s --mlir-print-op-generic | tile-opt | FileCheck %s

// Every op of the tile dialect, printed, re-parsed and printed again.

// CHECK-LABEL: func @queries
// CHECK-SAME: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>
func.func @queries(%a: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>) -> (i32, i32, i32, i32) {
  // CHECK: tile.bid 0
  %0 = tile.bid 0
  // CHECK: tile.num_blocks 2
  %1 = tile.num_blocks 2
  // CHECK: tile.dim %{{.*}}, 1 : !tile.array
  %2 = tile.dim %a, 1 : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>
  // CHECK: tile.stride %{{.*}}, 0 : !tile.array
  %3 = tile.stride %a, 0 : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>
  return %0, %1, %2, %3 : i32, i32, i32, i32
}

// CHECK-LABEL: func @static_array
// CHECK-SAME: !tile.array<64x32xi8, strides = [32, 1]>
func.func @static_array(%a: !tile.array<64x32xi8, strides = [32, 1]>) {
  return
}

// CHECK-LABEL: func @memory
func.func @memory(%a: !tile.array<?x?xf32>, %i: i32, %j: i32) {
  // CHECK: %[[T:.*]] = tile.load %{{.*}}[%{{.*}}, %{{.*}}] : !tile.array<?x?xf32> -> tensor<16x32xf32>
  %t = tile.load %a[%i, %j] : !tile.array<?x?xf32> -> tensor<16x32xf32>
  // CHECK: tile.load %{{.*}}[%{{.*}}, %{{.*}}] {order = array<i64: 1, 0>, padding = 0xFF800000 : f32} : !tile.array<?x?xf32> -> tensor<32x16xf32>
  %u = tile.load %a[%i, %j] {padding = 0xFF800000 : f32, order = array<i64: 1, 0>} : !tile.array<?x?xf32> -> tensor<32x16xf32>
  // CHECK: tile.store %{{.*}}[%{{.*}}, %{{.*}}], %[[T]] : !tile.array<?x?xf32>, tensor<16x32xf32>
  tile.store %a[%i, %j], %t : !tile.array<?x?xf32>, tensor<16x32xf32>
  return
}

// CHECK-LABEL: func @element_indexed
func.func @element_indexed(%a: !tile.array<?xf32>, %b: !tile.array<?xi32>,
                           %idx: tensor<64xi32>, %m: tensor<64xi1>,
                           %v: tensor<64xf32>, %w: tensor<64xi32>) {
  // CHECK: tile.gather %{{.*}}[%{{.*}}] : !tile.array<?xf32>[tensor<64xi32>] -> tensor<64xf32>
  %0 = tile.gather %a[%idx] : !tile.array<?xf32>[tensor<64xi32>] -> tensor<64xf32>
  // CHECK: tile.gather %{{.*}}[%{{.*}}] mask %{{.*}} other %{{.*}} : !tile.array<?xf32>[tensor<64xi32>] -> tensor<64xf32>
  %1 = tile.gather %a[%idx] mask %m other %v : !tile.array<?xf32>[tensor<64xi32>] -> tensor<64xf32>
  // CHECK: tile.scatter %{{.*}}[%{{.*}}], %{{.*}} : !tile.array<?xf32>[tensor<64xi32>], tensor<64xf32>
  tile.scatter %a[%idx], %v : !tile.array<?xf32>[tensor<64xi32>], tensor<64xf32>
  // CHECK: tile.scatter %{{.*}}[%{{.*}}], %{{.*}} mask %{{.*}} : !tile.array<?xf32>[tensor<64xi32>], tensor<64xf32>
  tile.scatter %a[%idx], %v mask %m : !tile.array<?xf32>[tensor<64xi32>], tensor<64xf32>
  // CHECK: tile.atomic_rmw add %{{.*}}[%{{.*}}], %{{.*}} : !tile.array<?xf32>[tensor<64xi32>], tensor<64xf32>
  %2 = tile.atomic_rmw add %a[%idx], %v : !tile.array<?xf32>[tensor<64xi32>], tensor<64xf32>
  // CHECK: tile.atomic_rmw max %{{.*}}[%{{.*}}], %{{.*}} mask %{{.*}} : !tile.array<?xi32>[tensor<64xi32>], tensor<64xi32>
  %3 = tile.atomic_rmw max %b[%idx], %w mask %m : !tile.array<?xi32>[tensor<64xi32>], tensor<64xi32>
  // CHECK: tile.atomic_rmw min
  %4 = tile.atomic_rmw min %b[%idx], %w : !tile.array<?xi32>[tensor<64xi32>], tensor<64xi32>
  // CHECK: tile.atomic_rmw xchg
  %5 = tile.atomic_rmw xchg %b[%idx], %w : !tile.array<?xi32>[tensor<64xi32>], tensor<64xi32>
  // CHECK: tile.atomic_rmw and
  %6 = tile.atomic_rmw and %b[%idx], %w : !tile.array<?xi32>[tensor<64xi32>], tensor<64xi32>
  // CHECK: tile.atomic_rmw or
  %7 = tile.atomic_rmw or %b[%idx], %w : !tile.array<?xi32>[tensor<64xi32>], tensor<64xi32>
  // CHECK: tile.atomic_rmw xor
  %8 = tile.atomic_rmw xor %b[%idx], %w : !tile.array<?xi32>[tensor<64xi32>], tensor<64xi32>
  // CHECK: tile.atomic_cas %{{.*}}[%{{.*}}], %{{.*}}, %{{.*}} : !tile.array<?xi32>[tensor<64xi32>], tensor<64xi32>
  %9 = tile.atomic_cas %b[%idx], %w, %w : !tile.array<?xi32>[tensor<64xi32>], tensor<64xi32>
  return
}

// CHECK-LABEL: func @compute
func.func @compute(%a: tensor<64x32xf16>, %b: tensor<32x128xf16>, %c: tensor<64x128xf32>,
                   %ba: tensor<2x16x8xf32>, %bb: tensor<2x8x16xf32>, %bc: tensor<2x16x16xf32>) {
  // CHECK: tile.mma %{{.*}}, %{{.*}}, %{{.*}} : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
  %0 = tile.mma %a, %b, %c : tensor<64x32xf16>, tensor<32x128xf16> -> tensor<64x128xf32>
  // CHECK: tile.mma %{{.*}}, %{{.*}}, %{{.*}} {allow_tf32} : tensor<2x16x8xf32>, tensor<2x8x16xf32> -> tensor<2x16x16xf32>
  %1 = tile.mma %ba, %bb, %bc {allow_tf32} : tensor<2x16x8xf32>, tensor<2x8x16xf32> -> tensor<2x16x16xf32>
  return
}

// CHECK-LABEL: func @reduce_scan
func.func @reduce_scan(%x: tensor<8x64xf32>, %i: tensor<8x64xi32>) {
  // CHECK: tile.reduce(%{{.*}}) axis = 1 : (tensor<8x64xf32>) -> tensor<8xf32>
  // CHECK: ^bb0(%{{.*}}: f32, %{{.*}}: f32):
  // CHECK: tile.yield %{{.*}} : f32
  %0 = tile.reduce(%x) axis = 1 : (tensor<8x64xf32>) -> tensor<8xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.addf %p, %q : f32
    tile.yield %s : f32
  }
  // Two tiles reduced together: (value, index) for argmax.
  // CHECK: tile.reduce(%{{.*}}, %{{.*}}) axis = 0 : (tensor<8x64xf32>, tensor<8x64xi32>) -> (tensor<64xf32>, tensor<64xi32>)
  %1:2 = tile.reduce(%x, %i) axis = 0 : (tensor<8x64xf32>, tensor<8x64xi32>) -> (tensor<64xf32>, tensor<64xi32>) {
  ^bb0(%v0: f32, %i0: i32, %v1: f32, %i1: i32):
    %gt = arith.cmpf ogt, %v1, %v0 : f32
    %v = arith.select %gt, %v1, %v0 : f32
    %k = arith.select %gt, %i1, %i0 : i32
    tile.yield %v, %k : f32, i32
  }
  // CHECK: tile.scan(%{{.*}}) axis = 1 attributes {reverse} : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %2 = tile.scan(%x) axis = 1 attributes {reverse} : (tensor<8x64xf32>) -> tensor<8x64xf32> {
  ^bb0(%p: f32, %q: f32):
    %s = arith.mulf %p, %q : f32
    tile.yield %s : f32
  }
  return
}

// CHECK-LABEL: func @shapes
func.func @shapes(%x: tensor<1x64xf32>, %y: tensor<64xf32>, %s: f32) {
  // CHECK: tile.broadcast %{{.*}} : tensor<1x64xf32> -> tensor<32x64xf32>
  %0 = tile.broadcast %x : tensor<1x64xf32> -> tensor<32x64xf32>
  // CHECK: tile.expand_dims %{{.*}}, 1 : tensor<64xf32> -> tensor<64x1xf32>
  %1 = tile.expand_dims %y, 1 : tensor<64xf32> -> tensor<64x1xf32>
  // CHECK: tile.reshape %{{.*}} : tensor<32x64xf32> -> tensor<2048xf32>
  %2 = tile.reshape %0 : tensor<32x64xf32> -> tensor<2048xf32>
  // CHECK: tile.permute %{{.*}}, [1, 0] : tensor<32x64xf32> -> tensor<64x32xf32>
  %3 = tile.permute %0, [1, 0] : tensor<32x64xf32> -> tensor<64x32xf32>
  // CHECK: tile.iota : tensor<128xi32>
  %4 = tile.iota : tensor<128xi32>
  // CHECK: tile.splat %{{.*}} : tensor<4x4xf32>
  %5 = tile.splat %s : tensor<4x4xf32>
  return
}

// CHECK-LABEL: func @debug
func.func @debug(%x: tensor<16xf32>, %c: tensor<16xi1>, %b: i1, %i: i32) {
  // CHECK: tile.print "x = " %{{.*}}, %{{.*}} : tensor<16xf32>, i32
  tile.print "x = " %x, %i : tensor<16xf32>, i32
  // CHECK: tile.print "here"
  tile.print "here"
  // CHECK: tile.assert %{{.*}}, "all positive" : tensor<16xi1>
  tile.assert %c, "all positive" : tensor<16xi1>
  // CHECK: tile.assert %{{.*}}, "scalar" : i1
  tile.assert %b, "scalar" : i1
  return
}

// A list argument of arrays indexed at run time.
// CHECK-LABEL: func @array_select
func.func @array_select(%i: i32, %j: i64, %a: !tile.array<?x?xf16, strides = [?, 1], align = 16>,
                        %b: !tile.array<?x?xf16, strides = [?, 1], align = 16>) {
  // CHECK: tile.array_select %{{.*}}, %{{.*}}, %{{.*}} : i32, !tile.array<?x?xf16, strides = [?, 1], align = 16>
  %0 = tile.array_select %i, %a, %b : i32, !tile.array<?x?xf16, strides = [?, 1], align = 16>
  // CHECK: tile.array_select %{{.*}}, %{{.*}} : i64, !tile.array<?x?xf16, strides = [?, 1], align = 16>
  %1 = tile.array_select %j, %b : i64, !tile.array<?x?xf16, strides = [?, 1], align = 16>
  %c0 = arith.constant 0 : i32
  %t = tile.load %0[%c0, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16> -> tensor<16x16xf16>
  tile.store %1[%c0, %c0], %t : !tile.array<?x?xf16, strides = [?, 1], align = 16>, tensor<16x16xf16>
  return
}
