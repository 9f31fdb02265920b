// RUN: tile-opt %s --split-input-file --verify-diagnostics --tile-map-threads | FileCheck %s
// RUN: tile-opt %s --split-input-file --verify-diagnostics --tile-to-llvm-nvvm | FileCheck %s --check-prefix=NVVM

// A permute whose source has no layout yet (a loop-carried value whose init
// is recomputed on demand) takes a default layout; it crashed (issue 13).
// CHECK-LABEL: func.func @permute_undecided
// CHECK: tile.permute %{{.*}}, [1, 0] : tensor<32x32xf32, #{{.*}}> -> tensor<32x32xf32, #{{.*}}>
// NVVM: llvm.func @permute_undecided
!A = !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>
func.func @permute_undecided(%x: !A, %o: !A) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c4 = arith.constant 4 : i32
  %c1 = arith.constant 1 : i32
  %z = arith.constant dense<0.0> : tensor<32x32xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %z) -> (tensor<32x32xf32>) : i32 {
    %t = tile.permute %acc, [1, 0] : tensor<32x32xf32> -> tensor<32x32xf32>
    %a = tile.load %x[%c0, %c0] : !A -> tensor<32x32xf32>
    %s = arith.addf %t, %a : tensor<32x32xf32>
    scf.yield %s : tensor<32x32xf32>
  }
  tile.store %o[%c0, %c0], %r : !A, tensor<32x32xf32>
  return
}

// -----

// Tensors at a function's boundary have no layout to map to: an error, not
// invalid IR (test/Dialect/Tile/ops.mlir's @shapes permutes an argument,
// which crashed).
// expected-error @+1 {{takes or returns a tensor, which has no thread layout}}
func.func @permute_arg(%x: tensor<32x64xf32>) {
  %0 = tile.permute %x, [1, 0] : tensor<32x64xf32> -> tensor<64x32xf32>
  return
}

// -----

// No tile op at all: the pass still creates #tile layouts (the tile dialect
// was not loaded, and creating one crashed).
// CHECK-LABEL: func.func @no_tile_ops
// CHECK: arith.addf %{{.*}} : tensor<64xf32, #{{.*}}>
// NVVM: llvm.func @no_tile_ops
func.func @no_tile_ops() attributes {tile.kernel} {
  %e = tensor.empty() : tensor<64xf32>
  %s = arith.addf %e, %e : tensor<64xf32>
  return
}
