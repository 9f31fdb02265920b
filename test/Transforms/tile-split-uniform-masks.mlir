// RUN: tile-opt %s --tile-split-uniform-masks --split-input-file | FileCheck %s

// Causal attention's mask in one loop over key blocks j: rows
// mb*128 + [0, 127] >= cols j*128 + [0, 127] holds for every element
// while mb*128 - j*128 - 127 >= 0. The loop is cut at the first j past
// floor((mb*128 - 127) / 128), aligned to the iterations and within the
// bounds; the first loop drops the compare and the select, the second
// keeps them and takes the first's results.
// CHECK-LABEL: func.func @causal
// CHECK: %[[OFF:.*]] = arith.constant -127 : i64
// CHECK: arith.extsi %{{.*}} : i32 to i64
// CHECK: %[[E:.*]] = arith.addi %[[OFF]], %{{.*}} : i64
// CHECK: %[[BLOCK:.*]] = arith.constant 128 : i64
// CHECK: arith.floordivsi %[[E]], %[[BLOCK]] : i64
// CHECK: %[[AT:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK: %[[FIRST:.*]] = scf.for %[[J:.*]] = %{{.*}} to %[[AT]] step %{{.*}} iter_args(%[[A:.*]] = %{{.*}})
// CHECK-NOT: arith.cmpi
// CHECK-NOT: arith.select
// CHECK:   arith.addf %[[A]], %{{.*}}
// CHECK: scf.for %{{.*}} = %[[AT]] to %{{.*}} step %{{.*}} iter_args(%{{.*}} = %[[FIRST]])
// CHECK:   arith.cmpi sge
// CHECK:   arith.select
// CHECK-NOT: scf.for
func.func @causal(%mb: i32, %n: i32, %s: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c128 = arith.constant 128 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<128x128xf32>
  %mb128 = arith.muli %mb, %c128 : i32
  %iota = tile.iota : tensor<128xi32>
  %row0 = tile.splat %mb128 : tensor<128xi32>
  %rows = arith.addi %row0, %iota : tensor<128xi32>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %s) -> (tensor<128x128xf32>) : i32 {
    %j128 = arith.muli %j, %c128 : i32
    %col0 = tile.splat %j128 : tensor<128xi32>
    %cols = arith.addi %col0, %iota : tensor<128xi32>
    %r2 = tile.expand_dims %rows, 1 : tensor<128xi32> -> tensor<128x1xi32>
    %c2 = tile.expand_dims %cols, 0 : tensor<128xi32> -> tensor<1x128xi32>
    %rb = tile.broadcast %r2 : tensor<128x1xi32> -> tensor<128x128xi32>
    %cb = tile.broadcast %c2 : tensor<1x128xi32> -> tensor<128x128xi32>
    %keep = arith.cmpi sge, %rb, %cb : tensor<128x128xi32>
    %masked = arith.select %keep, %s, %ninf : tensor<128x128xi1>, tensor<128x128xf32>
    %next = arith.addf %acc, %masked : tensor<128x128xf32>
    scf.yield %next : tensor<128x128xf32>
  }
  return %r : tensor<128x128xf32>
}

// -----

// The ragged-length part of flash_attention.py's mask, `cols < seq & cols
// <= rows`: both parts fall with j, so the cut is the earlier of the two
// ends (minsi); the loop steps by 2 from 1, so the cut is aligned to
// 1 + 2n.
// CHECK-LABEL: func.func @ragged_and_causal
// CHECK: arith.minsi
// CHECK: arith.ceildivsi
// CHECK: scf.for
// CHECK-NOT: arith.select
// CHECK: scf.yield
// CHECK: scf.for
// CHECK: arith.andi
// CHECK: arith.select
func.func @ragged_and_causal(%mb: i32, %seq: i32, %n: i32, %s: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %c64 = arith.constant 64 : i32
  %ninf = arith.constant dense<0xFF800000> : tensor<64x64xf32>
  %iota = tile.iota : tensor<64xi32>
  %mb64 = arith.muli %mb, %c64 : i32
  %row0 = tile.splat %mb64 : tensor<64xi32>
  %rows = arith.addi %row0, %iota : tensor<64xi32>
  %r = scf.for %j = %c1 to %n step %c2 iter_args(%acc = %s) -> (tensor<64x64xf32>) : i32 {
    %j64 = arith.muli %j, %c64 : i32
    %col0 = tile.splat %j64 : tensor<64xi32>
    %cols = arith.addi %col0, %iota : tensor<64xi32>
    %c2d = tile.expand_dims %cols, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %cb = tile.broadcast %c2d : tensor<1x64xi32> -> tensor<64x64xi32>
    %seqs = tile.splat %seq : tensor<64x64xi32>
    %inside = arith.cmpi slt, %cb, %seqs : tensor<64x64xi32>
    %r2 = tile.expand_dims %rows, 1 : tensor<64xi32> -> tensor<64x1xi32>
    %rb = tile.broadcast %r2 : tensor<64x1xi32> -> tensor<64x64xi32>
    %below = arith.cmpi sle, %cb, %rb : tensor<64x64xi32>
    %keep = arith.andi %inside, %below : tensor<64x64xi1>
    %masked = arith.select %keep, %s, %ninf : tensor<64x64xi1>, tensor<64x64xf32>
    %next = arith.addf %acc, %masked : tensor<64x64xf32>
    scf.yield %next : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}

// -----

// The backward's dK/dV loop walks query blocks i past a fixed key block
// nb: rows i*64 + [0, 63] >= cols nb*64 + [0, 63] holds from
// i = ceil((nb*64 + 63) / 64) on, so the masked iterations come first and
// the second loop drops the select.
// CHECK-LABEL: func.func @rising
// CHECK: arith.ceildivsi
// CHECK: scf.for
// CHECK: arith.select
// CHECK: scf.yield
// CHECK: scf.for
// CHECK-NOT: arith.select
// CHECK: scf.yield
// CHECK: return
func.func @rising(%nb: i32, %n: i32, %s: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %iota = tile.iota : tensor<64xi32>
  %nb64 = arith.muli %c64, %nb : i32
  %col0 = tile.splat %nb64 : tensor<64xi32>
  %cols = arith.addi %iota, %col0 : tensor<64xi32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %s) -> (tensor<64x64xf32>) : i32 {
    %i64 = arith.muli %i, %c64 : i32
    %row0 = tile.splat %i64 : tensor<64xi32>
    %rows = arith.addi %row0, %iota : tensor<64xi32>
    %r2 = tile.expand_dims %rows, 1 : tensor<64xi32> -> tensor<64x1xi32>
    %rb = tile.broadcast %r2 : tensor<64x1xi32> -> tensor<64x64xi32>
    %c2d = tile.expand_dims %cols, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %cb = tile.broadcast %c2d : tensor<1x64xi32> -> tensor<64x64xi32>
    %keep = arith.cmpi sge, %rb, %cb : tensor<64x64xi32>
    %masked = arith.select %keep, %s, %zero : tensor<64x64xi1>, tensor<64x64xf32>
    %next = arith.addf %acc, %masked : tensor<64x64xf32>
    scf.yield %next : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}

// -----

// attention_dq's mask, `cols < seq & rows < seq & cols <= rows`: the
// rows' part does not depend on j, so the unmasked loop runs only where it
// holds (a select of the interval's end), and the masked loop after it.
// CHECK-LABEL: func.func @invariant_part
// CHECK: %[[OK:.*]] = arith.cmpi sge
// CHECK: %[[END:.*]] = arith.select %[[OK]]
// CHECK: %[[AT:.*]] = arith.trunci %[[END]]
// CHECK: %[[FIRST:.*]] = scf.for %{{.*}} to %[[AT]]
// CHECK-NOT: arith.select
// CHECK: scf.yield
// CHECK: scf.for %{{.*}} = %[[AT]] to %{{.*}} iter_args(%{{.*}} = %[[FIRST]])
// CHECK: arith.select
func.func @invariant_part(%qb: i32, %seq: i32, %n: i32, %s: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %iota = tile.iota : tensor<64xi32>
  %qb64 = arith.muli %qb, %c64 : i32
  %row0 = tile.splat %qb64 : tensor<64xi32>
  %rows = arith.addi %row0, %iota : tensor<64xi32>
  %r2 = tile.expand_dims %rows, 1 : tensor<64xi32> -> tensor<64x1xi32>
  %rb = tile.broadcast %r2 : tensor<64x1xi32> -> tensor<64x64xi32>
  %seqs = tile.splat %seq : tensor<64x64xi32>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %s) -> (tensor<64x64xf32>) : i32 {
    %j64 = arith.muli %j, %c64 : i32
    %col0 = tile.splat %j64 : tensor<64xi32>
    %cols = arith.addi %col0, %iota : tensor<64xi32>
    %c2d = tile.expand_dims %cols, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %cb = tile.broadcast %c2d : tensor<1x64xi32> -> tensor<64x64xi32>
    %kin = arith.cmpi slt, %cb, %seqs : tensor<64x64xi32>
    %qin = arith.cmpi slt, %rb, %seqs : tensor<64x64xi32>
    %both = arith.andi %kin, %qin : tensor<64x64xi1>
    %below = arith.cmpi sle, %cb, %rb : tensor<64x64xi32>
    %keep = arith.andi %both, %below : tensor<64x64xi1>
    %masked = arith.select %keep, %s, %zero : tensor<64x64xi1>, tensor<64x64xf32>
    %next = arith.addf %acc, %masked : tensor<64x64xf32>
    scf.yield %next : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}

// -----

// attention_dkdv's mask over query blocks i, `keys <= queries & queries <
// seq`: the first part turns true, the second false, so the loop becomes
// three: masked up to the diagonal, unmasked, masked past `seq`.
// CHECK-LABEL: func.func @both_ends
// CHECK: %[[A:.*]] = scf.for
// CHECK: arith.select
// CHECK: scf.yield
// CHECK: %[[B:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[A]])
// CHECK-NOT: arith.select
// CHECK: scf.yield
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[B]])
// CHECK: arith.select
func.func @both_ends(%kb: i32, %seq: i32, %n: i32, %s: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64x64xf32>
  %iota = tile.iota : tensor<64xi32>
  %kb64 = arith.muli %kb, %c64 : i32
  %key0 = tile.splat %kb64 : tensor<64xi32>
  %keys = arith.addi %key0, %iota : tensor<64xi32>
  %k2 = tile.expand_dims %keys, 1 : tensor<64xi32> -> tensor<64x1xi32>
  %kbc = tile.broadcast %k2 : tensor<64x1xi32> -> tensor<64x64xi32>
  %seqs = tile.splat %seq : tensor<64x64xi32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %s) -> (tensor<64x64xf32>) : i32 {
    %i64 = arith.muli %i, %c64 : i32
    %q0 = tile.splat %i64 : tensor<64xi32>
    %queries = arith.addi %q0, %iota : tensor<64xi32>
    %q2 = tile.expand_dims %queries, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %qbc = tile.broadcast %q2 : tensor<1x64xi32> -> tensor<64x64xi32>
    %diag = arith.cmpi sle, %kbc, %qbc : tensor<64x64xi32>
    %inside = arith.cmpi slt, %qbc, %seqs : tensor<64x64xi32>
    %keep = arith.andi %diag, %inside : tensor<64x64xi1>
    %masked = arith.select %keep, %s, %zero : tensor<64x64xi1>, tensor<64x64xf32>
    %next = arith.addf %acc, %masked : tensor<64x64xf32>
    scf.yield %next : tensor<64x64xf32>
  }
  return %r : tensor<64x64xf32>
}

// -----

// A scalar condition, `j < n_full` (an `if` on it, speculated into a
// select): the iterations below n_full take the true operand.
// CHECK-LABEL: func.func @scalar_condition
// CHECK: %[[AT:.*]] = arith.trunci
// CHECK: scf.for %{{.*}} to %[[AT]]
// CHECK-NOT: arith.select
// CHECK: scf.yield
// CHECK: scf.for %{{.*}} = %[[AT]] to
// CHECK: arith.select
func.func @scalar_condition(%nfull: i32, %n: i32, %a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<64xf32>) : i32 {
    %whole = arith.cmpi slt, %j, %nfull : i32
    %m = arith.select %whole, %a, %b : tensor<64xf32>
    %next = arith.addf %acc, %m : tensor<64xf32>
    scf.yield %next : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// -----

// A scalar condition splat into a mask and `&`-ed with a tile's compare
// (`(j < n) & (cols < seq)` with cols = j*64 + [0, 63]): both parts fall
// as j grows, so the unmasked loop comes first.
// CHECK-LABEL: func.func @splat_scalar_condition
// CHECK: %[[AT:.*]] = arith.trunci
// CHECK: scf.for %{{.*}} to %[[AT]]
// CHECK-NOT: arith.select
// CHECK: scf.yield
// CHECK: scf.for %{{.*}} = %[[AT]] to
// CHECK: arith.select
func.func @splat_scalar_condition(%nfull: i32, %seq: i32, %n: i32, %a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %iota = tile.iota : tensor<64xi32>
  %seqs = tile.splat %seq : tensor<64xi32>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %a) -> (tensor<64xf32>) : i32 {
    %whole = arith.cmpi slt, %j, %nfull : i32
    %wholes = tile.splat %whole : tensor<64xi1>
    %j64 = arith.muli %j, %c64 : i32
    %base = tile.splat %j64 : tensor<64xi32>
    %cols = arith.addi %base, %iota : tensor<64xi32>
    %inside = arith.cmpi slt, %cols, %seqs : tensor<64xi32>
    %both = arith.andi %wholes, %inside : tensor<64xi1>
    %m = arith.select %both, %a, %b : tensor<64xi1>, tensor<64xf32>
    %next = arith.addf %acc, %m : tensor<64xf32>
    scf.yield %next : tensor<64xf32>
  }
  return %r : tensor<64xf32>
}

// -----

// Left alone: a condition on a loop-carried value, an unsigned compare, a
// product of ranges, a mask that does not depend on the induction
// variable, and a loop compared unsigned.
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-5: scf.for
// CHECK-NOT: scf.for
func.func @left_alone(%mb: i32, %n: i32, %s: tensor<64xf32>) -> tensor<64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %zero = arith.constant dense<0.0> : tensor<64xf32>
  %iota = tile.iota : tensor<64xi32>
  %mb64 = arith.muli %mb, %c64 : i32
  %base = tile.splat %mb64 : tensor<64xi32>
  %rows = arith.addi %base, %iota : tensor<64xi32>
  %a:2 = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %s, %k = %c0) -> (tensor<64xf32>, i32) : i32 {
    %ks = tile.splat %k : tensor<64xi32>
    %keep = arith.cmpi sge, %rows, %ks : tensor<64xi32>
    %m = arith.select %keep, %s, %zero : tensor<64xi1>, tensor<64xf32>
    %next = arith.addf %acc, %m : tensor<64xf32>
    %k1 = arith.addi %k, %c1 : i32
    scf.yield %next, %k1 : tensor<64xf32>, i32
  }
  %b = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %a#0) -> (tensor<64xf32>) : i32 {
    %js = tile.splat %j : tensor<64xi32>
    %keep = arith.cmpi uge, %rows, %js : tensor<64xi32>
    %m = arith.select %keep, %s, %zero : tensor<64xi1>, tensor<64xf32>
    %next = arith.addf %acc, %m : tensor<64xf32>
    scf.yield %next : tensor<64xf32>
  }
  %c = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %b) -> (tensor<64xf32>) : i32 {
    %js = tile.splat %j : tensor<64xi32>
    %sq = arith.muli %js, %rows : tensor<64xi32>
    %keep = arith.cmpi sge, %sq, %rows : tensor<64xi32>
    %m = arith.select %keep, %s, %zero : tensor<64xi1>, tensor<64xf32>
    %next = arith.addf %acc, %m : tensor<64xf32>
    scf.yield %next : tensor<64xf32>
  }
  %d = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %c) -> (tensor<64xf32>) : i32 {
    %ms = tile.splat %mb : tensor<64xi32>
    %keep = arith.cmpi sge, %rows, %ms : tensor<64xi32>
    %m = arith.select %keep, %s, %zero : tensor<64xi1>, tensor<64xf32>
    %next = arith.addf %acc, %m : tensor<64xf32>
    scf.yield %next : tensor<64xf32>
  }
  %e = scf.for unsigned %j = %c0 to %n step %c1 iter_args(%acc = %d) -> (tensor<64xf32>) : i32 {
    %js = tile.splat %j : tensor<64xi32>
    %keep = arith.cmpi sge, %rows, %js : tensor<64xi32>
    %m = arith.select %keep, %s, %zero : tensor<64xi1>, tensor<64xf32>
    %next = arith.addf %acc, %m : tensor<64xf32>
    scf.yield %next : tensor<64xf32>
  }
  return %e : tensor<64xf32>
}
