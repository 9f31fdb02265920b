// RUN: tile-opt %s --split-input-file --tile-tiling="warpgroup-mma=true" | FileCheck %s
// RUN: tile-opt %s --split-input-file --tile-tiling | FileCheck %s --check-prefix=SYNC

// A loop whose wgmmas take A from registers (attention: Q hoisted, P from
// the chained mma) gets a branch-free body: ptxas (CUDA 13.0) reused the
// registers of Q for the code after a branch that follows the Q K^T wgmma,
// so every iteration after the first read garbage for Q (causal attention
// masking only the diagonal under `if j >= n_full` was wrong on the H200
// for query blocks >= 1). The mask's scf.if becomes both branches and a
// select on the splat condition; both mmas keep their wgmma tilings.
// CHECK-LABEL: func.func @attention_mask_under_if
// CHECK: scf.for
// CHECK: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 64], instr = [64, 64, 16]}>}
// CHECK-NOT: scf.if
// CHECK: %[[MASKED:.*]] = arith.select %{{.*}} : tensor<128x64xi1>, tensor<128x64xf32>
// CHECK: %[[C:.*]] = tile.splat %{{.*}} : tensor<128x64xi1>
// CHECK: %[[S:.*]] = arith.select %[[C]], %[[MASKED]], %{{.*}} : tensor<128x64xi1>, tensor<128x64xf32>
// CHECK-NOT: scf.if
// CHECK: math.exp %[[S]]
// CHECK: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 128], instr = [64, 128, 16]}>}
// CHECK: scf.yield
// Without wgmma (mma.sync) the branch stays.
// SYNC-LABEL: func.func @attention_mask_under_if
// SYNC: scf.if
// SYNC: instr = [16, 8, 16]
func.func @attention_mask_under_if(%K: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %V: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %q: tensor<128x128xf16>, %n: i32, %diag: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  %zs = arith.constant dense<0.0> : tensor<128x64xf32>
  %ninf = arith.constant dense<0xFF800000> : tensor<128x64xf32>
  %zo = arith.constant dense<0.0> : tensor<128x128xf32>
  %o = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zo) -> (tensor<128x128xf32>) : i32 {
    %isdiag = arith.cmpi sge, %j, %diag : i32
    %k = tile.load %K[%j, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x128xf16>
    %kt = tile.permute %k, [1, 0] : tensor<64x128xf16> -> tensor<128x64xf16>
    %s = tile.mma %q, %kt, %zs : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
    %sm = scf.if %isdiag -> (tensor<128x64xf32>) {
      %j64 = arith.muli %j, %c64 : i32
      %r = tile.iota : tensor<128xi32>
      %re = tile.expand_dims %r, 1 : tensor<128xi32> -> tensor<128x1xi32>
      %rb = tile.broadcast %re : tensor<128x1xi32> -> tensor<128x64xi32>
      %cc = tile.iota : tensor<64xi32>
      %cs = tile.splat %j64 : tensor<64xi32>
      %ca = arith.addi %cs, %cc : tensor<64xi32>
      %ce = tile.expand_dims %ca, 0 : tensor<64xi32> -> tensor<1x64xi32>
      %cb = tile.broadcast %ce : tensor<1x64xi32> -> tensor<128x64xi32>
      %m = arith.cmpi sge, %rb, %cb : tensor<128x64xi32>
      %sel = arith.select %m, %s, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
      scf.yield %sel : tensor<128x64xf32>
    } else {
      scf.yield %s : tensor<128x64xf32>
    }
    %p = math.exp %sm : tensor<128x64xf32>
    %ph = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xf16>
    %v = tile.load %V[%j, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x128xf16>
    %r = tile.mma %ph, %v, %acc : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %r : tensor<128x128xf32>
  }
  return %o : tensor<128x128xf32>
}

// -----

// A branch that cannot run unconditionally (a division by a runtime value,
// which may be zero on the path not taken) stays; then the loop's mmas run
// on mma.sync, not wgmma.
// CHECK-LABEL: func.func @attention_branch_kept
// CHECK: tile.mma {{.*}} instr = [16, 8, 16]
// CHECK: scf.if
// CHECK: arith.divsi
// CHECK: tile.mma {{.*}} instr = [16, 8, 16]
// CHECK-NOT: instr = [64
func.func @attention_branch_kept(%K: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %V: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %q: tensor<128x128xf16>, %n: i32, %d: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zs = arith.constant dense<0.0> : tensor<128x64xf32>
  %zo = arith.constant dense<0.0> : tensor<128x128xf32>
  %o = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zo) -> (tensor<128x128xf32>) : i32 {
    %k = tile.load %K[%j, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x128xf16>
    %kt = tile.permute %k, [1, 0] : tensor<64x128xf16> -> tensor<128x64xf16>
    %s = tile.mma %q, %kt, %zs : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
    %nz = arith.cmpi ne, %d, %c0 : i32
    %sm = scf.if %nz -> (tensor<128x64xf32>) {
      %w = arith.divsi %j, %d : i32
      %wf = arith.sitofp %w : i32 to f32
      %ws = tile.splat %wf : tensor<128x64xf32>
      %a = arith.addf %s, %ws : tensor<128x64xf32>
      scf.yield %a : tensor<128x64xf32>
    } else {
      scf.yield %s : tensor<128x64xf32>
    }
    %ph = arith.truncf %sm : tensor<128x64xf32> to tensor<128x64xf16>
    %v = tile.load %V[%j, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x128xf16>
    %r = tile.mma %ph, %v, %acc : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %r : tensor<128x128xf32>
  }
  return %o : tensor<128x128xf32>
}

// -----

// A matmul loop (A and B through the ring, descriptors only) keeps its
// branch on the accumulator and its wgmma tiling.
// CHECK-LABEL: func.func @matmul_if_on_accumulator
// CHECK: tile.mma {{.*}} instr = [64, 128, 16]
// CHECK: scf.if
func.func @matmul_if_on_accumulator(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %nk: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %half = arith.constant dense<0.5> : tensor<128x128xf32>
  %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x128xf32>) : i32 {
    %a = tile.load %A[%c0, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x64xf16>
    %b = tile.load %B[%k, %c0] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x128xf16>
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
  return %acc : tensor<128x128xf32>
}
