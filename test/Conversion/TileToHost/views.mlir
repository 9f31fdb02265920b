// RUN: tile-opt %s -convert-tile-to-host -cse | FileCheck %s

// Array views on the CPU: a slice is a memref.subview at [start, stop) of its
// axis, both clamped into [0, extent]; a raw view reinterprets the memref as
// 1-d from its offset with the largest extent, unit stride.
// CHECK-LABEL: func.func @views
// CHECK-SAME: (%[[X:[^:]*]]: memref<?x?xf32, strided<[?, 1], offset: ?>>, %[[LO:[^:]*]]: i32, %[[HI:[^:]*]]: i32
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C1:.*]] = arith.constant 1 : index
// CHECK: %[[N:.*]] = memref.dim %[[X]], %[[C1]]
// CHECK: %[[L:.*]] = arith.index_cast %[[LO]] : i32 to index
// CHECK: %[[L0:.*]] = arith.maxsi %[[L]], %[[C0]]
// CHECK: %[[S:.*]] = arith.minsi %[[L0]], %[[N]]
// CHECK: %[[H:.*]] = arith.index_cast %[[HI]] : i32 to index
// CHECK: %[[H0:.*]] = arith.maxsi %[[H]], %[[S]]
// CHECK: %[[E:.*]] = arith.minsi %[[H0]], %[[N]]
// CHECK: %[[M:.*]] = memref.dim %[[X]], %[[C0]]
// CHECK: %[[LEN:.*]] = arith.subi %[[E]], %[[S]]
// CHECK: memref.subview %[[X]][0, %[[S]]] [%[[M]], %[[LEN]]] [1, 1]
// CHECK: %[[META:.*]], %[[OFF:.*]], %{{.*}}:2, %{{.*}}:2 = memref.extract_strided_metadata %[[X]]
// CHECK: memref.reinterpret_cast %[[X]] to offset: [%[[OFF]]], sizes: [9223372036854775807], strides: [1] : memref<?x?xf32, strided<[?, 1], offset: ?>> to memref<?xf32, strided<[1], offset: ?>>
func.func @views(%x: !tile.array<?x?xf32, strides = [?, 1]>, %lo: i32, %hi: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %s = tile.array_slice %x[1] %lo, %hi : !tile.array<?x?xf32, strides = [?, 1]> -> !tile.array<?x?xf32, strides = [?, 1]>
  %t = arith.constant dense<1.0> : tensor<4x8xf32>
  tile.store %s[%c0, %c0], %t : !tile.array<?x?xf32, strides = [?, 1]>, tensor<4x8xf32>
  %r = tile.raw_view %x : !tile.array<?x?xf32, strides = [?, 1]> -> !tile.array<?xf32, strides = [1]>
  %i = arith.constant dense<3> : tensor<4xi32>
  %v = arith.constant dense<2.0> : tensor<4xf32>
  tile.scatter %r[%i], %v : !tile.array<?xf32, strides = [1]>[tensor<4xi32>], tensor<4xf32>
  return
}
