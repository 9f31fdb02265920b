// RUN: tile-opt %s -convert-tile-to-host -cse | FileCheck %s

// A column vector's array type claims strides [1, 1] (both strides of an
// (n, 1) array are 1). An in-place load of a wider tile views the array as
// strided<[?, 1]>: the partial block's buffer (strides [4, 1]) must cast to
// the same type, and the in-bounds subview is cast to it too
// (issue 13, item 17).
// CHECK-LABEL: func.func @column_vector_in_place
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf32, strided<[1, 1], offset: ?>>
// CHECK: scf.if %{{.*}} -> (tensor<16x4xf32>) {
// CHECK:   %[[SV:.*]] = memref.subview %[[X]][%{{.*}}, %{{.*}}] [16, 4] [1, 1] : memref<?x?xf32, strided<[1, 1], offset: ?>> to memref<16x4xf32, strided<[1, 1], offset: ?>>
// CHECK:   %[[VIEW:.*]] = memref.cast %[[SV]] : memref<16x4xf32, strided<[1, 1], offset: ?>> to memref<16x4xf32, strided<[?, 1], offset: ?>>
// CHECK:   bufferization.to_tensor %[[VIEW]] restrict
// CHECK: } else {
// CHECK:   %[[BUF:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x4xf32>
// CHECK:   %[[CAST:.*]] = memref.cast %[[BUF]] : memref<16x4xf32> to memref<16x4xf32, strided<[?, 1], offset: ?>>
// CHECK:   bufferization.to_tensor %[[CAST]] restrict
// CHECK: }
func.func @column_vector_in_place(%x: !tile.array<?x?xf32, strides = [1, 1]>, %y: !tile.array<?x?xf32, strides = [?, 1]>, %i: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %t = tile.load %x[%i, %c0] : !tile.array<?x?xf32, strides = [1, 1]> -> tensor<16x4xf32>
  %n = arith.negf %t : tensor<16x4xf32>
  tile.store %y[%i, %c0], %n : !tile.array<?x?xf32, strides = [?, 1]>, tensor<16x4xf32>
  return
}
