// tile-stage-stores never grows a kernel's shared memory (ab41302). Two
// mma loops one after the other, each with 2-slot cp.async rings of A
// [128][40] and B [32][136] f16 (37888 bytes, live together), whose bytes
// tile-allocate-shared lets the second loop reuse: the kernel takes 37888
// bytes. The sum of all dead ring bytes at the store (75776) would admit
// the f32 result's 69632-byte staging buffer, growing the kernel to 69632;
// no more than one loop's rings were ever live together, so the store is
// left as it is.
// RUN: tile-opt %s --tile-to-gpu=num-stages=2 | FileCheck %s

// CHECK-NOT: stage_layout
// CHECK: tile.shared_mem = 37888

func.func @two_loops(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                     %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                     %C: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
                     %nk: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %pn = tile.bid 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %acc1 = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x128xf32>) : i32 {
    %a = tile.load %A[%pm, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x32xf16>
    %b = tile.load %B[%k, %pn] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<32x128xf16>
    %r = tile.mma %a, %b, %acc0 : tensor<128x32xf16>, tensor<32x128xf16> -> tensor<128x128xf32>
    scf.yield %r : tensor<128x128xf32>
  }
  %acc2 = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %acc1) -> (tensor<128x128xf32>) : i32 {
    %a = tile.load %A[%pn, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x32xf16>
    %b = tile.load %B[%k, %pm] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<32x128xf16>
    %r = tile.mma %a, %b, %acc0 : tensor<128x32xf16>, tensor<32x128xf16> -> tensor<128x128xf32>
    scf.yield %r : tensor<128x128xf32>
  }
  tile.store %C[%pm, %pn], %acc2 : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<128x128xf32>
  return
}
