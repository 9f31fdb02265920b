// RUN: tile-opt %s --split-input-file --tile-chunk-loops --tile-tiling="warpgroup-mma=true" | FileCheck %s
// RUN: tile-opt %s --split-input-file --tile-chunk-loops --tile-tiling | FileCheck %s --check-prefix=SYNC
// RUN: tile-opt %s --split-input-file --tile-chunk-loops="max-reduce-extent=128 reduce-chunk=64" | FileCheck %s --check-prefix=RED

!H = !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>

// Causal attention masking only the diagonal blocks: S = Q K^T passes
// through an scf.if (masked or not) before P = exp(S) feeds P V. The mmas
// are still chained: warps along M only (P stays in its warp's registers),
// and both get warpgroup tilings, as without the if (which then becomes a
// select: tile-tiling-register-a-branches.mlir; mma.sync keeps it).
// CHECK-LABEL: func.func @attention_masked_diagonal
// CHECK: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 64], instr = [64, 64, 16]}>}
// CHECK-NOT: scf.if
// CHECK: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 128], instr = [64, 128, 16]}>}
// SYNC-LABEL: func.func @attention_masked_diagonal
// SYNC: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 64], instr = [16, 8, 16]}>}
// SYNC: scf.if
// SYNC: tile.mma {{.*}} {tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 128], instr = [16, 8, 16]}>}
func.func @attention_masked_diagonal(%K: !H, %V: !H, %q: tensor<128x128xf16>, %n: i32, %diag: i32) -> tensor<128x128xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zs = arith.constant dense<0.0> : tensor<128x64xf32>
  %ninf = arith.constant dense<-1.0e30> : tensor<128x64xf32>
  %zo = arith.constant dense<0.0> : tensor<128x128xf32>
  %o = scf.for %j = %c0 to %n step %c1 iter_args(%acc = %zo) -> (tensor<128x128xf32>) : i32 {
    %k = tile.load %K[%j, %c0] : !H -> tensor<64x128xf16>
    %kt = tile.permute %k, [1, 0] : tensor<64x128xf16> -> tensor<128x64xf16>
    %s = tile.mma %q, %kt, %zs : tensor<128x128xf16>, tensor<128x64xf16> -> tensor<128x64xf32>
    %isdiag = arith.cmpi sge, %j, %diag : i32
    %sm = scf.if %isdiag -> (tensor<128x64xf32>) {
      %r = tile.iota : tensor<128xi32>
      %re = tile.expand_dims %r, 1 : tensor<128xi32> -> tensor<128x1xi32>
      %rb = tile.broadcast %re : tensor<128x1xi32> -> tensor<128x64xi32>
      %cc = tile.iota : tensor<64xi32>
      %ce = tile.expand_dims %cc, 0 : tensor<64xi32> -> tensor<1x64xi32>
      %cb = tile.broadcast %ce : tensor<1x64xi32> -> tensor<128x64xi32>
      %m = arith.cmpi sge, %rb, %cb : tensor<128x64xi32>
      %sel = arith.select %m, %s, %ninf : tensor<128x64xi1>, tensor<128x64xf32>
      scf.yield %sel : tensor<128x64xf32>
    } else {
      scf.yield %s : tensor<128x64xf32>
    }
    %p = math.exp %sm : tensor<128x64xf32>
    %ph = arith.truncf %p : tensor<128x64xf32> to tensor<128x64xf16>
    %v = tile.load %V[%j, %c0] : !H -> tensor<64x128xf16>
    %r = tile.mma %ph, %v, %acc : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
    scf.yield %r : tensor<128x128xf32>
  }
  return %o : tensor<128x128xf32>
}

// -----

!H = !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>

// An mma with a long K in a while body (a persistent kernel's tile loop)
// becomes a K chunk loop there, on chunks of the body's loads.
// CHECK-LABEL: func.func @long_k_in_while
// CHECK: scf.while
// CHECK: } do {
// CHECK: scf.for {{.*}} -> (tensor<64x64xf32>) : i32 {
// CHECK:   tile.load {{.*}} -> tensor<64x64xf16>
// CHECK:   tile.load {{.*}} -> tensor<64x64xf16>
// CHECK:   tile.mma {{.*}} : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
// CHECK: }
// CHECK-NOT: tensor<64x512xf16>
// CHECK: scf.yield
func.func @long_k_in_while(%A: !H, %B: !H, %ntiles: i32) -> tensor<64x64xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %z = arith.constant dense<0.0> : tensor<64x64xf32>
  %w:2 = scf.while (%t = %c0, %acc = %z) : (i32, tensor<64x64xf32>) -> (i32, tensor<64x64xf32>) {
    %lt = arith.cmpi slt, %t, %ntiles : i32
    scf.condition(%lt) %t, %acc : i32, tensor<64x64xf32>
  } do {
  ^bb0(%t2: i32, %acc2: tensor<64x64xf32>):
    %a = tile.load %A[%t2, %c0] : !H -> tensor<64x512xf16>
    %b = tile.load %B[%c0, %t2] : !H -> tensor<512x64xf16>
    %m = tile.mma %a, %b, %acc2 : tensor<64x512xf16>, tensor<512x64xf16> -> tensor<64x64xf32>
    %t3 = arith.addi %t2, %c1 : i32
    scf.yield %t3, %m : i32, tensor<64x64xf32>
  }
  return %w#1 : tensor<64x64xf32>
}

// -----

!A = !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>

// Long reductions in an scf.if branch and in both regions of an scf.while
// (the condition computed from one) become chunk loops where they are.
// RED-LABEL: func.func @reductions_in_regions
// RED: scf.if
// RED:   scf.for {{.*}} -> (tensor<1x64xf32>) : i32 {
// RED:   tile.reduce(%{{.*}}) axis = 1 : (tensor<1x64xf32>) -> tensor<1xf32>
// RED: } else {
// RED: scf.while
// RED:   scf.for {{.*}} -> (tensor<1x64xf32>) : i32 {
// RED:   tile.reduce(%{{.*}}) axis = 1 : (tensor<1x64xf32>) -> tensor<1xf32>
// RED:   scf.condition
// RED: } do {
// RED:   scf.for {{.*}} -> (tensor<1x64xf32>) : i32 {
// RED:   tile.reduce(%{{.*}}) axis = 1 : (tensor<1x64xf32>) -> tensor<1xf32>
// RED-NOT: tensor<1x256xf32>
// RED: return
func.func @reductions_in_regions(%x: !A, %i: i32, %flag: i1, %thr: f32) -> tensor<1xf32> {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %r = scf.if %flag -> (tensor<1xf32>) {
    %t = tile.load %x[%i, %c0] : !A -> tensor<1x256xf32>
    %s = tile.reduce(%t) axis = 1 : (tensor<1x256xf32>) -> tensor<1xf32> {
    ^bb0(%p: f32, %q: f32):
      %a = arith.addf %p, %q : f32
      tile.yield %a : f32
    }
    scf.yield %s : tensor<1xf32>
  } else {
    %z = arith.constant dense<0.0> : tensor<1xf32>
    %w:2 = scf.while (%j = %c0, %acc = %z) : (i32, tensor<1xf32>) -> (i32, tensor<1xf32>) {
      %t = tile.load %x[%j, %c0] : !A -> tensor<1x256xf32>
      %m = tile.reduce(%t) axis = 1 : (tensor<1x256xf32>) -> tensor<1xf32> {
      ^bb0(%p: f32, %q: f32):
        %a = arith.maximumf %p, %q : f32
        tile.yield %a : f32
      }
      %m0 = tile.reshape %m : tensor<1xf32> -> tensor<f32>
      %mv = tensor.extract %m0[] : tensor<f32>
      %go = arith.cmpf olt, %mv, %thr : f32
      scf.condition(%go) %j, %acc : i32, tensor<1xf32>
    } do {
    ^bb0(%j2: i32, %acc2: tensor<1xf32>):
      %t = tile.load %x[%j2, %c0] : !A -> tensor<1x256xf32>
      %s = tile.reduce(%t) axis = 1 : (tensor<1x256xf32>) -> tensor<1xf32> {
      ^bb0(%p: f32, %q: f32):
        %a = arith.addf %p, %q : f32
        tile.yield %a : f32
      }
      %n = arith.addf %acc2, %s : tensor<1xf32>
      %j3 = arith.addi %j2, %c1 : i32
      scf.yield %j3, %n : i32, tensor<1xf32>
    }
    scf.yield %w#1 : tensor<1xf32>
  }
  return %r : tensor<1xf32>
}
