// RUN: tile-opt %s --split-input-file --tile-map-threads | FileCheck %s
// RUN: tile-opt %s --split-input-file --tile-map-threads=num-warps=8 | FileCheck %s --check-prefix=W8

// Contiguous f32 tiles: 4 elements (16 bytes) per thread, 4 warps by default.
// CHECK: #[[$B:.*]] = #tile.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK: module attributes {tile.num_warps = 4 : i32}
// CHECK-LABEL: func.func @vadd
// CHECK: tile.load {{.*}} -> tensor<1024xf32, #[[$B]]>
// CHECK: arith.addf {{.*}} : tensor<1024xf32, #[[$B]]>
// CHECK-NOT: tile.convert_layout
// CHECK: tile.store {{.*}}, tensor<1024xf32, #[[$B]]>
// W8: #tile.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [8], order = [0]}>
// W8: tile.num_warps = 8
func.func @vadd(%x: !tile.array<?xf32, strides = [1], align = 16, div = 16>,
                %o: !tile.array<?xf32, strides = [1], align = 16, div = 16>) attributes {tile.kernel} {
  %i = tile.bid 0
  %a = tile.load %x[%i] : !tile.array<?xf32, strides = [1], align = 16, div = 16> -> tensor<1024xf32>
  %c = arith.addf %a, %a : tensor<1024xf32>
  tile.store %o[%i], %c : !tile.array<?xf32, strides = [1], align = 16, div = 16>, tensor<1024xf32>
  return
}

// -----

// Row softmax: warps stay off the reduced axis; the reduction's result has
// the slice layout, so expand_dims + broadcast need no conversion; the
// constant is recomputed in the layout its user needs.
// CHECK: #[[$B:.*]] = #tile.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK: #[[$S:.*]] = #tile.slice<{dim = 1, parent = #[[$B]]}>
// CHECK-LABEL: func.func @softmax
// CHECK: %[[X:.*]] = tile.load {{.*}} -> tensor<4x1024xf32, #[[$B]]>
// CHECK: tile.reduce(%[[X]]) axis = 1 : (tensor<4x1024xf32, #[[$B]]>) -> tensor<4xf32, #[[$S]]>
// CHECK: tile.expand_dims {{.*}} : tensor<4xf32, #[[$S]]> -> tensor<4x1xf32, #[[$B]]>
// CHECK: tile.broadcast {{.*}} : tensor<4x1xf32, #[[$B]]> -> tensor<4x1024xf32, #[[$B]]>
// CHECK: arith.constant dense<2.000000e+00> : tensor<4x1024xf32, #[[$B]]>
// CHECK-NOT: tile.convert_layout
func.func @softmax(%x: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
                   %o: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>) attributes {tile.kernel} {
  %i = tile.bid 0
  %c0 = arith.constant 0 : i32
  %a = tile.load %x[%i, %c0] : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<4x1024xf32>
  %m = tile.reduce(%a) axis = 1 : (tensor<4x1024xf32>) -> tensor<4xf32> {
  ^bb0(%p: f32, %q: f32):
    %r = arith.maximumf %p, %q : f32
    tile.yield %r : f32
  }
  %me = tile.expand_dims %m, 1 : tensor<4xf32> -> tensor<4x1xf32>
  %mb = tile.broadcast %me : tensor<4x1xf32> -> tensor<4x1024xf32>
  %d = arith.subf %a, %mb : tensor<4x1024xf32>
  %two = arith.constant dense<2.0> : tensor<4x1024xf32>
  %y = arith.mulf %d, %two : tensor<4x1024xf32>
  tile.store %o[%i, %c0], %y : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<4x1024xf32>
  return
}

// -----

// A 1-d load only used through expand_dims gets a layout equivalent to the
// slice of the 2-d tile's (no shared-memory conversion); f16 gets 8 elements
// (16 bytes) per thread.
// CHECK: #[[$B:.*]] = #tile.blocked<{sizePerThread = [1, 8], threadsPerWarp = [1, 32], warpsPerCTA = [1, 4], order = [1, 0]}>
// CHECK: #[[$B1:.*]] = #tile.blocked<{sizePerThread = [8], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-LABEL: func.func @row_scale
// CHECK: tile.load {{.*}} -> tensor<1x2048xf16, #[[$B]]>
// CHECK: tile.load {{.*}} -> tensor<2048xf16, #[[$B1]]>
// CHECK: tile.expand_dims {{.*}} : tensor<2048xf16, #[[$B1]]> -> tensor<1x2048xf16, #[[$B]]>
// CHECK-NOT: tile.convert_layout
func.func @row_scale(%x: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                     %w: !tile.array<?xf16, strides = [1], align = 16, div = 16>,
                     %o: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>) attributes {tile.kernel} {
  %i = tile.bid 0
  %c0 = arith.constant 0 : i32
  %a = tile.load %x[%i, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<1x2048xf16>
  %wt = tile.load %w[%c0] : !tile.array<?xf16, strides = [1], align = 16, div = 16> -> tensor<2048xf16>
  %we = tile.expand_dims %wt, 0 : tensor<2048xf16> -> tensor<1x2048xf16>
  %y = arith.mulf %a, %we : tensor<1x2048xf16>
  tile.store %o[%i, %c0], %y : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, tensor<1x2048xf16>
  return
}

// -----

// mma accumulates in the mma.sync fragment layout; the loop-carried
// accumulator (and its zero initial value) take the yield's layout.
// CHECK-DAG: #[[$A:.*]] = #tile.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [8, 1], order = [1, 0]}>
// CHECK-DAG: #[[$M:.*]] = #tile.mma<{version = 2, warpsPerCTA = [4, 2]}>
// CHECK: tile.num_warps = 8
// CHECK-LABEL: func.func @matmul
// CHECK: %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<128x128xf32, #[[$M]]>
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[Z]]) -> (tensor<128x128xf32, #[[$M]]>)
// CHECK: tile.load {{.*}} -> tensor<128x32xf16, #[[$A]]>
// CHECK: tile.mma {{.*}}, %[[ACC]] : {{.*}} -> tensor<128x128xf32, #[[$M]]>
// CHECK: scf.yield {{.*}} : tensor<128x128xf32, #[[$M]]>
// CHECK-NOT: tile.convert_layout
func.func @matmul(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                  %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                  %C: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
                  %nk: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %pn = tile.bid 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x128xf32>) : i32 {
    %a = tile.load %A[%pm, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x32xf16>
    %b = tile.load %B[%k, %pn] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<32x128xf16>
    %r = tile.mma %a, %b, %acc0 : tensor<128x32xf16>, tensor<32x128xf16> -> tensor<128x128xf32>
    scf.yield %r : tensor<128x128xf32>
  }
  tile.store %C[%pm, %pn], %acc : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<128x128xf32>
  return
}

// -----

// A transposing load keeps threads contiguous along the array's inner
// dimension (result axis 0 here).
// CHECK: #[[$T:.*]] = #tile.blocked<{sizePerThread = [4, 1], threadsPerWarp = [16, 2], warpsPerCTA = [1, 4], order = [0, 1]}>
// CHECK-LABEL: func.func @transpose
// CHECK: tile.load {{.*}} {order = array<i64: 1, 0>} {{.*}} -> tensor<64x32xf32, #[[$T]]>
// CHECK: tile.convert_layout {{.*}} : tensor<64x32xf32, #[[$T]]> -> tensor<64x32xf32, #{{.*}}>
func.func @transpose(%x: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
                     %o: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %a = tile.load %x[%c0, %c0] {order = array<i64: 1, 0>} : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<64x32xf32>
  %b = tile.load %o[%c0, %c0] : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<64x32xf32>
  %c = arith.addf %b, %a : tensor<64x32xf32>
  tile.store %o[%c0, %c0], %c : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<64x32xf32>
  return
}

// -----

// A row of per-column values loaded as (1, 64) and reshaped to (64,) for a
// column-wise update of an mma result is loaded in the slice of the mma
// layout it is used in: no conversion (through shared memory, with a
// barrier) next to the mma. A small load may take narrower accesses.
// CHECK-DAG: #[[$M:.*]] = #tile.mma<{version = 2, warpsPerCTA = [4, 2]}>
// CHECK-DAG: #[[$S:.*]] = #tile.slice<{dim = 0, parent = #[[$M]]}>
// CHECK-LABEL: func.func @column_update
// CHECK: tile.load %{{.*}} -> tensor<1x64xf32, #[[$M]]>
// CHECK: tile.reshape {{.*}} : tensor<1x64xf32, #[[$M]]> -> tensor<64xf32, #[[$S]]>
// CHECK-NOT: tile.convert_layout
func.func @column_update(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                         %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                         %r: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
                         %C: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>) attributes {tile.kernel} {
  %pm = tile.bid 0
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<128x64xf32>
  %a = tile.load %A[%pm, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x32xf16>
  %b = tile.load %B[%c0, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<32x64xf16>
  %s = tile.mma %a, %b, %zero : tensor<128x32xf16>, tensor<32x64xf16> -> tensor<128x64xf32>
  %row = tile.load %r[%pm, %c0] : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<1x64xf32>
  %flat = tile.reshape %row : tensor<1x64xf32> -> tensor<64xf32>
  %e = tile.expand_dims %flat, 0 : tensor<64xf32> -> tensor<1x64xf32>
  %bc = tile.broadcast %e : tensor<1x64xf32> -> tensor<128x64xf32>
  %d = arith.subf %s, %bc : tensor<128x64xf32>
  tile.store %C[%pm, %c0], %d : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<128x64xf32>
  return
}
