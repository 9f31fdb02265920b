// RUN: tile-opt %s --split-input-file --tile-map-threads | FileCheck %s

// Thread layouts through scf.if and scf.while: results and region arguments
// take the layout of what flows into them; a conversion only on a side that
// disagrees. Constants (a branch's or a loop's init) are recomputed in the
// layout, not converted.

// Both branches compute from the same load: the result has its layout and
// nothing is converted (the else branch's constant and the second if's
// zero are built in that layout).
// CHECK: #[[$B:.*]] = #tile.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-LABEL: func.func @if_agree
// CHECK-NOT: tile.convert_layout
// CHECK: scf.if %{{.*}} -> (tensor<1024xf32, #[[$B]]>)
// CHECK: arith.addf {{.*}} : tensor<1024xf32, #[[$B]]>
// CHECK: } else {
// CHECK: arith.constant dense<1.000000e+00> : tensor<1024xf32, #[[$B]]>
// CHECK: arith.subf {{.*}} : tensor<1024xf32, #[[$B]]>
// CHECK: arith.constant dense<0.000000e+00> : tensor<1024xf32, #[[$B]]>
// CHECK: scf.if %{{.*}} -> (tensor<1024xf32, #[[$B]]>)
// CHECK-NOT: tile.convert_layout
// CHECK: tile.store {{.*}}, tensor<1024xf32, #[[$B]]>
func.func @if_agree(%x: !tile.array<?xf32, strides = [1], align = 16, div = 16>, %o: !tile.array<?xf32, strides = [1], align = 16, div = 16>, %n: i32) attributes {tile.kernel} {
  %i = tile.bid 0
  %c0 = arith.constant 0 : i32
  %a = tile.load %x[%i] : !tile.array<?xf32, strides = [1], align = 16, div = 16> -> tensor<1024xf32>
  %c = arith.cmpi sgt, %n, %c0 : i32
  %r = scf.if %c -> (tensor<1024xf32>) {
    %s = arith.addf %a, %a : tensor<1024xf32>
    scf.yield %s : tensor<1024xf32>
  } else {
    %one = arith.constant dense<1.0> : tensor<1024xf32>
    %s = arith.subf %a, %one : tensor<1024xf32>
    scf.yield %s : tensor<1024xf32>
  }
  %z = arith.constant dense<0.0> : tensor<1024xf32>
  %r2 = scf.if %c -> (tensor<1024xf32>) {
    scf.yield %r : tensor<1024xf32>
  } else {
    scf.yield %z : tensor<1024xf32>
  }
  tile.store %o[%i], %r2 : !tile.array<?xf32, strides = [1], align = 16, div = 16>, tensor<1024xf32>
  return
}

// -----

// A tile and a counter carried through scf.while; the condition passes a
// new tile to the after region: before and after arguments and the results
// all have the load's layout, no conversion.
// CHECK: #[[$B:.*]] = #tile.blocked<{sizePerThread = [4], threadsPerWarp = [32], warpsPerCTA = [4], order = [0]}>
// CHECK-LABEL: func.func @while_tile
// CHECK-NOT: tile.convert_layout
// CHECK: scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) : (tensor<256xf32, #[[$B]]>, i32) -> (tensor<256xf32, #[[$B]]>, i32) {
// CHECK: arith.mulf {{.*}} : tensor<256xf32, #[[$B]]>
// CHECK: scf.condition(%{{.*}}) %{{.*}}, %{{.*}} : tensor<256xf32, #[[$B]]>, i32
// CHECK: } do {
// CHECK: ^bb0(%{{.*}}: tensor<256xf32, #[[$B]]>, %{{.*}}: i32):
// CHECK: arith.addf {{.*}} : tensor<256xf32, #[[$B]]>
// CHECK: scf.yield %{{.*}}, %{{.*}} : tensor<256xf32, #[[$B]]>, i32
// CHECK-NOT: tile.convert_layout
// CHECK: tile.store
func.func @while_tile(%x: !tile.array<?xf32, strides = [1], align = 16, div = 16>, %o: !tile.array<?xf32, strides = [1], align = 16, div = 16>, %n: i32) attributes {tile.kernel} {
  %i = tile.bid 0
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %a = tile.load %x[%i] : !tile.array<?xf32, strides = [1], align = 16, div = 16> -> tensor<256xf32>
  %z = arith.constant dense<0.0> : tensor<256xf32>
  %w:2 = scf.while (%acc = %z, %k = %c0) : (tensor<256xf32>, i32) -> (tensor<256xf32>, i32) {
    %lt = arith.cmpi slt, %k, %n : i32
    %h = arith.mulf %acc, %acc : tensor<256xf32>
    scf.condition(%lt) %h, %k : tensor<256xf32>, i32
  } do {
  ^bb0(%acc1: tensor<256xf32>, %k1: i32):
    %s = arith.addf %acc1, %a : tensor<256xf32>
    %k2 = arith.addi %k1, %c1 : i32
    scf.yield %s, %k2 : tensor<256xf32>, i32
  }
  tile.store %o[%i], %w#0 : !tile.array<?xf32, strides = [1], align = 16, div = 16>, tensor<256xf32>
  return
}

// -----

// The branches load in different layouts (a transposed load): the result
// takes the first branch's, and only the other branch converts, once.
// CHECK: #[[$T:.*]] = #tile.blocked<{sizePerThread = [4, 1], {{.*}} order = [0, 1]}>
// CHECK: #[[$R:.*]] = #tile.blocked<{sizePerThread = [1, 4], {{.*}} order = [1, 0]}>
// CHECK-LABEL: func.func @if_disagree
// CHECK-NOT: tile.convert_layout
// CHECK: scf.if %{{.*}} -> (tensor<64x64xf32, #[[$T]]>) {
// CHECK: tile.load {{.*}} -> tensor<64x64xf32, #[[$T]]>
// CHECK-NEXT: scf.yield %{{.*}} : tensor<64x64xf32, #[[$T]]>
// CHECK: } else {
// CHECK: tile.load {{.*}} -> tensor<64x64xf32, #[[$R]]>
// CHECK-NEXT: tile.convert_layout %{{.*}} : tensor<64x64xf32, #[[$R]]> -> tensor<64x64xf32, #[[$T]]>
// CHECK-NEXT: scf.yield %{{.*}} : tensor<64x64xf32, #[[$T]]>
// CHECK-NOT: tile.convert_layout
// CHECK: tile.store {{.*}}, tensor<64x64xf32, #[[$T]]>
func.func @if_disagree(%x: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, %o: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, %n: i32) attributes {tile.kernel} {
  %i = tile.bid 0
  %c0 = arith.constant 0 : i32
  %c = arith.cmpi sgt, %n, %c0 : i32
  %r = scf.if %c -> (tensor<64x64xf32>) {
    %t = tile.load %x[%i, %c0] {order = array<i64: 1, 0>} : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<64x64xf32>
    scf.yield %t : tensor<64x64xf32>
  } else {
    %t = tile.load %x[%i, %c0] : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<64x64xf32>
    scf.yield %t : tensor<64x64xf32>
  }
  tile.store %o[%i, %c0], %r : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<64x64xf32>
  return
}

// -----

// Reductions in both branches: the result keeps their slice layout, so the
// expand_dims and broadcast after the if need no conversion.
// CHECK: #[[$B:.*]] = #tile.blocked<{sizePerThread = [1, 4], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
// CHECK: #[[$S:.*]] = #tile.slice<{dim = 1, parent = #[[$B]]}>
// CHECK-LABEL: func.func @reduce_in_branch
// CHECK-NOT: tile.convert_layout
// CHECK: scf.if %{{.*}} -> (tensor<4xf32, #[[$S]]>) {
// CHECK: tile.reduce({{.*}}) axis = 1 : (tensor<4x1024xf32, #[[$B]]>) -> tensor<4xf32, #[[$S]]>
// CHECK: } else {
// CHECK: tile.reduce({{.*}}) axis = 1 : (tensor<4x1024xf32, #[[$B]]>) -> tensor<4xf32, #[[$S]]>
// CHECK: tile.expand_dims {{.*}} : tensor<4xf32, #[[$S]]> -> tensor<4x1xf32, #[[$B]]>
// CHECK-NOT: tile.convert_layout
// CHECK: tile.store
func.func @reduce_in_branch(%x: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, %o: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, %n: i32) attributes {tile.kernel} {
  %i = tile.bid 0
  %c0 = arith.constant 0 : i32
  %a = tile.load %x[%i, %c0] : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<4x1024xf32>
  %c = arith.cmpi sgt, %n, %c0 : i32
  %r = scf.if %c -> (tensor<4xf32>) {
    %m = tile.reduce(%a) axis = 1 : (tensor<4x1024xf32>) -> tensor<4xf32> {
    ^bb0(%p: f32, %q: f32):
      %pq = arith.maximumf %p, %q : f32
      tile.yield %pq : f32
    }
    scf.yield %m : tensor<4xf32>
  } else {
    %m = tile.reduce(%a) axis = 1 : (tensor<4x1024xf32>) -> tensor<4xf32> {
    ^bb0(%p: f32, %q: f32):
      %pq = arith.addf %p, %q : f32
      tile.yield %pq : f32
    }
    scf.yield %m : tensor<4xf32>
  }
  %re = tile.expand_dims %r, 1 : tensor<4xf32> -> tensor<4x1xf32>
  %rb = tile.broadcast %re : tensor<4x1xf32> -> tensor<4x1024xf32>
  %d = arith.subf %a, %rb : tensor<4x1024xf32>
  tile.store %o[%i, %c0], %d : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<4x1024xf32>
  return
}

// -----

// tile.mma in the else branch, a load in the then branch: the result takes
// the mma layout (an accumulator is not converted), the load converts.
// CHECK: #[[$MMA:.*]] = #tile.mma<{version = 2, warpsPerCTA = [2, 2]}>
// CHECK-LABEL: func.func @mma_in_branch
// CHECK-NOT: tile.convert_layout
// CHECK: scf.if %{{.*}} -> (tensor<64x64xf32, #[[$MMA]]>) {
// CHECK: tile.load
// CHECK-NEXT: tile.convert_layout %{{.*}} -> tensor<64x64xf32, #[[$MMA]]>
// CHECK: } else {
// CHECK-NOT: tile.convert_layout
// CHECK: tile.mma {{.*}} -> tensor<64x64xf32, #[[$MMA]]>
// CHECK-NEXT: scf.yield %{{.*}} : tensor<64x64xf32, #[[$MMA]]>
// CHECK-NOT: tile.convert_layout
// CHECK: tile.store {{.*}}, tensor<64x64xf32, #[[$MMA]]>
func.func @mma_in_branch(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %C: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, %flag: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %c0 = arith.constant 0 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %c = arith.cmpi sgt, %flag, %c0 : i32
  %r = scf.if %c -> (tensor<64x64xf32>) {
    %t = tile.load %C[%pm, %c0] : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<64x64xf32>
    scf.yield %t : tensor<64x64xf32>
  } else {
    %a = tile.load %A[%pm, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x32xf16>
    %b = tile.load %B[%c0, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<32x64xf16>
    %m = tile.mma %a, %b, %zero : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
    scf.yield %m : tensor<64x64xf32>
  }
  tile.store %C[%pm, %c0], %r : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<64x64xf32>
  return
}

// -----

// An mma accumulator carried through scf.while (its init a constant): all
// of the while's types have the mma layout, nothing is converted.
// CHECK: #[[$MMA:.*]] = #tile.mma<{version = 2, warpsPerCTA = [4, 2]}>
// CHECK-LABEL: func.func @while_mma
// CHECK-NOT: tile.convert_layout
// CHECK: arith.constant dense<0.000000e+00> : tensor<128x128xf32, #[[$MMA]]>
// CHECK: scf.while ({{.*}}) : (tensor<128x128xf32, #[[$MMA]]>, i32) -> (tensor<128x128xf32, #[[$MMA]]>, i32)
// CHECK: ^bb0(%[[ACC:.*]]: tensor<128x128xf32, #[[$MMA]]>, %{{.*}}: i32):
// CHECK: tile.mma %{{.*}}, %{{.*}}, %[[ACC]] : {{.*}} -> tensor<128x128xf32, #[[$MMA]]>
// CHECK-NOT: tile.convert_layout
// CHECK: tile.store
func.func @while_mma(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %C: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, %nk: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %pn = tile.bid 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %w:2 = scf.while (%acc0 = %zero, %k = %c0) : (tensor<128x128xf32>, i32) -> (tensor<128x128xf32>, i32) {
    %lt = arith.cmpi slt, %k, %nk : i32
    scf.condition(%lt) %acc0, %k : tensor<128x128xf32>, i32
  } do {
  ^bb0(%acc1: tensor<128x128xf32>, %k1: i32):
    %a = tile.load %A[%pm, %k1] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x64xf16>
    %b = tile.load %B[%k1, %pn] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x128xf16>
    %m = tile.mma %a, %b, %acc1 : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
    %k2 = arith.addi %k1, %c1 : i32
    scf.yield %m, %k2 : tensor<128x128xf32>, i32
  }
  tile.store %C[%pm, %pn], %w#0 : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<128x128xf32>
  return
}

// -----

// An scf.if on the accumulator inside an mma loop, and an mma loop inside
// an scf.if: the mma layout flows through both, no conversion.
// CHECK: #[[$MMA:.*]] = #tile.mma<{version = 2, warpsPerCTA = [4, 2]}>
// CHECK-LABEL: func.func @if_in_for
// CHECK-NOT: tile.convert_layout
// CHECK: scf.for {{.*}} -> (tensor<128x128xf32, #[[$MMA]]>)
// CHECK: %[[M:.*]] = tile.mma
// CHECK: scf.if %{{.*}} -> (tensor<128x128xf32, #[[$MMA]]>) {
// CHECK: arith.mulf %[[M]], %{{.*}} : tensor<128x128xf32, #[[$MMA]]>
// CHECK: } else {
// CHECK-NEXT: scf.yield %[[M]] : tensor<128x128xf32, #[[$MMA]]>
// CHECK-LABEL: func.func @for_in_if
// CHECK-NOT: tile.convert_layout
// CHECK: scf.if %{{.*}} -> (tensor<128x128xf32, #[[$MMA]]>) {
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (tensor<128x128xf32, #[[$MMA]]>)
// CHECK: } else {
// CHECK-NEXT: scf.yield %{{.*}} : tensor<128x128xf32, #[[$MMA]]>
// CHECK-NOT: tile.convert_layout
// CHECK: tile.store
func.func @if_in_for(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %C: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, %nk: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %pn = tile.bid 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %half = arith.constant dense<0.5> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x128xf32>) : i32 {
    %a = tile.load %A[%pm, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x64xf16>
    %b = tile.load %B[%k, %pn] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x128xf16>
    %m = tile.mma %a, %b, %acc0 : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
    %rem = arith.remsi %k, %c2 : i32
    %odd = arith.cmpi eq, %rem, %c1 : i32
    %m2 = scf.if %odd -> (tensor<128x128xf32>) {
      %h = arith.mulf %m, %half : tensor<128x128xf32>
      scf.yield %h : tensor<128x128xf32>
    } else {
      scf.yield %m : tensor<128x128xf32>
    }
    scf.yield %m2 : tensor<128x128xf32>
  }
  tile.store %C[%pm, %pn], %acc : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<128x128xf32>
  return
}
func.func @for_in_if(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %C: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, %nk: i32, %flag: i32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %pn = tile.bid 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %c = arith.cmpi sgt, %flag, %c0 : i32
  %acc = scf.if %c -> (tensor<128x128xf32>) {
    %r = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x128xf32>) : i32 {
      %a = tile.load %A[%pm, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x64xf16>
      %b = tile.load %B[%k, %pn] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x128xf16>
      %m = tile.mma %a, %b, %acc0 : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
      scf.yield %m : tensor<128x128xf32>
    }
    scf.yield %r : tensor<128x128xf32>
  } else {
    scf.yield %zero : tensor<128x128xf32>
  }
  tile.store %C[%pm, %pn], %acc : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<128x128xf32>
  return
}

// -----

// An if inside a while inside a for, carrying the accumulator and i1, i32
// and f32 scalars; the mma is in one branch, a row reduction added to the
// accumulator in the other. The accumulator keeps the mma layout through
// every region argument and result; the only conversion is the reduced
// rows' (the 64-element vector, not the tile it is broadcast to) into the
// slice of the accumulator's layout, as without control flow.
// CHECK: #[[$MMA:.*]] = #tile.mma<{version = 2, warpsPerCTA = [2, 2]}>
// CHECK-LABEL: func.func @nested
// CHECK-NOT: tile.convert_layout
// CHECK: scf.for {{.*}} -> (tensor<64x64xf32, #[[$MMA]]>, f32)
// CHECK: scf.while {{.*}} : (tensor<64x64xf32, #[[$MMA]]>, i32, i1, f32) -> (tensor<64x64xf32, #[[$MMA]]>, i32, i1, f32)
// CHECK: ^bb0(%[[ACC:.*]]: tensor<64x64xf32, #[[$MMA]]>, %{{.*}}: i32, %{{.*}}: i1, %{{.*}}: f32):
// CHECK: scf.if %{{.*}} -> (tensor<64x64xf32, #[[$MMA]]>, f32) {
// CHECK-NOT: tile.convert_layout
// CHECK: tile.mma %{{.*}}, %{{.*}}, %[[ACC]] : {{.*}} -> tensor<64x64xf32, #[[$MMA]]>
// CHECK: } else {
// CHECK: tile.reduce
// CHECK: tile.convert_layout %{{.*}} : tensor<64xf32, #{{.*}}> -> tensor<64xf32, #{{.*}}>
// CHECK-NEXT: tile.expand_dims
// CHECK-NEXT: %[[ROWS:.*]] = tile.broadcast %{{.*}} -> tensor<64x64xf32, #[[$MMA]]>
// CHECK-NEXT: arith.addf %[[ACC]], %[[ROWS]] : tensor<64x64xf32, #[[$MMA]]>
// CHECK-NOT: tile.convert_layout
// CHECK: tile.store {{.*}}, tensor<64x64xf32, #[[$MMA]]>
func.func @nested(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %C: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, %nk: i32, %s: f32) attributes {tile.kernel} {
  %pm = tile.bid 0
  %pn = tile.bid 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %t = arith.constant true
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %f0 = arith.constant 0.0 : f32
  %res:2 = scf.for %j = %c0 to %c2 step %c1 iter_args(%o = %zero, %sum = %f0) -> (tensor<64x64xf32>, f32) : i32 {
    %w:4 = scf.while (%acc0 = %o, %k = %c0, %go = %t, %x = %sum) : (tensor<64x64xf32>, i32, i1, f32) -> (tensor<64x64xf32>, i32, i1, f32) {
      %lt = arith.cmpi slt, %k, %nk : i32
      %cnd = arith.andi %lt, %go : i1
      scf.condition(%cnd) %acc0, %k, %go, %x : tensor<64x64xf32>, i32, i1, f32
    } do {
    ^bb0(%acc1: tensor<64x64xf32>, %k1: i32, %go1: i1, %x1: f32):
      %a = tile.load %A[%pm, %k1] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x32xf16>
      %b = tile.load %B[%k1, %pn] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<32x64xf16>
      %rem = arith.remsi %k1, %c2 : i32
      %even = arith.cmpi eq, %rem, %c0 : i32
      %m:2 = scf.if %even -> (tensor<64x64xf32>, f32) {
        %mm = tile.mma %a, %b, %acc1 : tensor<64x32xf16>, tensor<32x64xf16> -> tensor<64x64xf32>
        %x2 = arith.addf %x1, %s : f32
        scf.yield %mm, %x2 : tensor<64x64xf32>, f32
      } else {
        %ae = arith.extf %a : tensor<64x32xf16> to tensor<64x32xf32>
        %r = tile.reduce(%ae) axis = 1 : (tensor<64x32xf32>) -> tensor<64xf32> {
        ^bb0(%p: f32, %q: f32):
          %pq = arith.addf %p, %q : f32
          tile.yield %pq : f32
        }
        %re = tile.expand_dims %r, 1 : tensor<64xf32> -> tensor<64x1xf32>
        %rb = tile.broadcast %re : tensor<64x1xf32> -> tensor<64x64xf32>
        %n = arith.addf %acc1, %rb : tensor<64x64xf32>
        scf.yield %n, %x1 : tensor<64x64xf32>, f32
      }
      %k2 = arith.addi %k1, %c1 : i32
      %big = arith.cmpf olt, %m#1, %s : f32
      scf.yield %m#0, %k2, %big, %m#1 : tensor<64x64xf32>, i32, i1, f32
    }
    scf.yield %w#0, %w#3 : tensor<64x64xf32>, f32
  }
  %sp = tile.splat %res#1 : tensor<64x64xf32>
  %out = arith.addf %res#0, %sp : tensor<64x64xf32>
  tile.store %C[%pm, %pn], %out : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<64x64xf32>
  return
}

// -----

// A row vector broadcast against an mma's result (attention backward's
// lse and delta): the (1, 64) block is loaded in the mma layout whose
// slice its reshape to (64,) gives, so nothing is converted: neither the
// vector nor the broadcast 64x64 tile (which went through shared memory
// every iteration). Loop-invariant (%lse): loaded before the loop; loaded
// in the loop (%delta): there, in the same layout.
// CHECK: #[[$M:.*]] = #tile.mma<
// CHECK: #[[$S:.*]] = #tile.slice<{dim = 0, parent = #[[$M]]}>
// CHECK-LABEL: func.func @broadcast_row_vector
// CHECK: tile.load {{.*}} -> tensor<1x64xf32, #[[$M]]>
// CHECK-NEXT: %[[LS:.*]] = tile.reshape {{.*}} : tensor<1x64xf32, #[[$M]]> -> tensor<64xf32, #[[$S]]>
// CHECK: scf.for
// CHECK: tile.mma
// CHECK: tile.expand_dims %[[LS]], 0 : tensor<64xf32, #[[$S]]> -> tensor<1x64xf32, #[[$M]]>
// CHECK: tile.broadcast {{.*}} -> tensor<64x64xf32, #[[$M]]>
// CHECK: tile.load {{.*}} -> tensor<1x64xf32, #[[$M]]>
// CHECK-NEXT: tile.reshape {{.*}} : tensor<1x64xf32, #[[$M]]> -> tensor<64xf32, #[[$S]]>
// CHECK-NEXT: tile.expand_dims {{.*}} -> tensor<1x64xf32, #[[$M]]>
// CHECK-NOT: tile.convert_layout
// CHECK: scf.yield
func.func @broadcast_row_vector(%a: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                                %v: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
                                %o: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
                                %n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %l2 = tile.load %v[%c0, %c0] : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<1x64xf32>
  %lse = tile.reshape %l2 : tensor<1x64xf32> -> tensor<64xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<64x64xf32>) : i32 {
    %x = tile.load %a[%i, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x64xf16>
    %s = tile.mma %x, %x, %zero : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    %le = tile.expand_dims %lse, 0 : tensor<64xf32> -> tensor<1x64xf32>
    %lb = tile.broadcast %le : tensor<1x64xf32> -> tensor<64x64xf32>
    %d0 = arith.subf %s, %lb : tensor<64x64xf32>
    %d2 = tile.load %v[%i, %c0] : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16> -> tensor<1x64xf32>
    %delta = tile.reshape %d2 : tensor<1x64xf32> -> tensor<64xf32>
    %de = tile.expand_dims %delta, 0 : tensor<64xf32> -> tensor<1x64xf32>
    %db = tile.broadcast %de : tensor<1x64xf32> -> tensor<64x64xf32>
    %d1 = arith.mulf %d0, %db : tensor<64x64xf32>
    %next = arith.addf %acc, %d1 : tensor<64x64xf32>
    scf.yield %next : tensor<64x64xf32>
  }
  tile.store %o[%c0, %c0], %r : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<64x64xf32>
  return
}
