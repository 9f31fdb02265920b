// RUN: tile-opt %s -convert-tile-to-host -cse -split-input-file | FileCheck %s

// Loads in an scf.while body: a block read in place (a view of the array)
// only where no write comes before its last read. %t and %u are read after
// the body's store, which may overwrite them (x[j + 1] is x[0] when
// j = -1): both are copied into buffers.
// CHECK-LABEL: func.func @while_body_store_between
// CHECK: scf.while
// CHECK: } do {
// CHECK: %[[T:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK: scf.if
// CHECK: linalg.copy ins(%{{.*}} : memref<64xf32, strided<[1], offset: ?>>) outs(%[[T]] : memref<64xf32>)
// CHECK: bufferization.to_tensor %[[T]] restrict writable
// CHECK: %[[U:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK: linalg.copy ins(%{{.*}} : memref<64xf32, strided<[1], offset: ?>>) outs(%[[U]] : memref<64xf32>)
// CHECK: bufferization.to_tensor %[[U]] restrict writable
// CHECK: bufferization.materialize_in_destination
// CHECK: arith.addf
// CHECK: scf.yield
!A = !tile.array<?xf32, strides = [1]>
func.func @while_body_store_between(%x: !A, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %w:2 = scf.while (%j = %c0, %acc = %zero) : (i32, tensor<64xf32>) -> (i32, tensor<64xf32>) {
    %lt = arith.cmpi slt, %j, %n : i32
    scf.condition(%lt) %j, %acc : i32, tensor<64xf32>
  } do {
  ^bb0(%j2: i32, %acc2: tensor<64xf32>):
    %t = tile.load %x[%j2] : !A -> tensor<64xf32>
    %u = tile.load %x[%c0] : !A -> tensor<64xf32>
    %j3 = arith.addi %j2, %c1 : i32
    tile.store %x[%j3], %acc2 : !A, tensor<64xf32>
    %s = arith.addf %u, %t : tensor<64xf32>
    scf.yield %j3, %s : i32, tensor<64xf32>
  }
  tile.store %x[%c0], %w#1 : !A, tensor<64xf32>
  return
}

// -----

// The same body without the store: the load is a view of the array (no
// buffer, no copy) when its block is inside it.
// CHECK-LABEL: func.func @while_body_view
// CHECK: } do {
// CHECK: scf.if %{{.*}} -> (tensor<64xf32>) {
// CHECK-NEXT: %[[V:.*]] = memref.subview
// CHECK-NEXT: bufferization.to_tensor %[[V]] restrict :
// CHECK: arith.addf
// CHECK: scf.yield
!A = !tile.array<?xf32, strides = [1]>
func.func @while_body_view(%x: !A, %o: !A, %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %w:2 = scf.while (%j = %c0, %acc = %zero) : (i32, tensor<64xf32>) -> (i32, tensor<64xf32>) {
    %lt = arith.cmpi slt, %j, %n : i32
    scf.condition(%lt) %j, %acc : i32, tensor<64xf32>
  } do {
  ^bb0(%j2: i32, %acc2: tensor<64xf32>):
    %t = tile.load %x[%j2] : !A -> tensor<64xf32>
    %s = arith.addf %acc2, %t : tensor<64xf32>
    %j3 = arith.addi %j2, %c1 : i32
    scf.yield %j3, %s : i32, tensor<64xf32>
  }
  tile.store %o[%c0], %w#1 : !A, tensor<64xf32>
  return
}

// -----

// A tile loaded before a while and read in its body, which stores to the
// array, or carried out of an scf.if whose branch stores, must be a copy:
// a view would see the stores of earlier iterations / of the branch.
// CHECK-LABEL: func.func @written_in_region
// CHECK: %[[B:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK: linalg.copy ins(%{{.*}}) outs(%[[B]] : memref<64xf32>)
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[B]] restrict writable
// CHECK: %[[B2:.*]] = memref.alloc() {alignment = 64 : i64} : memref<64xf32>
// CHECK: linalg.copy ins(%{{.*}}) outs(%[[B2]] : memref<64xf32>)
// CHECK: scf.while
// CHECK: } do {
// CHECK: arith.addf %{{.*}}, %[[T]]
// CHECK: bufferization.materialize_in_destination
// CHECK: scf.yield
// CHECK: scf.if
// CHECK: materialize_in_destination
!A = !tile.array<?xf32, strides = [1]>
func.func @written_in_region(%x: !A, %n: i32, %flag: i1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %t = tile.load %x[%c0] : !A -> tensor<64xf32>
  %u = tile.load %x[%c1] : !A -> tensor<64xf32>
  %w:2 = scf.while (%j = %c0, %acc = %zero) : (i32, tensor<64xf32>) -> (i32, tensor<64xf32>) {
    %lt = arith.cmpi slt, %j, %n : i32
    scf.condition(%lt) %j, %acc : i32, tensor<64xf32>
  } do {
  ^bb0(%j2: i32, %acc2: tensor<64xf32>):
    %s = arith.addf %acc2, %t : tensor<64xf32>
    tile.store %x[%j2], %s : !A, tensor<64xf32>
    %j3 = arith.addi %j2, %c1 : i32
    scf.yield %j3, %s : i32, tensor<64xf32>
  }
  %r = scf.if %flag -> (tensor<64xf32>) {
    tile.store %x[%c1], %w#1 : !A, tensor<64xf32>
    scf.yield %u : tensor<64xf32>
  } else {
    scf.yield %w#1 : tensor<64xf32>
  }
  tile.store %x[%c0], %r : !A, tensor<64xf32>
  return
}

// -----

// A store and an atomic in an scf.if branch stay in it: they run only on
// the taken path (the bounds check is an scf.if inside the branch).
// CHECK-LABEL: func.func @effects_in_branch
// CHECK: scf.if %{{.*}} {
// CHECK: scf.if
// CHECK: bufferization.materialize_in_destination
// CHECK: } else {
// CHECK: bufferization.materialize_in_destination
// CHECK: }
// CHECK: memref.atomic_rmw addi
// CHECK-NEXT: memref.store
// CHECK-NEXT: }
// CHECK-NEXT: }
// CHECK-NEXT: return
!A = !tile.array<?xf32, strides = [1]>
!I = !tile.array<?xi32, strides = [1]>
func.func @effects_in_branch(%x: !A, %cnt: !I, %flag: i1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  scf.if %flag {
    %v = arith.constant dense<1.0> : tensor<64xf32>
    tile.store %x[%c0], %v : !A, tensor<64xf32>
    %z = arith.constant dense<0> : tensor<i32>
    %one = arith.constant dense<1> : tensor<i32>
    %old = tile.atomic_rmw add %cnt[%z], %one : !I[tensor<i32>], tensor<i32>
  }
  return
}
