// RUN: tile-opt %s -canonicalize -split-input-file | FileCheck %s

// CHECK-LABEL: func @dim_stride_static
func.func @dim_stride_static(%a: !tile.array<128x?xf32, strides = [?, 1]>) -> (i32, i32, i32, i32) {
  // CHECK-DAG: %[[C128:.*]] = arith.constant 128 : i32
  // CHECK-DAG: %[[C1:.*]] = arith.constant 1 : i32
  // CHECK-DAG: %[[D1:.*]] = tile.dim %{{.*}}, 1
  // CHECK-DAG: %[[S0:.*]] = tile.stride %{{.*}}, 0
  // CHECK: return %[[C128]], %[[D1]], %[[S0]], %[[C1]]
  %0 = tile.dim %a, 0 : !tile.array<128x?xf32, strides = [?, 1]>
  %1 = tile.dim %a, 1 : !tile.array<128x?xf32, strides = [?, 1]>
  %2 = tile.stride %a, 0 : !tile.array<128x?xf32, strides = [?, 1]>
  %3 = tile.stride %a, 1 : !tile.array<128x?xf32, strides = [?, 1]>
  return %0, %1, %2, %3 : i32, i32, i32, i32
}

// -----

// CHECK-LABEL: func @broadcast_identity
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @broadcast_identity(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tile.broadcast %x : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func @broadcast_compose
// CHECK-SAME: (%[[X:.*]]: tensor<1x1xf32>)
// CHECK-NEXT: %[[B:.*]] = tile.broadcast %[[X]] : tensor<1x1xf32> -> tensor<4x8xf32>
// CHECK-NEXT: return %[[B]]
func.func @broadcast_compose(%x: tensor<1x1xf32>) -> tensor<4x8xf32> {
  %0 = tile.broadcast %x : tensor<1x1xf32> -> tensor<1x8xf32>
  %1 = tile.broadcast %0 : tensor<1x8xf32> -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func @broadcast_of_splat
// CHECK-SAME: (%[[S:.*]]: f32)
// CHECK-NEXT: %[[T:.*]] = tile.splat %[[S]] : tensor<4x8xf32>
// CHECK-NEXT: return %[[T]]
func.func @broadcast_of_splat(%s: f32) -> tensor<4x8xf32> {
  %0 = tile.splat %s : tensor<1x8xf32>
  %1 = tile.broadcast %0 : tensor<1x8xf32> -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func @broadcast_of_constant
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<2.000000e+00> : tensor<4x8xf32>
// CHECK-NEXT: return %[[C]]
func.func @broadcast_of_constant() -> tensor<4x8xf32> {
  %c = arith.constant dense<2.0> : tensor<1x8xf32>
  %0 = tile.broadcast %c : tensor<1x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func @splat_constant
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<3> : tensor<16xi32>
// CHECK-NEXT: return %[[C]]
func.func @splat_constant() -> tensor<16xi32> {
  %c = arith.constant 3 : i32
  %0 = tile.splat %c : tensor<16xi32>
  return %0 : tensor<16xi32>
}

// -----

// CHECK-LABEL: func @expand_dims_constant
// CHECK-NEXT: %[[C:.*]] = arith.constant dense<1.000000e+00> : tensor<16x1xf16>
// CHECK-NEXT: return %[[C]]
func.func @expand_dims_constant() -> tensor<16x1xf16> {
  %c = arith.constant dense<1.0> : tensor<16xf16>
  %0 = tile.expand_dims %c, 1 : tensor<16xf16> -> tensor<16x1xf16>
  return %0 : tensor<16x1xf16>
}

// -----

// CHECK-LABEL: func @expand_dims_kept
// CHECK: tile.expand_dims
func.func @expand_dims_kept(%x: tensor<16xf16>) -> tensor<1x16xf16> {
  %0 = tile.expand_dims %x, 0 : tensor<16xf16> -> tensor<1x16xf16>
  return %0 : tensor<1x16xf16>
}

// -----

// CHECK-LABEL: func @reshape_identity
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reshape_identity(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tile.reshape %x : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func @reshape_compose
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[R:.*]] = tile.reshape %[[X]] : tensor<4x8xf32> -> tensor<2x16xf32>
// CHECK-NEXT: return %[[R]]
func.func @reshape_compose(%x: tensor<4x8xf32>) -> tensor<2x16xf32> {
  %0 = tile.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %1 = tile.reshape %0 : tensor<32xf32> -> tensor<2x16xf32>
  return %1 : tensor<2x16xf32>
}

// -----

// CHECK-LABEL: func @reshape_round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @reshape_round_trip(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tile.reshape %x : tensor<4x8xf32> -> tensor<32xf32>
  %1 = tile.reshape %0 : tensor<32xf32> -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func @reshape_constant
// CHECK-NEXT: arith.constant dense<0.000000e+00> : tensor<32xf32>
func.func @reshape_constant() -> tensor<32xf32> {
  %c = arith.constant dense<0.0> : tensor<4x8xf32>
  %0 = tile.reshape %c : tensor<4x8xf32> -> tensor<32xf32>
  return %0 : tensor<32xf32>
}

// -----

// CHECK-LABEL: func @permute_identity
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: return %[[X]]
func.func @permute_identity(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %0 = tile.permute %x, [0, 1] : tensor<4x8xf32> -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Two transposes cancel; a 3-d rotation composes.
// CHECK-LABEL: func @permute_compose
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8xf32>, %[[Y:.*]]: tensor<4x8xf32>)
// CHECK-NEXT: %[[P:.*]] = tile.permute %[[X]], [2, 0, 1] : tensor<2x4x8xf32> -> tensor<8x2x4xf32>
// CHECK-NEXT: return %[[P]], %[[Y]]
func.func @permute_compose(%x: tensor<2x4x8xf32>, %y: tensor<4x8xf32>) -> (tensor<8x2x4xf32>, tensor<4x8xf32>) {
  %0 = tile.permute %x, [1, 2, 0] : tensor<2x4x8xf32> -> tensor<4x8x2xf32>
  %1 = tile.permute %0, [1, 2, 0] : tensor<4x8x2xf32> -> tensor<8x2x4xf32>
  %2 = tile.permute %y, [1, 0] : tensor<4x8xf32> -> tensor<8x4xf32>
  %3 = tile.permute %2, [1, 0] : tensor<8x4xf32> -> tensor<4x8xf32>
  return %1, %3 : tensor<8x2x4xf32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func @permute_constant
// CHECK-NEXT: arith.constant dense<5> : tensor<8x4xi32>
func.func @permute_constant() -> tensor<8x4xi32> {
  %c = arith.constant dense<5> : tensor<4x8xi32>
  %0 = tile.permute %c, [1, 0] : tensor<4x8xi32> -> tensor<8x4xi32>
  return %0 : tensor<8x4xi32>
}

// -----

// Ops that only read, with no users, disappear; writes stay.
// CHECK-LABEL: func @dead_code
// CHECK-NOT: tile.iota
// CHECK-NOT: tile.load
// CHECK: %[[B:.*]] = tile.bid 0
// CHECK-NEXT: %[[S:.*]] = tile.splat
// CHECK-NEXT: tile.store %{{.*}}[%[[B]]], %[[S]]
func.func @dead_code(%a: !tile.array<?xf32>, %f: f32) {
  %0 = tile.bid 0
  %1 = tile.iota : tensor<16xi32>
  %2 = tile.load %a[%0] : !tile.array<?xf32> -> tensor<16xf32>
  %3 = tile.splat %f : tensor<16xf32>
  tile.store %a[%0], %3 : !tile.array<?xf32>, tensor<16xf32>
  return
}

// -----

// A constant index picks its array (clamped into the list); one array repeated
// needs no select.
// CHECK-LABEL: func @array_select_fold
// CHECK-SAME: (%[[I:[^:]*]]: i32, %[[A:[^:]*]]: !tile.array<?xf32>, %[[B:[^:]*]]: !tile.array<?xf32>, %[[C:[^:]*]]: !tile.array<?xf32>)
// CHECK-NEXT: %[[S:.*]] = tile.array_select %[[I]], %[[A]], %[[B]] :
// CHECK-NEXT: return %[[B]], %[[A]], %[[C]], %[[A]], %[[S]] :
func.func @array_select_fold(%i: i32, %a: !tile.array<?xf32>, %b: !tile.array<?xf32>, %c: !tile.array<?xf32>)
    -> (!tile.array<?xf32>, !tile.array<?xf32>, !tile.array<?xf32>, !tile.array<?xf32>, !tile.array<?xf32>) {
  %c1 = arith.constant 1 : i32
  %cm = arith.constant -5 : i32
  %c9 = arith.constant 9 : i32
  %0 = tile.array_select %c1, %a, %b, %c : i32, !tile.array<?xf32>
  %1 = tile.array_select %cm, %a, %b, %c : i32, !tile.array<?xf32>
  %2 = tile.array_select %c9, %a, %b, %c : i32, !tile.array<?xf32>
  %3 = tile.array_select %i, %a, %a : i32, !tile.array<?xf32>
  %4 = tile.array_select %i, %a, %b : i32, !tile.array<?xf32>
  return %0, %1, %2, %3, %4 : !tile.array<?xf32>, !tile.array<?xf32>, !tile.array<?xf32>, !tile.array<?xf32>, !tile.array<?xf32>
}

// -----

// A loop-carried (1, M, N) accumulator that the body reshapes to (M, N) and
// back is carried as (M, N), reshaped once after the loop.
// CHECK-LABEL: func @carry_reshaped_accumulator
// CHECK: %[[INIT:.*]] = arith.constant dense<0.000000e+00> : tensor<16x32xf32>
// CHECK: %[[LOOP:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[INIT]]) -> (tensor<16x32xf32>)
// CHECK-NOT: tile.reshape %[[ACC]]
// CHECK: %[[P:.*]] = tile.mma %{{.*}}, %{{.*}}, %[[ACC]]
// CHECK-NEXT: scf.yield %[[P]] : tensor<16x32xf32>
// CHECK: %[[OUT:.*]] = tile.reshape %[[LOOP]] : tensor<16x32xf32> -> tensor<1x16x32xf32>
// CHECK: return %[[OUT]]
func.func @carry_reshaped_accumulator(%a: tensor<16x8xf16>, %b: tensor<8x32xf16>, %n: i32) -> tensor<1x16x32xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<1x16x32xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<1x16x32xf32>) : i32 {
    %flat = tile.reshape %acc : tensor<1x16x32xf32> -> tensor<16x32xf32>
    %p = tile.mma %a, %b, %flat : tensor<16x8xf16>, tensor<8x32xf16> -> tensor<16x32xf32>
    %back = tile.reshape %p : tensor<16x32xf32> -> tensor<1x16x32xf32>
    scf.yield %back : tensor<1x16x32xf32>
  }
  return %r : tensor<1x16x32xf32>
}

// -----

// The carried value has another use in the body: it stays 3-d.
// CHECK-LABEL: func @carried_value_used_as_is
// CHECK: scf.for {{.*}} -> (tensor<1x16x32xf32>)
func.func @carried_value_used_as_is(%a: tensor<16x8xf16>, %b: tensor<8x32xf16>, %n: i32, %init: tensor<1x16x32xf32>) -> tensor<1x16x32xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> (tensor<1x16x32xf32>) : i32 {
    %flat = tile.reshape %acc : tensor<1x16x32xf32> -> tensor<16x32xf32>
    %p = tile.mma %a, %b, %flat : tensor<16x8xf16>, tensor<8x32xf16> -> tensor<16x32xf32>
    %back = tile.reshape %p : tensor<16x32xf32> -> tensor<1x16x32xf32>
    %sum = arith.addf %back, %acc : tensor<1x16x32xf32>
    scf.yield %sum : tensor<1x16x32xf32>
  }
  return %r : tensor<1x16x32xf32>
}
