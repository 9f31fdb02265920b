// fp8 "TN" matmul on sm_90: A [128][K] and B^T [256][K] rows of bytes (u8
// codes viewed as fp8), B = transpose(B^T), both widened to f16 as the
// frontend writes an fp8 mma; {fast_accumulation} (use_fast_acc) allows the
// fp8 tensor cores, which accumulate with fewer bits than f32. tile-tiling
// narrows it back to fp8: both operands are K-major, so wgmma.m64n256k32 reads the fp8
// bytes from the cp.async ring, A and B alike in swizzled [rows][K] panels
// (128-byte for K = 128, 64-byte for K = 64), 32 bytes of K per instruction.
// REQUIRES: ptxas
// RUN: sed -e 's/F8/f8E4M3FN/g' -e 's/KK/128/g' %s > %t.e4m3.mlir
// RUN: tile-opt %t.e4m3.mlir --tile-tiling="warp-tiling=true warpgroup-mma=true" | FileCheck %s --check-prefix=TILED
// RUN: tile-opt %t.e4m3.mlir --tile-to-gpu="warpgroup-mma=true" | FileCheck %s --check-prefix=GPU128
// RUN: tile-opt %t.e4m3.mlir --tile-to-llvm-nvvm="warpgroup-mma=true" --tile-emit-ptx=output=%t.e4m3.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=E4M3 < %t.e4m3.ptx
// RUN: %ptxas -arch=sm_90a -v %t.e4m3.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: sed -e 's/F8/f8E5M2/g' -e 's/KK/64/g' %s > %t.e5m2.mlir
// RUN: tile-opt %t.e5m2.mlir --tile-to-gpu="warpgroup-mma=true" | FileCheck %s --check-prefix=GPU64
// RUN: tile-opt %t.e5m2.mlir --tile-to-llvm-nvvm="warpgroup-mma=true" --tile-emit-ptx=output=%t.e5m2.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=E5M2 < %t.e5m2.ptx
// RUN: %ptxas -arch=sm_90a -v %t.e5m2.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// fp8-typed arrays (torch's fp8 tensors) address their bytes (no LLVM fp8).
// RUN: sed -e 's/xi8/xF8/g' -e 's/F8/f8E4M3FN/g' -e 's/KK/128/g' %s > %t.arrays.mlir
// RUN: tile-opt %t.arrays.mlir --tile-to-llvm-nvvm="warpgroup-mma=true" --tile-emit-ptx=output=%t.arrays.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=E4M3 < %t.arrays.ptx
// Without wgmma the widened f16 mma stays (mma.sync); without the ring
// (pipelining by registers) the narrowed one is widened again.
// RUN: tile-opt %t.e4m3.mlir --tile-tiling="warp-tiling=true" | FileCheck %s --check-prefix=NOWG
// RUN: tile-opt %t.e4m3.mlir --tile-to-gpu="warpgroup-mma=true mma-pipelining=regs" | FileCheck %s --check-prefix=REGS

// TILED-NOT: arith.extf
// TILED: tile.mma {{.*}}instr = [64, 256, 32]{{.*}} : tensor<128x128xf8E4M3FN>, tensor<128x256xf8E4M3FN> -> tensor<128x256xf32>

// K = 128: 128-byte panels, A and B: high word mode 1 << 30 | 1024 >> 4,
// low word 16 >> 4 << 16.
// GPU128: tile.shared_mem = 196608
// GPU128-DAG: arith.constant 1073741888 : i32
// GPU128-DAG: arith.constant 65536 : i32
// GPU128: scf.for
// GPU128-COUNT-4: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 256, k = 32>, D[<f32>, <one>], A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
// GPU128-NEXT: nvvm.wgmma.commit.group.sync.aligned

// K = 64: 64-byte panels: high word mode 2 << 30 | 512 >> 4.
// GPU64: arith.constant -2147483616 : i32
// GPU64: scf.for
// GPU64-COUNT-2: nvvm.wgmma.mma_async {{.*}}, <m = 64, n = 256, k = 32>, D[<f32>, <one>], A[<e5m2>, <one>, <row>], B[<e5m2>, <one>, <col>]
// GPU64-NEXT: nvvm.wgmma.commit.group.sync.aligned

// E4M3: .target sm_90a
// E4M3-NOT: cvt.rn.f16x2
// E4M3-COUNT-4: wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3
// E4M3: wgmma.wait_group.sync.aligned 1;
// E5M2: .target sm_90a
// E5M2-NOT: cvt.rn.f16x2
// E5M2-COUNT-2: wgmma.mma_async.sync.aligned.m64n256k32.f32.e5m2.e5m2
// PTXAS-NOT: serialized
// PTXAS: 0 bytes spill stores, 0 bytes spill loads
// PTXAS-NOT: serialized

// REGS-NOT: nvvm.wgmma.mma_async
// REGS: nvvm.mma.sync {{.*}}shape = #nvvm.shape<m = 16, n = 8, k = 16>} : (vector<2xf16>, vector<2xf16>, f32)
// REGS-NOT: nvvm.wgmma.mma_async

// NOWG: arith.extf
// NOWG: tile.mma {{.*}}instr = [16, 8, 16]{{.*}} : tensor<128x128xf16>

func.func @matmul(%A: !tile.array<?x?xi8, strides = [?, 1], align = 16, div = 16>,
                  %B: !tile.array<?x?xi8, strides = [?, 1], align = 16, div = 16>,
                  %C: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
                  %nk: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %pn = tile.bid 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x256xf32>
  %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x256xf32>) : i32 {
    %a8 = tile.load %A[%pm, %k] : !tile.array<?x?xi8, strides = [?, 1], align = 16, div = 16> -> tensor<128xKKxi8>
    %a = arith.bitcast %a8 : tensor<128xKKxi8> to tensor<128xKKxF8>
    %bt8 = tile.load %B[%pn, %k] : !tile.array<?x?xi8, strides = [?, 1], align = 16, div = 16> -> tensor<256xKKxi8>
    %bt = arith.bitcast %bt8 : tensor<256xKKxi8> to tensor<256xKKxF8>
    %b = tile.permute %bt, [1, 0] : tensor<256xKKxF8> -> tensor<KKx256xF8>
    %ah = arith.extf %a : tensor<128xKKxF8> to tensor<128xKKxf16>
    %bh = arith.extf %b : tensor<KKx256xF8> to tensor<KKx256xf16>
    %r = tile.mma %ah, %bh, %acc0 {fast_accumulation} : tensor<128xKKxf16>, tensor<KKx256xf16> -> tensor<128x256xf32>
    scf.yield %r : tensor<128x256xf32>
  }
  tile.store %C[%pm, %pn], %acc : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<128x256xf32>
  return
}
