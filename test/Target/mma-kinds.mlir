// Every tile.mma dtype: tensor cores for f16 (f32 or f16 accumulator),
// bf16, tf32 (allow_tf32) and int8; FMA for f32 without tf32 and f64.
// REQUIRES: ptxas
// RUN: sed -e 's/IN/f16/g' -e 's/ACC/f32/g' -e 's/KK/32/g' -e 's/ATTR//' -e 's/ZERO/0.0/' %s > %t.f16.mlir
// RUN: tile-opt %t.f16.mlir --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.f16.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=F16 < %t.f16.ptx && %ptxas -arch=sm_90 %t.f16.ptx -o %t.cubin
// RUN: sed -e 's/IN/f16/g' -e 's/ACC/f16/g' -e 's/KK/32/g' -e 's/ATTR//' -e 's/ZERO/0.0/' %s > %t.h.mlir
// RUN: tile-opt %t.h.mlir --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.h.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=F16 < %t.h.ptx && %ptxas -arch=sm_90 %t.h.ptx -o %t.cubin
// RUN: sed -e 's/IN/bf16/g' -e 's/ACC/f32/g' -e 's/KK/32/g' -e 's/ATTR//' -e 's/ZERO/0.0/' %s > %t.bf16.mlir
// RUN: tile-opt %t.bf16.mlir --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.bf16.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=BF16 < %t.bf16.ptx && %ptxas -arch=sm_90 %t.bf16.ptx -o %t.cubin
// RUN: sed -e 's/IN/f32/g' -e 's/ACC/f32/g' -e 's/KK/32/g' -e 's/ATTR/{allow_tf32}/' -e 's/ZERO/0.0/' %s > %t.tf32.mlir
// RUN: tile-opt %t.tf32.mlir --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.tf32.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=TF32 < %t.tf32.ptx && %ptxas -arch=sm_90 %t.tf32.ptx -o %t.cubin
// RUN: sed -e 's/IN/i8/g' -e 's/ACC/i32/g' -e 's/KK/64/g' -e 's/ATTR//' -e 's/ZERO/0/' %s > %t.i8.mlir
// RUN: tile-opt %t.i8.mlir --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.i8.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=I8 < %t.i8.ptx && %ptxas -arch=sm_90 %t.i8.ptx -o %t.cubin
// RUN: sed -e 's/IN/f32/g' -e 's/ACC/f32/g' -e 's/KK/32/g' -e 's/ATTR//' -e 's/ZERO/0.0/' %s > %t.f32.mlir
// RUN: tile-opt %t.f32.mlir --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.f32.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=FMA32 < %t.f32.ptx && %ptxas -arch=sm_90 %t.f32.ptx -o %t.cubin
// RUN: sed -e 's/IN/f64/g' -e 's/ACC/f64/g' -e 's/KK/16/g' -e 's/ATTR//' -e 's/ZERO/0.0/' %s > %t.f64.mlir
// RUN: tile-opt %t.f64.mlir --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.f64.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=FMA64 < %t.f64.ptx && %ptxas -arch=sm_90 %t.f64.ptx -o %t.cubin

// F16: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// BF16: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// TF32: cvt.rna.tf32.f32
// TF32: mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32
// I8: mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32
// FMA32-NOT: mma.sync
// FMA32: fma.rn.f32
// FMA64-NOT: mma.sync
// FMA64: fma.rn.f64

func.func @mm(%A: !tile.array<?x?xIN, strides = [?, 1], align = 16, div = 16>,
              %B: !tile.array<?x?xIN, strides = [?, 1], align = 16, div = 16>,
              %C: !tile.array<?x?xACC, strides = [?, 1], align = 16, div = 16>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %a = tile.load %A[%c0, %c0] : !tile.array<?x?xIN, strides = [?, 1], align = 16, div = 16> -> tensor<64xKKxIN>
  %b = tile.load %B[%c0, %c0] : !tile.array<?x?xIN, strides = [?, 1], align = 16, div = 16> -> tensor<KKx64xIN>
  %z = arith.constant dense<ZERO> : tensor<64x64xACC>
  %c = tile.mma %a, %b, %z ATTR : tensor<64xKKxIN>, tensor<KKx64xIN> -> tensor<64x64xACC>
  tile.store %C[%c0, %c0], %c : !tile.array<?x?xACC, strides = [?, 1], align = 16, div = 16>, tensor<64x64xACC>
  return
}
