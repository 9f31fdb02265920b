// RUN: tile-opt %s --tile-to-host | FileCheck %s

// f16 and bf16 ops run in f32 on the CPU, but each result is rounded to its
// type before the next op uses it: (a + a) - a overflows to inf in f16 for
// a = 40000, as in NumPy and on the GPU. The truncf/extf pair between the
// two ops must survive canonicalization.
// CHECK-LABEL: llvm.func @chain(
// CHECK: %[[SUM:.*]] = llvm.fadd %{{.*}}, %{{.*}} : f32
// CHECK-NEXT: %[[ROUNDED:.*]] = llvm.fptrunc %[[SUM]] : f32 to f16
// CHECK: %[[BACK:.*]] = llvm.fpext %[[ROUNDED]] : f16 to f32
// CHECK: llvm.fsub %[[BACK]], %{{.*}} : f32
// CHECK: llvm.return
func.func @chain(%x: !tile.array<?xf16, strides = [1]>, %y: !tile.array<?xf16, strides = [1]>) attributes {tile.kernel} {
  %i = tile.bid 0
  %a = tile.load %x[%i] : !tile.array<?xf16, strides = [1]> -> tensor<64xf16>
  %s = arith.addf %a, %a : tensor<64xf16>
  %d = arith.subf %s, %a : tensor<64xf16>
  tile.store %y[%i], %d : !tile.array<?xf16, strides = [1]>, tensor<64xf16>
  return
}
