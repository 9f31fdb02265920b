// RUN: tile-opt %s -convert-tile-to-host -cse | FileCheck %s
// RUN: tile-opt %s --tile-to-host | FileCheck %s --check-prefix=LLVM

// A list argument indexed at run time on the CPU: the arrays are memrefs and
// the selection a chain of memref selects, array k taken when index >= k (the
// index clamped into the list). Loads and stores then read the chosen memref.
// CHECK-LABEL: func.func @select
// CHECK-SAME: (%[[I:[^:]*]]: i32, %[[A:[^:]*]]: memref<?x?xf32, strided<[?, 1], offset: ?>>, %[[B:[^:]*]]: memref<?x?xf32, strided<[?, 1], offset: ?>>, %[[C:[^:]*]]: memref<?x?xf32, strided<[?, 1], offset: ?>>,
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : i32
// CHECK: %[[GE1:.*]] = arith.cmpi sge, %[[I]], %[[C1]] : i32
// CHECK: %[[S1:.*]] = arith.select %[[GE1]], %[[B]], %[[A]] : memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK: %[[C2:.*]] = arith.constant 2 : i32
// CHECK: %[[GE2:.*]] = arith.cmpi sge, %[[I]], %[[C2]] : i32
// CHECK: %[[S:.*]] = arith.select %[[GE2]], %[[C]], %[[S1]]
// CHECK: memref.dim %[[S]]
// CHECK: memref.subview %[[S]]
// The descriptors are selected as LLVM structs.
// LLVM-LABEL: llvm.func @select
// LLVM-COUNT-2: llvm.select %{{.*}}, %{{.*}}, %{{.*}} : i1, !llvm.struct<(ptr, ptr, i64, array<2 x i64>, array<2 x i64>)>
func.func @select(%i: i32, %a: !tile.array<?x?xf32, strides = [?, 1]>, %b: !tile.array<?x?xf32, strides = [?, 1]>, %c: !tile.array<?x?xf32, strides = [?, 1]>, %o: !tile.array<?x?xf32, strides = [?, 1]>) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %s = tile.array_select %i, %a, %b, %c : i32, !tile.array<?x?xf32, strides = [?, 1]>
  %t = tile.load %s[%c0, %c0] : !tile.array<?x?xf32, strides = [?, 1]> -> tensor<4x8xf32>
  tile.store %o[%c0, %c0], %t : !tile.array<?x?xf32, strides = [?, 1]>, tensor<4x8xf32>
  return
}
