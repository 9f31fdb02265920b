// 128x256x64 f16 matmul on sm_90 with TMA rings (mma-pipelining=tma): the
// tensor maps are the kernel's last two parameters, 128-byte 64-byte-aligned
// grid constants used in place; thread 0 expects each slot's 48 KB and
// issues five box copies per iteration (A's 128x64 block is one panel, B's
// 64x256 block four, 8 KB apart, at inner coordinates 64 apart); every
// thread waits on the slot's mbarrier with the phase parity, no cp.async
// and no per-element bounds. Assembles for sm_90a with no spills.
// REQUIRES: ptxas
// RUN: tile-opt %s --tile-to-gpu="warpgroup-mma=true mma-pipelining=tma" | FileCheck %s --check-prefix=GPU
// RUN: tile-opt %s --tile-to-llvm-nvvm="warpgroup-mma=true mma-pipelining=tma" --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS

// GPU: gpu.func @matmul({{.*}}, %[[AMAP:[^:]*]]: !llvm.ptr, %[[BMAP:[^:]*]]: !llvm.ptr) kernel attributes {{{.*}}tile.grid_constant_args = array<i32: 16, 17>
// GPU-NOT: nvvm.cp.async.shared.global
// GPU: nvvm.mbarrier.init
// GPU: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %{{.*}} : !llvm.ptr<3>, i32
// GPU: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[AMAP]], %{{.*}}, box[%{{.*}}, %{{.*}}]
// GPU-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[BMAP]], %{{.*}}, box[%{{.*}}, %{{.*}}]
// GPU: scf.for
// GPU: nvvm.mbarrier.try_wait.parity
// GPU: gpu.barrier
// GPU: nvvm.wgmma.fence.aligned
// GPU-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 256, k = 16>
// GPU: tile.ptx.wgmma_wait
// GPU: nvvm.mbarrier.inval
// GPU-NOT: nvvm.cp.async.shared.global

// CHECK: .target sm_90a
// CHECK: .visible .entry matmul(
// CHECK: .param .align 64 .b8 matmul_param_16[128],
// CHECK-NEXT: .param .align 64 .b8 matmul_param_17[128]
// CHECK-NOT: cp.async.cg
// CHECK: mbarrier.init.shared.b64 [tile_shared+196608]
// CHECK: mbarrier.arrive.expect_tx.shared.b64 %{{rd[0-9]+}}, [tile_shared+196608], %{{r[0-9]+}};
// CHECK-COUNT-5: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%{{r[0-9]+}}], [%{{rd[0-9]+}}, {%{{r[0-9]+}}, %{{r[0-9]+}}}], [tile_shared+196608];
// The loop's blocks as NVPTX lays them out: the mma, then the wait at the
// loop's head, then the copies ahead.
// CHECK: wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16
// CHECK: mbarrier.try_wait.parity.shared.b64
// CHECK: bar.sync 0;
// CHECK: mbarrier.arrive.expect_tx.shared.b64
// CHECK-COUNT-5: cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK: mbarrier.inval.shared.b64 [tile_shared+196608];
// CHECK-NOT: cp.async.cg

// PTXAS: 0 bytes spill stores, 0 bytes spill loads

func.func @matmul(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                  %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
                  %C: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> {tile.tma_ok},
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
