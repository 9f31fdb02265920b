// RUN: tile-opt %s -tile-fuse -split-input-file | FileCheck %s

// An mma computed once before a while loop and added in its body stays out
// of the loop: as the accumulator it would be recomputed every iteration.
// CHECK-LABEL: func.func @mma_before_while
// CHECK: %[[M:.*]] = tile.mma %{{.*}}, %{{.*}}, %{{.*}} :
// CHECK: scf.while
// CHECK: } do {
// CHECK-NOT: tile.mma
// CHECK: arith.addf %{{.*}}, %[[M]]
// CHECK: scf.yield
func.func @mma_before_while(%a: tensor<64x64xf16>, %n: i32) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %m = tile.mma %a, %a, %z : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  %w:2 = scf.while (%i = %c0, %acc = %z) : (i32, tensor<64x64xf32>) -> (i32, tensor<64x64xf32>) {
    %lt = arith.cmpi slt, %i, %n : i32
    scf.condition(%lt) %i, %acc : i32, tensor<64x64xf32>
  } do {
  ^bb0(%i2: i32, %acc2: tensor<64x64xf32>):
    %s = arith.addf %acc2, %m : tensor<64x64xf32>
    %i3 = arith.addi %i2, %c1 : i32
    scf.yield %i3, %s : i32, tensor<64x64xf32>
  }
  return %w#1 : tensor<64x64xf32>
}

// -----

// The same in an scf.for, and for a product before the loop (no fma in it).
// CHECK-LABEL: func.func @before_for
// CHECK: tile.mma
// CHECK: %[[P:.*]] = arith.mulf
// CHECK: scf.for
// CHECK-NOT: tile.mma
// CHECK-NOT: math.fma
// CHECK: scf.yield
func.func @before_for(%a: tensor<64x64xf16>, %x: tensor<64x64xf32>, %n: i32) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %m = tile.mma %a, %a, %z : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  %p = arith.mulf %x, %x : tensor<64x64xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %z, %acc2 = %z) -> (tensor<64x64xf32>, tensor<64x64xf32>) : i32 {
    %s = arith.addf %acc, %m : tensor<64x64xf32>
    %t = arith.addf %acc2, %p : tensor<64x64xf32>
    scf.yield %s, %t : tensor<64x64xf32>, tensor<64x64xf32>
  }
  return %r#0, %r#1 : tensor<64x64xf32>, tensor<64x64xf32>
}

// -----

// Into a branch, which runs at most once, the epilogue and the product do
// move: the mma then runs only on the path that uses it.
// CHECK-LABEL: func.func @into_branch
// CHECK-SAME: (%[[A:.*]]: tensor<64x64xf16>, %[[C:.*]]: tensor<64x64xf32>, %[[X:.*]]: tensor<64x64xf32>
// CHECK-NOT: tile.mma
// CHECK: scf.if
// CHECK-NEXT: %[[M:.*]] = tile.mma %[[A]], %[[A]], %[[C]]
// CHECK-NEXT: scf.yield %[[M]]
// CHECK: } else {
// CHECK-NEXT: %[[F:.*]] = math.fma %[[X]], %[[X]], %[[C]]
// CHECK-NEXT: scf.yield %[[F]]
func.func @into_branch(%a: tensor<64x64xf16>, %c: tensor<64x64xf32>, %x: tensor<64x64xf32>, %flag: i1) -> tensor<64x64xf32> {
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %m = tile.mma %a, %a, %z : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  %p = arith.mulf %x, %x : tensor<64x64xf32>
  %r = scf.if %flag -> (tensor<64x64xf32>) {
    %s = arith.addf %m, %c : tensor<64x64xf32>
    scf.yield %s : tensor<64x64xf32>
  } else {
    %t = arith.addf %p, %c : tensor<64x64xf32>
    scf.yield %t : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}

// -----

// Reductions in the two branches of an if, or on both sides of one, are not
// merged: each runs on its own path, and the one after the if may read its
// result.
// CHECK-LABEL: func.func @reductions_across_if
// CHECK: tile.reduce
// CHECK: scf.if
// CHECK: tile.reduce
// CHECK: } else {
// CHECK: tile.reduce
// CHECK: }
// CHECK: tile.reduce(%{{.*}}) axis = 1 : (tensor<4x64xf32>) -> tensor<4xf32>
func.func @reductions_across_if(%x: tensor<4x64xf32>, %flag: i1) -> (tensor<4xf32>, tensor<4xf32>) {
  %s = tile.reduce(%x) axis = 1 : (tensor<4x64xf32>) -> tensor<4xf32> {
  ^bb0(%p: f32, %q: f32):
    %r = arith.addf %p, %q : f32
    tile.yield %r : f32
  }
  %b = scf.if %flag -> (tensor<4x64xf32>) {
    %m = tile.reduce(%x) axis = 1 : (tensor<4x64xf32>) -> tensor<4xf32> {
    ^bb0(%p: f32, %q: f32):
      %r = arith.maximumf %p, %q : f32
      tile.yield %r : f32
    }
    %e = tile.expand_dims %m, 1 : tensor<4xf32> -> tensor<4x1xf32>
    %bb = tile.broadcast %e : tensor<4x1xf32> -> tensor<4x64xf32>
    scf.yield %bb : tensor<4x64xf32>
  } else {
    %m = tile.reduce(%x) axis = 1 : (tensor<4x64xf32>) -> tensor<4xf32> {
    ^bb0(%p: f32, %q: f32):
      %r = arith.minimumf %p, %q : f32
      tile.yield %r : f32
    }
    %e = tile.expand_dims %m, 1 : tensor<4xf32> -> tensor<4x1xf32>
    %bb = tile.broadcast %e : tensor<4x1xf32> -> tensor<4x64xf32>
    scf.yield %bb : tensor<4x64xf32>
  }
  %t = tile.reduce(%b) axis = 1 : (tensor<4x64xf32>) -> tensor<4xf32> {
  ^bb0(%p: f32, %q: f32):
    %r = arith.addf %p, %q : f32
    tile.yield %r : f32
  }
  return %s, %t : tensor<4xf32>, tensor<4xf32>
}
