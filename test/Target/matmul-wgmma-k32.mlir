// 128x256x32 f16 matmul on sm_90: A's rows are 64 bytes, so A sits in
// 64-byte swizzled panels (descriptor mode 2, 8-row groups 512 bytes apart)
// while B keeps 128-byte ones; 24 KB slots, 4 of them; two
// wgmma.m64n256k16 per iteration and warpgroup.
// REQUIRES: ptxas
// RUN: tile-opt %s --tile-to-gpu="warpgroup-mma=true" | FileCheck %s --check-prefix=GPU
// RUN: tile-opt %s --tile-to-llvm-nvvm="warpgroup-mma=true" --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// GPU: tile.shared_mem = 98304
// Descriptors, high word (a constant joined to the low one at each use):
// A: mode 2 (64B) << 30 | 512 >> 4; low word: 16 >> 4 << 16.
// GPU-DAG: arith.constant -2147483616 : i32
// GPU-DAG: arith.constant 65536 : i32
// B: mode 1 (128B) << 30 | 1024 >> 4; low word: (32 x 128) >> 4 << 16.
// GPU-DAG: arith.constant 1073741888 : i32
// GPU-DAG: arith.constant 16777216 : i32
// GPU: scf.for
// GPU-COUNT-2: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 256, k = 16>
// GPU-NEXT: nvvm.wgmma.commit.group.sync.aligned

// CHECK: .target sm_90a
// CHECK-COUNT-2: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16
// CHECK: wgmma.wait_group.sync.aligned 1;
// PTXAS-NOT: serialized
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: serialized
func.func @matmul(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                  %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                  %C: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                  %nk: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %pn = tile.bid 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x256xf32>) : i32 {
    %a = tile.load %A[%pm, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x32xf16>
    %b = tile.load %B[%k, %pn] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<32x256xf16>
    %r = tile.mma %a, %b, %acc0 : tensor<128x32xf16>, tensor<32x256xf16> -> tensor<128x256xf32>
    scf.yield %r : tensor<128x256xf32>
  }
  %h = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xf16>
  tile.store %C[%pm, %pn], %h : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, tensor<128x256xf16>
  return
}
