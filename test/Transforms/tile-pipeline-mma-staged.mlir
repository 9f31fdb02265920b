// RUN: tile-opt %s --split-input-file --tile-tiling="warp-tiling=true warpgroup-mma=true staged-operands=true" | FileCheck %s --check-prefix=TILED
// RUN: tile-opt %s --split-input-file --tile-tiling="warp-tiling=true warpgroup-mma=true staged-operands=true" --tile-map-threads --tile-pipeline-mma=mma-pipelining=tma | FileCheck %s
// RUN: tile-opt %s --split-input-file --tile-tiling="warp-tiling=true warpgroup-mma=true" | FileCheck %s --check-prefix=OFF

// FlashAttention-2's dQ += dS K inside the dK/dV loop (the backward's
// attention_dkdvdq), reduced to its two products: S^T = K Q^T (keys along
// the rows), then dQ = dS K of 64 queries, added to an f32 array by relaxed
// atomics.
//
// tile-tiling: 64 rows cannot give each of two warpgroups 64, so dQ is
// computed as dQ^T = K^T dS^T (128 rows of the head dimension), a
// warpgroup mma, and the atomic update takes dQ^T with transposed indices
// (built transposed: no conversion of the wgmma layout).
// Without staged-operands (the default: on the H200 these kernels gave
// wrong numbers, 2026-12-05) the loop stays on mma.sync.
// OFF-LABEL: func.func @dq
// OFF-NOT: instr = [64,
// OFF-LABEL: func.func @dq_store
// TILED-LABEL: func.func @dq
// TILED: %[[KT:.*]] = tile.permute %{{.*}}, [1, 0] : tensor<128x128xf16> -> tensor<128x128xf16>
// TILED: scf.for
// TILED: tile.mma {{.*}} instr = [64, 64, 16]
// TILED: %[[DQT:.*]] = tile.mma %[[KT]], %{{.*}}, %{{.*}} {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 64], instr = [64, 64, 16]}>} : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
// TILED-NOT: tile.permute %[[DQT]]
// TILED: tile.atomic_rmw add %{{.*}}, %[[DQT]] {{.*}} tensor<128x64xf32>
//
// tile-pipeline-mma: Q streams through a TMA ring; K is copied once and
// read both K-major (as S^T's A) and M-major (as dQ^T's A, a_transposed);
// dS^T is written into a two-slot swizzled buffer every iteration
// (stage_operand) for dQ^T's B. The ring reads Q ahead of the atomic
// updates of dQ: the kernel records that the two may not overlap.
// CHECK-LABEL: func.func @dq
// CHECK-SAME: tile.disjoint_arrays = array<i32: 2, 1>
// CHECK: %[[K:.*]] = tilegpu.alloc_shared : !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>
// CHECK: %[[STAGE:.*]] = tilegpu.alloc_shared : !tilegpu.shared<128x64xf16, slots = 2, swizzle = 128>
// CHECK: scf.for
// CHECK: tilegpu.mma %{{.*}}, %{{.*}}, %{{.*}} {b_transposed,
// CHECK: %[[SLOT:.*]] = tilegpu.slot %[[STAGE]][%{{.*}}]
// CHECK-NEXT: tilegpu.stage_operand %{{.*}} into %[[SLOT]]
// CHECK: %[[KA:.*]] = tilegpu.slot %[[K]]
// CHECK-NEXT: tilegpu.mma %[[KA]], %[[SLOT]], %{{.*}} {a_transposed,
// CHECK: tile.atomic_rmw add
func.func @dq(%K: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok},
              %Q: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok},
              %ACC: !tile.array<?x?x?xf32, strides = [?, ?, 1], align = 16, div = 16>,
              %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %bh = tile.bid 1
  %kb = tile.bid 0
  %zs = arith.constant dense<0.0> : tensor<128x64xf32>
  %zq = arith.constant dense<0.0> : tensor<64x128xf32>
  %k3 = tile.load %K[%bh, %kb, %c0] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x128x128xf16>
  %k = tile.reshape %k3 : tensor<1x128x128xf16> -> tensor<128x128xf16>
  %dims = tile.iota : tensor<128xi32>
  scf.for %i = %c0 to %n step %c1 : i32 {
    %q3 = tile.load %Q[%bh, %i, %c0] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x64x128xf16>
    %q = tile.reshape %q3 : tensor<1x64x128xf16> -> tensor<64x128xf16>
    %qt = tile.permute %q, [1, 0] : tensor<64x128xf16> -> tensor<128x64xf16>
    %st = tile.mma %k, %qt, %zs : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
    %ds = arith.truncf %st : tensor<128x64xf32> to tensor<128x64xf16>
    %dst = tile.permute %ds, [1, 0] : tensor<128x64xf16> -> tensor<64x128xf16>
    %dq = tile.mma %dst, %k, %zq : tensor<64x128xf16>, tensor<128x128xf16> -> tensor<64x128xf32>
    %first = arith.muli %i, %c64 : i32
    %iota = tile.iota : tensor<64xi32>
    %base = tile.splat %first : tensor<64xi32>
    %rows = arith.addi %base, %iota : tensor<64xi32>
    %r2 = tile.expand_dims %rows, 1 : tensor<64xi32> -> tensor<64x1xi32>
    %c2 = tile.expand_dims %dims, 0 : tensor<128xi32> -> tensor<1x128xi32>
    %h = tile.splat %bh : tensor<64x128xi32>
    %r = tile.broadcast %r2 : tensor<64x1xi32> -> tensor<64x128xi32>
    %c = tile.broadcast %c2 : tensor<1x128xi32> -> tensor<64x128xi32>
    %old = tile.atomic_rmw add %ACC[%h, %r, %c], %dq {memory_order = #tile.memory_order<relaxed>, memory_scope = #tile.memory_scope<device>} : !tile.array<?x?x?xf32, strides = [?, ?, 1], align = 16, div = 16>[tensor<64x128xi32>, tensor<64x128xi32>, tensor<64x128xi32>], tensor<64x128xf32>
  }
  return
}

// -----

// The same loop with a plain store of dQ instead: the ring would read ahead
// of a write, so nothing is pipelined (and no ring is recorded).
// CHECK-LABEL: func.func @dq_store
// CHECK-NOT: tile.disjoint_arrays
// CHECK-NOT: tilegpu.stage_operand
// CHECK: return
func.func @dq_store(%K: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok},
                    %Q: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok},
                    %ACC: !tile.array<?x?x?xf32, strides = [?, ?, 1], align = 16, div = 16>,
                    %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %bh = tile.bid 1
  %kb = tile.bid 0
  %zs = arith.constant dense<0.0> : tensor<128x64xf32>
  %zq = arith.constant dense<0.0> : tensor<64x128xf32>
  %k3 = tile.load %K[%bh, %kb, %c0] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x128x128xf16>
  %k = tile.reshape %k3 : tensor<1x128x128xf16> -> tensor<128x128xf16>
  scf.for %i = %c0 to %n step %c1 : i32 {
    %q3 = tile.load %Q[%bh, %i, %c0] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x64x128xf16>
    %q = tile.reshape %q3 : tensor<1x64x128xf16> -> tensor<64x128xf16>
    %qt = tile.permute %q, [1, 0] : tensor<64x128xf16> -> tensor<128x64xf16>
    %st = tile.mma %k, %qt, %zs : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
    %ds = arith.truncf %st : tensor<128x64xf32> to tensor<128x64xf16>
    %dst = tile.permute %ds, [1, 0] : tensor<128x64xf16> -> tensor<64x128xf16>
    %dq = tile.mma %dst, %k, %zq : tensor<64x128xf16>, tensor<128x128xf16> -> tensor<64x128xf32>
    %dq3 = tile.reshape %dq : tensor<64x128xf32> -> tensor<1x64x128xf32>
    tile.store %ACC[%bh, %i, %c0], %dq3 : !tile.array<?x?x?xf32, strides = [?, ?, 1], align = 16, div = 16>, tensor<1x64x128xf32>
  }
  return
}

// -----

// With 128 queries a step (the backward's blocks at head dim 64) dQ = dS K
// is a warpgroup mma as written: A = transpose(dS^T) is staged as dS^T
// itself, the M-major form of A (a_transposed), and K is read N-major as
// B from its one copy.
// TILED-LABEL: func.func @dq_rows128
// TILED: tile.mma {{.*}} instr = [64, 64, 16]}>} : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
// CHECK-LABEL: func.func @dq_rows128
// CHECK-SAME: tile.disjoint_arrays = array<i32: 2, 1>
// CHECK: %[[K:.*]] = tilegpu.alloc_shared : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
// CHECK: %[[STAGE:.*]] = tilegpu.alloc_shared : !tilegpu.shared<128x128xf16, slots = 2, swizzle = 128>
// CHECK: %[[SLOT:.*]] = tilegpu.slot %[[STAGE]][%{{.*}}]
// CHECK-NEXT: tilegpu.stage_operand %{{.*}} into %[[SLOT]] : tensor<128x128xf16
// CHECK: %[[KB:.*]] = tilegpu.slot %[[K]]
// CHECK-NEXT: tilegpu.mma %[[SLOT]], %[[KB]], %{{.*}} {a_transposed,
func.func @dq_rows128(%K: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok},
                      %Q: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok},
                      %ACC: !tile.array<?x?x?xf32, strides = [?, ?, 1], align = 16, div = 16>,
                      %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c128 = arith.constant 128 : i32
  %bh = tile.bid 1
  %kb = tile.bid 0
  %zs = arith.constant dense<0.0> : tensor<128x128xf32>
  %zq = arith.constant dense<0.0> : tensor<128x64xf32>
  %k3 = tile.load %K[%bh, %kb, %c0] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x128x64xf16>
  %k = tile.reshape %k3 : tensor<1x128x64xf16> -> tensor<128x64xf16>
  %dims = tile.iota : tensor<64xi32>
  scf.for %i = %c0 to %n step %c1 : i32 {
    %q3 = tile.load %Q[%bh, %i, %c0] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x128x64xf16>
    %q = tile.reshape %q3 : tensor<1x128x64xf16> -> tensor<128x64xf16>
    %qt = tile.permute %q, [1, 0] : tensor<128x64xf16> -> tensor<64x128xf16>
    %st = tile.mma %k, %qt, %zs : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
    %ds = arith.truncf %st : tensor<128x128xf32> to tensor<128x128xf16>
    %dst = tile.permute %ds, [1, 0] : tensor<128x128xf16> -> tensor<128x128xf16>
    %dq = tile.mma %dst, %k, %zq : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
    %first = arith.muli %i, %c128 : i32
    %iota = tile.iota : tensor<128xi32>
    %base = tile.splat %first : tensor<128xi32>
    %rows = arith.addi %base, %iota : tensor<128xi32>
    %r2 = tile.expand_dims %rows, 1 : tensor<128xi32> -> tensor<128x1xi32>
    %c2 = tile.expand_dims %dims, 0 : tensor<64xi32> -> tensor<1x64xi32>
    %h = tile.splat %bh : tensor<128x64xi32>
    %r = tile.broadcast %r2 : tensor<128x1xi32> -> tensor<128x64xi32>
    %c = tile.broadcast %c2 : tensor<1x64xi32> -> tensor<128x64xi32>
    %old = tile.atomic_rmw add %ACC[%h, %r, %c], %dq {memory_order = #tile.memory_order<relaxed>, memory_scope = #tile.memory_scope<device>} : !tile.array<?x?x?xf32, strides = [?, ?, 1], align = 16, div = 16>[tensor<128x64xi32>, tensor<128x64xi32>, tensor<128x64xi32>], tensor<128x64xf32>
  }
  return
}

// -----

// A carried accumulator is not swapped (it would be transposed back and
// forth every iteration): dQ summed in registers over the loop keeps its
// 64 rows, which 8 warps cannot split into warpgroups, so the loop's mmas
// stay on mma.sync.
// TILED-LABEL: func.func @carried
// TILED-NOT: instr = [64,
// TILED: return
func.func @carried(%K: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok},
                   %Q: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok},
                   %O: !tile.array<?x?x?xf32, strides = [?, ?, 1], align = 16, div = 16>,
                   %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %bh = tile.bid 1
  %kb = tile.bid 0
  %zs = arith.constant dense<0.0> : tensor<128x64xf32>
  %zq = arith.constant dense<0.0> : tensor<64x128xf32>
  %k3 = tile.load %K[%bh, %kb, %c0] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x128x128xf16>
  %k = tile.reshape %k3 : tensor<1x128x128xf16> -> tensor<128x128xf16>
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zq) -> (tensor<64x128xf32>) : i32 {
    %q3 = tile.load %Q[%bh, %i, %c0] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x64x128xf16>
    %q = tile.reshape %q3 : tensor<1x64x128xf16> -> tensor<64x128xf16>
    %qt = tile.permute %q, [1, 0] : tensor<64x128xf16> -> tensor<128x64xf16>
    %st = tile.mma %k, %qt, %zs : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
    %ds = arith.truncf %st : tensor<128x64xf32> to tensor<128x64xf16>
    %dst = tile.permute %ds, [1, 0] : tensor<128x64xf16> -> tensor<64x128xf16>
    %dq = tile.mma %dst, %k, %acc : tensor<64x128xf16>, tensor<128x128xf16> -> tensor<64x128xf32>
    scf.yield %dq : tensor<64x128xf32>
  }
  %sum3 = tile.reshape %sum : tensor<64x128xf32> -> tensor<1x64x128xf32>
  tile.store %O[%bh, %kb, %c0], %sum3 : !tile.array<?x?x?xf32, strides = [?, ?, 1], align = 16, div = 16>, tensor<1x64x128xf32>
  return
}

// -----

// A streamed mma whose A is a block loaded in front of the loop, read
// transposed (K^T V here), keeps A in registers: the M-major A buffer
// (a_transposed) is only for staged mmas, not yet right on the GPU.
// CHECK-LABEL: func.func @transposed_invariant
// CHECK-NOT: a_transposed
// CHECK: tilegpu.mma %{{.*}} : tensor<128x128xf16, {{.*}}>, !tilegpu.shared<128x128xf16
// CHECK-NOT: a_transposed
func.func @transposed_invariant(%K: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok},
                                %V: !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> {tile.tma_ok},
                                %O: !tile.array<?x?x?xf32, strides = [?, ?, 1], align = 16, div = 16>,
                                %n: i32) attributes {tile.kernel, tile.num_warps = 8 : i32} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %bh = tile.bid 1
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %k3 = tile.load %K[%bh, %c0, %c0] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x128x128xf16>
  %k = tile.reshape %k3 : tensor<1x128x128xf16> -> tensor<128x128xf16>
  %kt = tile.permute %k, [1, 0] : tensor<128x128xf16> -> tensor<128x128xf16>
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (tensor<128x128xf32>) : i32 {
    %v3 = tile.load %V[%bh, %i, %c0] : !tile.array<?x?x?xf16, strides = [?, ?, 1], align = 16, div = 16> -> tensor<1x128x128xf16>
    %v = tile.reshape %v3 : tensor<1x128x128xf16> -> tensor<128x128xf16>
    %r = tile.mma %kt, %v, %acc : tensor<128x128xf16>, tensor<128x128xf16> -> tensor<128x128xf32>
    scf.yield %r : tensor<128x128xf32>
  }
  %s3 = tile.reshape %sum : tensor<128x128xf32> -> tensor<1x128x128xf32>
  tile.store %O[%bh, %c0, %c0], %s3 : !tile.array<?x?x?xf32, strides = [?, ?, 1], align = 16, div = 16>, tensor<1x128x128xf32>
  return
}
