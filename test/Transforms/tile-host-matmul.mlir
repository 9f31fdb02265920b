// RUN: tile-opt %s -tile-host-matmul="vector-bits=256 rows=4" -split-input-file | FileCheck %s

// An 8x32 f32 accumulator in 4x16 blocks: 4 rows of two vector<8xf32> stay
// in registers across the k loop; each k broadcasts one element of a per row
// and multiplies it with a row of b.
// CHECK-LABEL: func.func @f32
// CHECK-SAME: (%[[A:.*]]: memref<8x4xf32>, %[[B:.*]]: memref<4x32xf32>, %[[C:.*]]: memref<8x32xf32>)
// CHECK: scf.for %[[I:.*]] = %c0 to %c8 step %c4 {
// CHECK:   scf.for %[[J:.*]] = %c0 to %c32 step %c16 {
// CHECK:     %[[J8:.*]] = arith.addi %[[J]], %c8
// CHECK:     %[[C00:.*]] = vector.load %[[C]][%[[I]], %[[J]]] : memref<8x32xf32>, vector<8xf32>
// CHECK:     %[[C01:.*]] = vector.load %[[C]][%[[I]], %[[J8]]] : memref<8x32xf32>, vector<8xf32>
// CHECK-COUNT-6: vector.load %[[C]]
// CHECK:     %[[R:.*]]:8 = scf.for %[[K:.*]] = %c0 to %c4 step %c1 iter_args(%[[ACC0:.*]] = %[[C00]], %[[ACC1:.*]] = %[[C01]], {{.*}}) -> (vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>, vector<8xf32>) {
// CHECK:       %[[B0:.*]] = vector.load %[[B]][%[[K]], %[[J]]] : memref<4x32xf32>, vector<8xf32>
// CHECK:       %[[B1:.*]] = vector.load %[[B]][%[[K]], %[[J8]]] : memref<4x32xf32>, vector<8xf32>
// CHECK:       %[[A0:.*]] = memref.load %[[A]][%[[I]], %[[K]]] : memref<8x4xf32>
// CHECK:       %[[AV:.*]] = vector.broadcast %[[A0]] : f32 to vector<8xf32>
// CHECK:       %[[N0:.*]] = vector.fma %[[AV]], %[[B0]], %[[ACC0]] : vector<8xf32>
// CHECK:       %[[N1:.*]] = vector.fma %[[AV]], %[[B1]], %[[ACC1]] : vector<8xf32>
// CHECK-COUNT-3: memref.load %[[A]]
// CHECK:       scf.yield %[[N0]], %[[N1]],
// CHECK:     vector.store %[[R]]#0, %[[C]][%[[I]], %[[J]]] : memref<8x32xf32>, vector<8xf32>
// CHECK:     vector.store %[[R]]#1, %[[C]][%[[I]], %[[J8]]] : memref<8x32xf32>, vector<8xf32>
// CHECK-NOT: linalg.matmul
func.func @f32(%a: memref<8x4xf32>, %b: memref<4x32xf32>, %c: memref<8x32xf32>) {
  linalg.matmul ins(%a, %b : memref<8x4xf32>, memref<4x32xf32>) outs(%c : memref<8x32xf32>)
  return
}

// -----

// Narrow inputs are extended to the accumulator's type (signed for i8), and
// integer products accumulate with muli + addi. A batch adds an outer loop.
// CHECK-LABEL: func.func @i8_batched
// CHECK: scf.for %[[Z:.*]] = %c0 to %c2 step %c1 {
// CHECK:   vector.load %{{.*}}[%[[Z]], %{{.*}}, %{{.*}}] : memref<2x4x8xi32>, vector<8xi32>
// CHECK:   scf.for
// CHECK:     %[[BV:.*]] = vector.load %{{.*}} : memref<2x16x8xi8>, vector<8xi8>
// CHECK:     %[[BX:.*]] = arith.extsi %[[BV]] : vector<8xi8> to vector<8xi32>
// CHECK:     %[[AS:.*]] = memref.load %{{.*}} : memref<2x4x16xi8>
// CHECK:     %[[AX:.*]] = arith.extsi %[[AS]] : i8 to i32
// CHECK:     %[[AV:.*]] = vector.broadcast %[[AX]] : i32 to vector<8xi32>
// CHECK:     %[[P:.*]] = arith.muli %[[AV]], %[[BX]] : vector<8xi32>
// CHECK:     arith.addi %{{.*}}, %[[P]] : vector<8xi32>
func.func @i8_batched(%a: memref<2x4x16xi8>, %b: memref<2x16x8xi8>, %c: memref<2x4x8xi32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x4x16xi8>, memref<2x16x8xi8>) outs(%c : memref<2x4x8xi32>)
  return
}

// -----

// Left for convert-linalg-to-loops: dynamic shapes, a non-unit inner stride,
// and matmuls on tensors.
// CHECK-LABEL: func.func @unsupported
// CHECK-COUNT-3: linalg.matmul
func.func @unsupported(%a: memref<?x4xf32>, %b: memref<4x32xf32>, %c: memref<?x32xf32>,
                       %s: memref<8x32xf32, strided<[64, 2]>>, %d: memref<8x4xf32>,
                       %t: tensor<8x4xf32>, %u: tensor<4x32xf32>, %v: tensor<8x32xf32>) -> tensor<8x32xf32> {
  linalg.matmul ins(%a, %b : memref<?x4xf32>, memref<4x32xf32>) outs(%c : memref<?x32xf32>)
  linalg.matmul ins(%d, %b : memref<8x4xf32>, memref<4x32xf32>) outs(%s : memref<8x32xf32, strided<[64, 2]>>)
  %r = linalg.matmul ins(%t, %u : tensor<8x4xf32>, tensor<4x32xf32>) outs(%v : tensor<8x32xf32>) -> tensor<8x32xf32>
  return %r : tensor<8x32xf32>
}
