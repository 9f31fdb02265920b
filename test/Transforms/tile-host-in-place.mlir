// RUN: tile-opt %s -tile-host-in-place -split-input-file | FileCheck %s
// RUN: tile-opt %s -tile-host-in-place -one-shot-bufferize="bufferize-function-boundaries allow-return-allocs-from-loops" -canonicalize -split-input-file | FileCheck %s --check-prefix=BUF
// RUN: tile-opt %s -one-shot-bufferize="bufferize-function-boundaries allow-return-allocs-from-loops" -canonicalize -split-input-file | FileCheck %s --check-prefix=NOPASS

#map = affine_map<(d0) -> (d0)>

// A tile carried by scf.while (acc = acc + x): the addition writes into the
// carried tile, so bufferization passes one buffer around the loop: no
// allocation and no copy of the tile per iteration (without the pass, the
// condition region copied it every iteration and the body allocated).
// CHECK-LABEL: func.func @while_accumulate
// CHECK: } do {
// CHECK: ^bb0(%[[ACC:.*]]: tensor<256xf32>, %{{.*}}: i32):
// CHECK: linalg.generic {{.*}} ins(%[[ACC]], %{{.*}} : tensor<256xf32>, tensor<256xf32>) outs(%[[ACC]] : tensor<256xf32>)
// BUF-LABEL: func.func @while_accumulate
// BUF: memref.alloc
// BUF: memref.copy
// BUF: scf.while
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: scf.yield
// BUF: return
// Without the pass: a copy in the condition region, an alloc in the body.
// NOPASS-LABEL: func.func @while_accumulate
// NOPASS: scf.while
// NOPASS: memref.alloc
// NOPASS-NEXT: memref.copy
// NOPASS-NEXT: scf.condition
// NOPASS: } do {
// NOPASS: memref.alloc
func.func @while_accumulate(%x: tensor<256xf32>, %n: i32) -> tensor<256xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<256xf32>
  %w:2 = scf.while (%a = %zero, %i = %c0) : (tensor<256xf32>, i32) -> (tensor<256xf32>, i32) {
    %lt = arith.cmpi slt, %i, %n : i32
    scf.condition(%lt) %a, %i : tensor<256xf32>, i32
  } do {
  ^bb0(%a2: tensor<256xf32>, %i2: i32):
    %e = tensor.empty() : tensor<256xf32>
    %s = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
        ins(%a2, %x : tensor<256xf32>, tensor<256xf32>) outs(%e : tensor<256xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %r = arith.addf %p, %q : f32
      linalg.yield %r : f32
    } -> tensor<256xf32>
    %i3 = arith.addi %i2, %c1 : i32
    scf.yield %s, %i3 : tensor<256xf32>, i32
  }
  return %w#0 : tensor<256xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>

// The condition region passes on only some of its arguments (a stop flag
// the body does not read was dropped): its arguments are permuted so that
// the tile sits where scf.condition passes it, the position bufferization
// pairs it with.
// CHECK-LABEL: func.func @while_aligned
// CHECK: scf.while (%[[I:.*]] = %{{.*}}, %[[A:.*]] = %{{.*}}, %[[STOP:.*]] = %{{.*}}) : (i32, tensor<64xf32>, i1) -> (i32, tensor<64xf32>)
// CHECK: arith.xori %[[STOP]]
// CHECK: scf.condition(%{{.*}}) %[[I]], %[[A]] : i32, tensor<64xf32>
// CHECK: } do {
// CHECK: ^bb0(%[[I2:.*]]: i32, %[[A2:.*]]: tensor<64xf32>):
// CHECK: %[[S:.*]] = linalg.generic {{.*}} outs(%[[A2]] : tensor<64xf32>)
// CHECK: scf.yield %{{.*}}, %[[S]], %{{.*}} : i32, tensor<64xf32>, i1
// BUF-LABEL: func.func @while_aligned
// BUF: scf.while
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: return
func.func @while_aligned(%x: tensor<64xf32>, %n: i32, %thr: f32) -> tensor<64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %false = arith.constant false
  %true = arith.constant true
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %w:2 = scf.while (%i = %c0, %stop = %false, %a = %zero) : (i32, i1, tensor<64xf32>) -> (i32, tensor<64xf32>) {
    %lt = arith.cmpi slt, %i, %n : i32
    %ns = arith.xori %stop, %true : i1
    %go = arith.andi %lt, %ns : i1
    scf.condition(%go) %i, %a : i32, tensor<64xf32>
  } do {
  ^bb0(%i2: i32, %a2: tensor<64xf32>):
    %e = tensor.empty() : tensor<64xf32>
    %s = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
        ins(%a2, %x : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %r = arith.addf %p, %q : f32
      linalg.yield %r : f32
    } -> tensor<64xf32>
    %ix = arith.constant 0 : index
    %x0 = tensor.extract %s[%ix] : tensor<64xf32>
    %over = arith.cmpf ogt, %x0, %thr : f32
    %i3 = arith.addi %i2, %c1 : i32
    scf.yield %i3, %over, %s : i32, i1, tensor<64xf32>
  }
  return %w#1 : tensor<64xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>

// In an scf.if branch: the carried tile is read in the other branch too,
// which never runs with this one, so it is still the destination.
// CHECK-LABEL: func.func @for_if
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
// CHECK: scf.if
// CHECK: linalg.generic {{.*}} outs(%[[ACC]] : tensor<64xf32>)
// CHECK: } else {
// CHECK: scf.yield %[[ACC]]
// BUF-LABEL: func.func @for_if
// BUF: scf.for
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: return
func.func @for_if(%x: tensor<64xf32>, %n: i32, %k: i32) -> tensor<64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64xf32>) : i32 {
    %use = arith.cmpi slt, %i, %k : i32
    %next = scf.if %use -> (tensor<64xf32>) {
      %e = tensor.empty() : tensor<64xf32>
      %s = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
          ins(%x, %acc : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
      ^bb0(%p: f32, %q: f32, %o: f32):
        %m = arith.mulf %p, %q : f32
        linalg.yield %m : f32
      } -> tensor<64xf32>
      scf.yield %s : tensor<64xf32>
    } else {
      scf.yield %acc : tensor<64xf32>
    }
    scf.yield %next : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// -----

#map = affine_map<(d0) -> (d0)>

// No destination where the carried tile is read after the op (the next op
// reading it last takes it), for an input defined outside the loop (it
// would be clobbered for the next iteration), or for a view of an array
// (to_tensor, not writable). A fresh linalg result is one.
// CHECK-LABEL: func.func @kept
// CHECK: %[[E:.*]] = tensor.empty()
// CHECK: %[[X:.*]] = linalg.generic
// CHECK: scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[X]])
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[ACC]], %[[X]] : {{.*}}) outs(%[[E]] : tensor<64xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[S]], %[[ACC]] : {{.*}}) outs(%[[ACC]] : tensor<64xf32>)
// CHECK: %[[V:.*]] = bufferization.to_tensor
// CHECK: %[[W:.*]] = linalg.generic {{.*}} ins(%[[V]] : tensor<64xf32>) outs(%[[E]] : tensor<64xf32>)
// CHECK: linalg.generic {{.*}} outs(%[[W]] : tensor<64xf32>)
func.func @kept(%m: memref<64xf32>, %n: i32) -> tensor<64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %e = tensor.empty() : tensor<64xf32>
  %x = linalg.generic {indexing_maps = [#map], iterator_types = ["parallel"]}
      outs(%e : tensor<64xf32>) {
  ^bb0(%o: f32):
    %one = arith.constant 1.0 : f32
    linalg.yield %one : f32
  } -> tensor<64xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<64xf32>) : i32 {
    %s = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
        ins(%acc, %x : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %a = arith.addf %p, %q : f32
      linalg.yield %a : f32
    } -> tensor<64xf32>
    %t = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
        ins(%s, %acc : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %a = arith.mulf %p, %q : f32
      linalg.yield %a : f32
    } -> tensor<64xf32>
    scf.yield %t : tensor<64xf32>
  }
  %v = bufferization.to_tensor %m restrict : memref<64xf32> to tensor<64xf32>
  %w = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%v : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%p: f32, %o: f32):
    %a = arith.negf %p : f32
    linalg.yield %a : f32
  } -> tensor<64xf32>
  %z = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%r, %w : tensor<64xf32>, tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%p: f32, %q: f32, %o: f32):
    %a = arith.addf %p, %q : f32
    linalg.yield %a : f32
  } -> tensor<64xf32>
  return %z : tensor<64xf32>
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>

// An input also read transposed is no destination: element (i, j) would be
// overwritten before (j, i) reads it (bufferization would copy it first).
// CHECK-LABEL: func.func @read_transposed
// CHECK: %[[E:.*]] = tensor.empty()
// CHECK: linalg.generic {{.*}} outs(%[[E]] : tensor<4x4xf32>)
func.func @read_transposed(%n: i32) -> tensor<4x4xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<1.0> : tensor<4x4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<4x4xf32>) : i32 {
    %e = tensor.empty() : tensor<4x4xf32>
    %s = linalg.generic {indexing_maps = [#id, #tr, #id], iterator_types = ["parallel", "parallel"]}
        ins(%acc, %acc : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
    ^bb0(%p: f32, %q: f32, %o: f32):
      %a = arith.addf %p, %q : f32
      linalg.yield %a : f32
    } -> tensor<4x4xf32>
    scf.yield %s : tensor<4x4xf32>
  }
  return %r : tensor<4x4xf32>
}
