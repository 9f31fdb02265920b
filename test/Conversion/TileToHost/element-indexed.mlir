// RUN: tile-opt %s -convert-tile-to-host -cse -split-input-file | FileCheck %s

// Gather: lane by lane, each index checked against its extent and the mask;
// lanes not read take `other`.
// CHECK-LABEL: func.func @gather
// CHECK-SAME: (%[[A:.*]]: memref<?x?xf32, strided<[?, ?], offset: ?>>, %[[I:.*]]: tensor<16xi32>, %[[J:.*]]: tensor<16xi64>, %[[M:.*]]: tensor<16xi1>, %[[O:.*]]: tensor<16xf32>
// CHECK-DAG: %[[D0:.*]] = memref.dim %[[A]], %c0
// CHECK-DAG: %[[D1:.*]] = memref.dim %[[A]], %c1
// CHECK: tensor.generate
// CHECK: ^bb0(%[[L:.*]]: index):
// CHECK:   %[[MK:.*]] = tensor.extract %[[M]][%[[L]]] : tensor<16xi1>
// CHECK:   %[[IV:.*]] = tensor.extract %[[I]][%[[L]]] : tensor<16xi32>
// CHECK:   %[[IX:.*]] = arith.index_cast %[[IV]] : i32 to index
// CHECK:   arith.cmpi sge, %[[IX]], %c0
// CHECK:   arith.cmpi slt, %[[IX]], %[[D0]]
// CHECK:   %[[JV:.*]] = tensor.extract %[[J]][%[[L]]] : tensor<16xi64>
// CHECK:   %[[JX:.*]] = arith.index_cast %[[JV]] : i64 to index
// CHECK:   arith.cmpi slt, %[[JX]], %[[D1]]
// CHECK:   %[[V:.*]] = scf.if %{{.*}} -> (f32) {
// CHECK:     %[[LD:.*]] = memref.load %[[A]][%[[IX]], %[[JX]]]
// CHECK:     scf.yield %[[LD]]
// CHECK:   } else {
// CHECK:     %[[OV:.*]] = tensor.extract %[[O]][%[[L]]]
// CHECK:     scf.yield %[[OV]]
// CHECK:   tensor.yield %[[V]] : f32
// CHECK: } : tensor<16xf32>
func.func @gather(%a: !tile.array<?x?xf32>, %i: tensor<16xi32>, %j: tensor<16xi64>, %m: tensor<16xi1>, %o: tensor<16xf32>) -> tensor<16xf32> attributes {tile.kernel} {
  %0 = tile.gather %a[%i, %j] mask %m other %o : !tile.array<?x?xf32>[tensor<16xi32>, tensor<16xi64>] -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// Scatter: a loop nest over the lanes storing where the index is in bounds.
// CHECK-LABEL: func.func @scatter
// CHECK-SAME: (%[[A:.*]]: memref<?xf32, strided<[?], offset: ?>>, %[[I:.*]]: tensor<4x8xi32>, %[[V:.*]]: tensor<4x8xf32>
// CHECK: scf.for %[[P:.*]] = %c0 to %c4 step %c1 {
// CHECK:   scf.for %[[Q:.*]] = %c0 to %c8 step %c1 {
// CHECK:     %[[IV:.*]] = tensor.extract %[[I]][%[[P]], %[[Q]]]
// CHECK:     %[[IX:.*]] = arith.index_cast %[[IV]]
// CHECK:     scf.if %{{.*}} {
// CHECK:       %[[X:.*]] = tensor.extract %[[V]][%[[P]], %[[Q]]]
// CHECK:       memref.store %[[X]], %[[A]][%[[IX]]]
func.func @scatter(%a: !tile.array<?xf32>, %i: tensor<4x8xi32>, %v: tensor<4x8xf32>) attributes {tile.kernel} {
  tile.scatter %a[%i], %v : !tile.array<?xf32>[tensor<4x8xi32>], tensor<4x8xf32>
  return
}

// -----

// Atomics are real (blocks run on several threads): memref.atomic_rmw per
// performed lane; the old values land in a zero-filled buffer.
// CHECK-LABEL: func.func @atomic
// CHECK-SAME: (%[[A:.*]]: memref<?xf32, strided<[?], offset: ?>>
// CHECK: %[[OLD:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[OLD]] : memref<8xf32>)
// CHECK: scf.for %[[L:.*]] =
// CHECK:   tensor.extract %{{.*}}[%[[L]]] : tensor<8xi1>
// CHECK:   scf.if
// CHECK:     %[[R:.*]] = memref.atomic_rmw addf %{{.*}}, %[[A]][%{{.*}}] : (f32, memref<?xf32, strided<[?], offset: ?>>) -> f32
// CHECK:     memref.store %[[R]], %[[OLD]][%[[L]]]
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[OLD]] restrict writable
// CHECK: memref.atomic_rmw maximumf
// CHECK: memref.atomic_rmw maxs
// CHECK: memref.atomic_rmw mins
// CHECK: memref.atomic_rmw assign
// CHECK: memref.atomic_rmw andi
// CHECK: memref.atomic_rmw ori
// CHECK: memref.atomic_rmw xori
func.func @atomic(%a: !tile.array<?xf32>, %b: !tile.array<?xi32>, %i: tensor<8xi32>, %v: tensor<8xf32>, %w: tensor<8xi32>, %m: tensor<8xi1>) attributes {tile.kernel} {
  %0 = tile.atomic_rmw add %a[%i], %v mask %m : !tile.array<?xf32>[tensor<8xi32>], tensor<8xf32>
  %1 = tile.atomic_rmw max %a[%i], %0 : !tile.array<?xf32>[tensor<8xi32>], tensor<8xf32>
  %2 = tile.atomic_rmw max %b[%i], %w : !tile.array<?xi32>[tensor<8xi32>], tensor<8xi32>
  %3 = tile.atomic_rmw min %b[%i], %w : !tile.array<?xi32>[tensor<8xi32>], tensor<8xi32>
  %4 = tile.atomic_rmw xchg %b[%i], %w : !tile.array<?xi32>[tensor<8xi32>], tensor<8xi32>
  %5 = tile.atomic_rmw and %b[%i], %w : !tile.array<?xi32>[tensor<8xi32>], tensor<8xi32>
  %6 = tile.atomic_rmw or %b[%i], %w : !tile.array<?xi32>[tensor<8xi32>], tensor<8xi32>
  %7 = tile.atomic_rmw xor %b[%i], %w : !tile.array<?xi32>[tensor<8xi32>], tensor<8xi32>
  return
}

// -----

// Compare-and-swap goes through the runtime on the element's address,
// comparing bits.
// CHECK: func.func private @__tile_cas_32(i64, i32, i32) -> i32
// CHECK-LABEL: func.func @cas
// CHECK-SAME: (%[[A:.*]]: memref<?xf32, strided<[?], offset: ?>>
// CHECK: %{{.*}}, %[[OFF:.*]], %{{.*}}, %[[ST:.*]] = memref.extract_strided_metadata %[[A]]
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK: scf.for
// CHECK:   scf.if
// CHECK:     %[[S:.*]] = arith.muli %{{.*}}, %[[ST]] : index
// CHECK:     %[[E:.*]] = arith.addi %[[OFF]], %[[S]] : index
// CHECK:     %[[B:.*]] = arith.muli %[[E]], %c4 : index
// CHECK:     %[[ADDR:.*]] = arith.addi %[[BASE]], %[[B]] : index
// CHECK:     %[[AI:.*]] = arith.index_cast %[[ADDR]] : index to i64
// CHECK:     %[[C:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK:     %[[V:.*]] = arith.bitcast %{{.*}} : f32 to i32
// CHECK:     %[[R:.*]] = func.call @__tile_cas_32(%[[AI]], %[[C]], %[[V]]) : (i64, i32, i32) -> i32
// CHECK:     arith.bitcast %[[R]] : i32 to f32
func.func @cas(%a: !tile.array<?xf32>, %i: tensor<8xi32>, %c: tensor<8xf32>, %v: tensor<8xf32>) -> tensor<8xf32> attributes {tile.kernel} {
  %0 = tile.atomic_cas %a[%i], %c, %v : !tile.array<?xf32>[tensor<8xi32>], tensor<8xf32>
  return %0 : tensor<8xf32>
}
