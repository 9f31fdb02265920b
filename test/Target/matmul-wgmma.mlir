// 128x256x64 f16 matmul on sm_90: two warpgroups, A and B in a 4-slot
// cp.async ring of 128-byte swizzled panels (48 KB a slot), one
// wgmma.m64n256k16 per 16 of K per warpgroup, one wgmma group in flight
// across iterations.
// REQUIRES: ptxas
// RUN: tile-opt %s --tile-to-gpu="warpgroup-mma=true" | FileCheck %s --check-prefix=GPU
// RUN: tile-opt %s --tile-to-llvm-nvvm="warpgroup-mma=true" --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// GPU: gpu.module @tile_kernels attributes {tile.num_warps = 8 : i32, tile.shared_mem = 196608 : i32}
// GPU: @tile_shared() {addr_space = 3 : i32, alignment = 1024 : i64}
// Prologue: iterations 0 and 1 (two commit groups), swizzled chunks.
// GPU: arith.xori
// GPU: nvvm.cp.async.shared.global
// GPU: nvvm.cp.async.commit.group
// GPU: nvvm.cp.async.commit.group
// GPU: scf.for
// GPU: nvvm.cp.async.wait.group 1
// GPU-NEXT: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// GPU-NEXT: gpu.barrier
// GPU: nvvm.cp.async.commit.group
// GPU: nvvm.wgmma.fence.aligned
// GPU-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 256, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <row>]
// GPU-NEXT: nvvm.wgmma.commit.group.sync.aligned
// GPU-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// After the loop, the accumulators pass through the final wait, so that
// nothing reads them before the last wgmma is done (ptxas would otherwise
// serialize the wgmmas).
// GPU: scf.yield
// GPU: tile.ptx.wgmma_wait %{{.*}}, %{{.*}} pending = 0 : f32, f32,
// GPU: nvvm.cp.async.wait.group 0
// GPU-NEXT: gpu.barrier

// CHECK: .target sm_90a
// CHECK: .visible .entry matmul(
// CHECK: .maxntid 256, 1, 1
// CHECK-NOT: .minnctapersm
// CHECK: cp.async.wait_group 1;
// CHECK-NEXT: fence.proxy.async.shared::cta;
// CHECK-NEXT: bar.sync 0;
// CHECK: wgmma.fence.sync.aligned;
// CHECK-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 1;
// CHECK: wgmma.wait_group.sync.aligned 0;
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
    %a = tile.load %A[%pm, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x64xf16>
    %b = tile.load %B[%k, %pn] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x256xf16>
    %r = tile.mma %a, %b, %acc0 : tensor<128x64xf16>, tensor<64x256xf16> -> tensor<128x256xf32>
    scf.yield %r : tensor<128x256xf32>
  }
  %h = arith.truncf %acc : tensor<128x256xf32> to tensor<128x256xf16>
  tile.store %C[%pm, %pn], %h : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, tensor<128x256xf16>
  return
}
