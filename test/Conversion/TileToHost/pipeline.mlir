// RUN: tile-opt %s --tile-to-host | FileCheck %s

// The whole CPU pipeline ends in the LLVM dialect with the CPU ABI: per array
// a memref descriptor (allocated and aligned pointers, offset, extents,
// strides), per scalar its value, then the six i32 grid arguments.
// CHECK-NOT: tile.
// CHECK-NOT: memref.
// CHECK-NOT: linalg.
// CHECK-NOT: scf.
// CHECK-DAG: llvm.func @malloc(i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @free(!llvm.ptr)
// CHECK-LABEL: llvm.func @axpy(
// CHECK-SAME: %arg{{[0-9]+}}: !llvm.ptr, %arg{{[0-9]+}}: !llvm.ptr, %arg{{[0-9]+}}: i64, %arg{{[0-9]+}}: i64, %arg{{[0-9]+}}: i64,
// CHECK-SAME: %arg{{[0-9]+}}: !llvm.ptr, %arg{{[0-9]+}}: !llvm.ptr, %arg{{[0-9]+}}: i64, %arg{{[0-9]+}}: i64, %arg{{[0-9]+}}: i64,
// CHECK-SAME: %arg{{[0-9]+}}: f32,
// CHECK-SAME: %arg{{[0-9]+}}: i32 {tile.grid = "bid_x"}, %arg{{[0-9]+}}: i32 {tile.grid = "bid_y"}, %arg{{[0-9]+}}: i32 {tile.grid = "bid_z"},
// CHECK-SAME: %arg{{[0-9]+}}: i32 {tile.grid = "num_blocks_x"}, %arg{{[0-9]+}}: i32 {tile.grid = "num_blocks_y"}, %arg{{[0-9]+}}: i32 {tile.grid = "num_blocks_z"})
// CHECK-SAME: attributes {tile.kernel}
// CHECK: llvm.call @malloc
// CHECK: llvm.fmul
// CHECK: llvm.call @free
// CHECK: llvm.return
// CHECK-NOT: tile.
// CHECK-NOT: memref.
func.func @axpy(%x: !tile.array<?xf32, strides = [1]>, %y: !tile.array<?xf32, strides = [1]>, %alpha: f32) attributes {tile.kernel} {
  %i = tile.bid 0
  %a = tile.load %x[%i] : !tile.array<?xf32, strides = [1]> -> tensor<64xf32>
  %s = tile.splat %alpha : tensor<64xf32>
  %m = arith.mulf %a, %s : tensor<64xf32>
  tile.store %y[%i], %m : !tile.array<?xf32, strides = [1]>, tensor<64xf32>
  return
}
