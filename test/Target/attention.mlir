// Flash-attention forward (bench/kernels.py attention, causal, BM=128,
// BN=64, D=128): the two mmas are chained, so both take warps along M
// only and P stays in registers (no layout conversion); Q's fragments are
// read once before the loop; K and V arrive through a 3-stage cp.async ring
// (K as B^T for non-transposing ldmatrix, V for ldmatrix.trans), one
// barrier per iteration; the (1, N, D) loads reshape for free.
// REQUIRES: ptxas
// RUN: tile-opt %s --tile-map-threads | FileCheck %s --check-prefix=MAP
// RUN: tile-opt %s --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: tile-opt %s --tile-to-llvm-nvvm=mma-pipelining=regs --tile-emit-ptx=output=%t.regs.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=REGS < %t.regs.ptx
// RUN: %ptxas -arch=sm_90 %t.regs.ptx -o %t.regs.cubin
// RUN: tile-opt %s --pass-pipeline="builtin.module(tile-map-threads,convert-tile-to-gpu)" | FileCheck %s --check-prefix=NOPF
// RUN: tile-opt %s --tile-to-llvm-nvvm="warpgroup-mma=true" --tile-emit-ptx=output=%t.wg.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=WG < %t.wg.ptx
// RUN: %ptxas -arch=sm_90a -v %t.wg.ptx -o %t.wg.cubin 2>&1 | FileCheck %s --check-prefix=WGPTXAS

// sm_90 (warpgroup-mma): the same loop on wgmma with A from registers
// (Q's fragments, then P), B from a 3-slot swizzled ring made visible to
// the async proxy: S = Q K^T as m64n64k16 with K-major B (trans-b 0), O += P V
// as m64n128k16 with N-major B (trans-b 1), each waited for before the
// softmax or the next iteration reads it.
// WG: .target sm_90a
// WG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// WG: cp.async.wait_group 1;
// WG-NEXT: fence.proxy.async.shared::cta;
// WG-NEXT: bar.sync 0;
// WG: wgmma.fence.sync.aligned;
// WG-COUNT-8: wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {{.*}}, p, 1, 1, 0;
// WG: wgmma.commit_group.sync.aligned;
// WG-NEXT: // begin inline asm
// WG-NEXT: wgmma.wait_group.sync.aligned 0;
// WG: shfl.sync.bfly
// WG: wgmma.fence.sync.aligned;
// WG-COUNT-4: wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {{.*}}, p, 1, 1, 1;
// WG: wgmma.commit_group.sync.aligned;
// WG-NEXT: // begin inline asm
// WG-NEXT: wgmma.wait_group.sync.aligned 0;
// WG-NOT: mma.sync
// WGPTXAS-NOT: serialized
// WGPTXAS: 0 bytes spill stores, 0 bytes spill loads

// MAP: #tile.mma<{version = 2, warpsPerCTA = [8, 1]}>
// MAP-NOT: tile.convert_layout
// MAP: tile.mma {{.*}} : tensor<128x64xf16, #mma>, tensor<64x128xf16, #blocked{{[0-9]*}}> -> tensor<128x128xf32, #mma>

// CHECK: .visible .entry attention(
// CHECK: ld.global.v4.b32
// CHECK-COUNT-2: cp.async.commit_group
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: cp.async.wait_group 1
// CHECK-NEXT: bar.sync 0
// CHECK-NOT: bar.sync
// CHECK: cp.async.commit_group
// CHECK-NOT: bar.sync
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-NOT: bar.sync
// CHECK: shfl.sync.bfly
// CHECK-NOT: bar.sync
// CHECK: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK: cp.async.wait_group 0
// REGS-NOT: ld.global.b16
// REGS: ld.global.v4.b32
// REGS: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// REGS: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// REGS: shfl.sync.bfly
// REGS: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

// Without prefetching, the loop carries only m, l and the accumulator.
// NOPF: scf.for {{.*}} -> (vector<{{[0-9]+}}xf32>, vector<64xf32>, vector<{{[0-9]+}}xf32>)

module {
  func.func @attention(%q: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>, %k: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>, %v: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>, %o: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>, %scale: f32) attributes {tile.kernel} {
    %1 = tile.bid 0
    %2 = tile.bid 1
    %3 = arith.constant 0 : i32
    %4 = tile.load %q[%2, %1, %3] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x128x128xf16>
    %5 = tile.reshape %4 : tensor<1x128x128xf16> -> tensor<128x128xf16>
    %6 = arith.constant dense<0xFF800000> : tensor<128xf32>
    %7 = arith.constant dense<0.0> : tensor<128xf32>
    %8 = arith.constant dense<0.0> : tensor<128x128xf32>
    %9 = tile.dim %k, 1 : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>
    %10 = arith.constant 64 : i32
    %11 = arith.floordivsi %9, %10 : i32
    %12 = arith.constant 1 : i32
    %13 = arith.addi %1, %12 : i32
    %14 = arith.constant 128 : i32
    %15 = arith.muli %13, %14 : i32
    %16 = arith.floordivsi %15, %10 : i32
    %17 = arith.muli %1, %14 : i32
    %18 = tile.iota : tensor<128xi32>
    %19 = tile.splat %17 : tensor<128xi32>
    %20 = arith.addi %19, %18 : tensor<128xi32>
    %110:3 = scf.for %64 = %3 to %16 step %12 iter_args(%65 = %7, %66 = %8, %67 = %6) -> (tensor<128xf32>, tensor<128x128xf32>, tensor<128xf32>) : i32 {
      %68 = tile.load %k[%2, %64, %3] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x64x128xf16>
      %69 = tile.reshape %68 : tensor<1x64x128xf16> -> tensor<64x128xf16>
      %70 = tile.load %v[%2, %64, %3] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x64x128xf16>
      %71 = tile.reshape %70 : tensor<1x64x128xf16> -> tensor<64x128xf16>
      %72 = tile.permute %69, [1, 0] : tensor<64x128xf16> -> tensor<128x64xf16>
      %73 = arith.constant dense<0.0> : tensor<128x64xf32>
      %74 = tile.mma %5, %72, %73 : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
      %75 = tile.splat %scale : tensor<128x64xf32>
      %76 = arith.mulf %74, %75 : tensor<128x64xf32>
      %77 = arith.muli %64, %10 : i32
      %78 = tile.iota : tensor<64xi32>
      %79 = tile.splat %77 : tensor<64xi32>
      %80 = arith.addi %79, %78 : tensor<64xi32>
      %81 = tile.expand_dims %20, 1 : tensor<128xi32> -> tensor<128x1xi32>
      %82 = tile.expand_dims %80, 0 : tensor<64xi32> -> tensor<1x64xi32>
      %83 = tile.broadcast %81 : tensor<128x1xi32> -> tensor<128x64xi32>
      %84 = tile.broadcast %82 : tensor<1x64xi32> -> tensor<128x64xi32>
      %85 = arith.cmpi sge, %83, %84 : tensor<128x64xi32>
      %86 = arith.constant dense<0xFF800000> : tensor<128x64xf32>
      %87 = arith.select %85, %76, %86 : tensor<128x64xi1>, tensor<128x64xf32>
      %91 = tile.reduce(%87) axis = 1 : (tensor<128x64xf32>) -> tensor<128xf32> {
        ^bb0(%88: f32, %89: f32):
        %90 = arith.maximumf %88, %89 : f32
        tile.yield %90 : f32
      }
      %92 = arith.maximumf %67, %91 : tensor<128xf32>
      %93 = tile.expand_dims %92, 1 : tensor<128xf32> -> tensor<128x1xf32>
      %94 = tile.broadcast %93 : tensor<128x1xf32> -> tensor<128x64xf32>
      %95 = arith.subf %87, %94 : tensor<128x64xf32>
      %96 = math.exp %95 : tensor<128x64xf32>
      %97 = arith.subf %67, %92 : tensor<128xf32>
      %98 = math.exp %97 : tensor<128xf32>
      %99 = arith.mulf %65, %98 : tensor<128xf32>
      %103 = tile.reduce(%96) axis = 1 : (tensor<128x64xf32>) -> tensor<128xf32> {
        ^bb0(%100: f32, %101: f32):
        %102 = arith.addf %100, %101 : f32
        tile.yield %102 : f32
      }
      %104 = arith.addf %99, %103 : tensor<128xf32>
      %105 = arith.truncf %96 : tensor<128x64xf32> to tensor<128x64xf16>
      %106 = tile.expand_dims %98, 1 : tensor<128xf32> -> tensor<128x1xf32>
      %107 = tile.broadcast %106 : tensor<128x1xf32> -> tensor<128x128xf32>
      %108 = arith.mulf %66, %107 : tensor<128x128xf32>
      %109 = tile.mma %105, %71, %108 : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
      scf.yield %104, %109, %92 : tensor<128xf32>, tensor<128x128xf32>, tensor<128xf32>
    }
    %111 = tile.expand_dims %110#0, 1 : tensor<128xf32> -> tensor<128x1xf32>
    %112 = tile.broadcast %111 : tensor<128x1xf32> -> tensor<128x128xf32>
    %113 = arith.divf %110#1, %112 : tensor<128x128xf32>
    %114 = tile.reshape %113 : tensor<128x128xf32> -> tensor<1x128x128xf32>
    %115 = arith.truncf %114 : tensor<1x128x128xf32> to tensor<1x128x128xf16>
    tile.store %o[%2, %1, %3], %115 : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16>, tensor<1x128x128xf16>
    return
  }
}
