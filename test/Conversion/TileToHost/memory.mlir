// RUN: tile-opt %s -convert-tile-to-host -cse -split-input-file | FileCheck %s

// Arrays become strided memrefs; kernels gain six i32 grid arguments.
// CHECK-LABEL: func.func @signature
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf16, strided<[?, 1], offset: ?>>, %[[S:.*]]: memref<64x32xi8, strided<[32, 1], offset: ?>>, %[[N:.*]]: i32,
// CHECK-SAME: %[[BX:.*]]: i32 {tile.grid = "bid_x"}, %[[BY:.*]]: i32 {tile.grid = "bid_y"}, %[[BZ:.*]]: i32 {tile.grid = "bid_z"},
// CHECK-SAME: %[[NX:.*]]: i32 {tile.grid = "num_blocks_x"}, %[[NY:.*]]: i32 {tile.grid = "num_blocks_y"}, %[[NZ:.*]]: i32 {tile.grid = "num_blocks_z"})
// CHECK: call @use(%[[BY]], %[[NZ]])
func.func private @use(i32, i32)
func.func @signature(%x: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                     %s: !tile.array<64x32xi8, strides = [32, 1]>, %n: i32) attributes {tile.kernel} {
  %b = tile.bid 1
  %g = tile.num_blocks 2
  func.call @use(%b, %g) : (i32, i32) -> ()
  return
}

// -----

// Extents come from memref.dim, strides from the strided metadata.
// CHECK-LABEL: func.func @metadata
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[D:.*]] = memref.dim %{{.*}}, %[[C0]]
// CHECK: arith.index_cast %[[D]] : index to i32
// CHECK: %{{.*}}, %{{.*}}, %{{.*}}:2, %[[ST:.*]]:2 = memref.extract_strided_metadata
// CHECK: arith.index_cast %[[ST]]#0 : index to i32
func.func @metadata(%x: !tile.array<?x?xf32>) -> (i32, i32) attributes {tile.kernel} {
  %d = tile.dim %x, 0 : !tile.array<?x?xf32>
  %s = tile.stride %x, 0 : !tile.array<?x?xf32>
  return %d, %s : i32, i32
}

// -----

// A load whose tile escapes (here, returned) copies its block into a fresh
// buffer: a static-size copy when the block is inside the array, else the
// padding everywhere and a copy of the part that is inside.
// CHECK-LABEL: func.func @load
// CHECK-SAME: (%[[X:.*]]: memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[R0:.*]] = arith.muli %{{.*}}, %[[C16]] : index
// CHECK: %[[D0:.*]] = memref.dim %[[X]], %[[C0]]
// CHECK: %[[E0:.*]] = arith.addi %[[R0]], %[[C16]]
// CHECK: arith.cmpi sge, %[[R0]], %[[C0]]
// CHECK: arith.cmpi sle, %[[E0]], %[[D0]]
// CHECK: %[[PAD:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[BUF:.*]] = memref.alloc() {alignment = 64 : i64} : memref<16x32xf32>
// CHECK: scf.if %{{.*}} {
// CHECK:   %[[SV:.*]] = memref.subview %[[X]][%[[R0]], %{{.*}}] [16, 32] [1, 1] : memref<?x?xf32, strided<[?, 1], offset: ?>> to memref<16x32xf32, strided<[?, 1], offset: ?>>
// CHECK:   linalg.copy ins(%[[SV]] : {{.*}}) outs(%[[BUF]] : memref<16x32xf32>)
// CHECK: } else {
// CHECK:   linalg.fill ins(%[[PAD]] : f32) outs(%[[BUF]] : memref<16x32xf32>)
// The in-bounds part starts at lo = clamp(-origin, 0, 16) and ends at
// hi = clamp(extent - origin, 0, 16).
// CHECK:   %[[NEG:.*]] = arith.subi %[[C0]], %[[R0]]
// CHECK:   %[[LO1:.*]] = arith.maxsi %[[NEG]], %[[C0]]
// CHECK:   %[[LO:.*]] = arith.minsi %[[LO1]], %[[C16]]
// CHECK:   %[[REM:.*]] = arith.subi %[[D0]], %[[R0]]
// CHECK:   %[[HI1:.*]] = arith.maxsi %[[REM]], %[[C0]]
// CHECK:   %[[HI:.*]] = arith.minsi %[[HI1]], %[[C16]]
// CHECK:   %[[N1:.*]] = arith.subi %[[HI]], %[[LO]]
// CHECK:   %[[N:.*]] = arith.maxsi %[[N1]], %[[C0]]
// CHECK:   %[[OFF:.*]] = arith.addi %[[R0]], %[[LO]]
// CHECK:   %[[PART:.*]] = memref.subview %[[X]][%[[OFF]], %{{.*}}] [%[[N]], %{{.*}}] [1, 1] : memref<?x?xf32, strided<[?, 1], offset: ?>> to memref<?x?xf32, strided<[?, 1], offset: ?>>
// CHECK:   %[[DST:.*]] = memref.subview %[[BUF]][%[[LO]], %{{.*}}] [%[[N]], %{{.*}}] [1, 1] : memref<16x32xf32> to memref<?x?xf32, strided<[32, 1], offset: ?>>
// CHECK:   linalg.copy ins(%[[PART]] : {{.*}}) outs(%[[DST]] : {{.*}})
// CHECK: }
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[BUF]] restrict writable : memref<16x32xf32> to tensor<16x32xf32>
// CHECK: return %[[T]]
func.func @load(%x: !tile.array<?x?xf32, strides = [?, 1]>, %i: i32, %j: i32) -> tensor<16x32xf32> attributes {tile.kernel} {
  %t = tile.load %x[%i, %j] {padding = 0xFF800000 : f32} : !tile.array<?x?xf32, strides = [?, 1]> -> tensor<16x32xf32>
  return %t : tensor<16x32xf32>
}

// -----

// With `order`, the block (array axes 16x32) is transposed into the tile.
// CHECK-LABEL: func.func @load_transposed
// CHECK: %[[BUF:.*]] = memref.alloc() {alignment = 64 : i64} : memref<32x16xf32>
// CHECK: scf.if
// CHECK:   %[[SV:.*]] = memref.subview %{{.*}}[%{{.*}}, %{{.*}}] [16, 32] [1, 1]
// CHECK:   linalg.transpose ins(%[[SV]] : {{.*}}) outs(%[[BUF]] : memref<32x16xf32>) permutation = [1, 0]
// CHECK: } else {
// CHECK:   linalg.fill ins(%{{.*}} : f32) outs(%[[BUF]] : memref<32x16xf32>)
// CHECK:   linalg.transpose
// CHECK: }
func.func @load_transposed(%x: !tile.array<?x?xf32>, %i: i32, %j: i32) -> tensor<32x16xf32> attributes {tile.kernel} {
  %t = tile.load %x[%i, %j] {order = array<i64: 1, 0>} : !tile.array<?x?xf32> -> tensor<32x16xf32>
  return %t : tensor<32x16xf32>
}

// -----

// A store writes the whole tile when it fits, else only the in-bounds slice.
// CHECK-LABEL: func.func @store
// CHECK-SAME: (%[[X:.*]]: memref<?xf32, strided<[1], offset: ?>>, %{{.*}}: i32, %[[T:.*]]: tensor<128xf32>
// CHECK: scf.if %{{.*}} {
// CHECK:   %[[SV:.*]] = memref.subview %[[X]][%{{.*}}] [128] [1]
// CHECK:   bufferization.materialize_in_destination %[[T]] in restrict writable %[[SV]] : (tensor<128xf32>, memref<128xf32, strided<[1], offset: ?>>) -> ()
// CHECK: } else {
// CHECK:   %[[SL:.*]] = tensor.extract_slice %[[T]][%{{.*}}] [%{{.*}}] [1] : tensor<128xf32> to tensor<?xf32>
// CHECK:   %[[PART:.*]] = memref.subview %[[X]][%{{.*}}] [%{{.*}}] [1]
// CHECK:   bufferization.materialize_in_destination %[[SL]] in restrict writable %[[PART]] : (tensor<?xf32>, memref<?xf32, strided<[1], offset: ?>>) -> ()
// CHECK: }
func.func @store(%x: !tile.array<?xf32, strides = [1]>, %i: i32, %t: tensor<128xf32>) attributes {tile.kernel} {
  tile.store %x[%i], %t : !tile.array<?xf32, strides = [1]>, tensor<128xf32>
  return
}

// -----

// A load read before any write reads the array in place when the block is
// inside it; a partial block gets a padded buffer of the same strided type.
// CHECK-LABEL: func.func @load_in_place
// CHECK-SAME: (%[[X:.*]]: memref<?xf32, strided<[1], offset: ?>>, %[[Y:.*]]: memref<?xf32, strided<[1], offset: ?>>
// CHECK: %[[T:.*]] = scf.if %{{.*}} -> (tensor<64xf32>) {
// CHECK:   %[[SV:.*]] = memref.subview %[[X]][%{{.*}}] [64] [1] : memref<?xf32, strided<[1], offset: ?>> to memref<64xf32, strided<[1], offset: ?>>
// CHECK:   %[[V:.*]] = bufferization.to_tensor %[[SV]] restrict : memref<64xf32, strided<[1], offset: ?>> to tensor<64xf32>
// CHECK:   scf.yield %[[V]]
// CHECK: } else {
// CHECK:   %[[BUF:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK:   linalg.fill
// CHECK:   linalg.copy
// CHECK:   %[[CAST:.*]] = memref.cast %[[BUF]] : memref<64xf32> to memref<64xf32, strided<[1], offset: ?>>
// CHECK:   %[[P:.*]] = bufferization.to_tensor %[[CAST]] restrict
// CHECK:   scf.yield %[[P]]
// CHECK: }
// CHECK: arith.negf %[[T]]
func.func @load_in_place(%x: !tile.array<?xf32, strides = [1]>, %y: !tile.array<?xf32, strides = [1]>, %i: i32) attributes {tile.kernel} {
  %t = tile.load %x[%i] : !tile.array<?xf32, strides = [1]> -> tensor<64xf32>
  %n = arith.negf %t : tensor<64xf32>
  tile.store %y[%i], %n : !tile.array<?xf32, strides = [1]>, tensor<64xf32>
  return
}

// -----

// A tile still read after a write (the arrays may be the same memory) is
// copied, and so is one stored as is (the arrays may overlap).
// CHECK-LABEL: func.func @load_then_write
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK: linalg.copy
// CHECK: memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK: linalg.copy
// CHECK-NOT: to_tensor %{{.*}} restrict :
func.func @load_then_write(%x: !tile.array<?xf32, strides = [1]>, %y: !tile.array<?xf32, strides = [1]>, %i: i32) attributes {tile.kernel} {
  %t = tile.load %x[%i] : !tile.array<?xf32, strides = [1]> -> tensor<64xf32>
  %u = tile.load %y[%i] : !tile.array<?xf32, strides = [1]> -> tensor<64xf32>
  tile.store %y[%i], %t : !tile.array<?xf32, strides = [1]>, tensor<64xf32>
  %n = arith.negf %u : tensor<64xf32>
  tile.store %x[%i], %n : !tile.array<?xf32, strides = [1]>, tensor<64xf32>
  return
}
