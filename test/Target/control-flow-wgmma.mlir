// An scf.if on the accumulator inside a wgmma matmul loop (sm_90): the
// wgmma's registers are undefined until it is waited for, so the loop waits
// for it in the iteration (wait_group 0, through the registers) before the
// branch reads it, and the ring, with no wgmma left in flight, runs one more
// iteration ahead. The same loop inside an scf.if and an scf.while keeps
// one wgmma in flight, as a plain matmul loop does.
// REQUIRES: ptxas
// RUN: tile-opt %s --tile-to-gpu="warpgroup-mma=true" | FileCheck %s --check-prefix=GPU
// RUN: tile-opt %s --tile-to-llvm-nvvm="warpgroup-mma=true" --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90a %t.ptx -o %t.cubin

// GPU-LABEL: gpu.func @if_in_loop
// GPU: scf.for
// GPU: nvvm.cp.async.wait.group 2
// GPU: nvvm.wgmma.fence.aligned
// GPU: nvvm.wgmma.mma_async
// GPU: nvvm.wgmma.commit.group.sync.aligned
// GPU-NOT: nvvm.wgmma.wait.group.sync.aligned
// GPU: tile.ptx.wgmma_wait {{.*}} pending = 0
// GPU: scf.if %{{.*}} -> (vector<64xf32>)
// GPU: arith.mulf %{{.*}} : vector<64xf32>
// GPU: scf.yield
// After the loop: nothing in flight.
// GPU-NOT: wgmma.wait
// GPU: nvvm.cp.async.wait.group 0
// GPU-NEXT: gpu.barrier
// GPU: gpu.return

// CHECK: .target sm_90a
// CHECK: .visible .entry if_in_loop(
// CHECK: cp.async.wait_group 2;
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK-NOT: wgmma.wait_group.sync.aligned 1;
// CHECK: wgmma.wait_group.sync.aligned 0;
// CHECK: mul.f32
func.func @if_in_loop(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %C: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, %nk: i32) attributes {tile.kernel} {
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

// GPU-LABEL: gpu.func @loop_in_if_in_while
// GPU: scf.while
// GPU: scf.if
// GPU: scf.for
// GPU: nvvm.cp.async.wait.group 1
// GPU: nvvm.wgmma.commit.group.sync.aligned
// GPU-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// GPU: scf.yield
// GPU: tile.ptx.wgmma_wait {{.*}} pending = 0
// GPU: nvvm.cp.async.wait.group 0
// GPU-NEXT: gpu.barrier
// GPU: scf.yield %{{.*}} : vector<64xf32>
// GPU: } else {
// GPU: scf.yield %{{.*}} : vector<64xf32>

// CHECK: .visible .entry loop_in_if_in_while(
// CHECK: wgmma.commit_group.sync.aligned;
// CHECK-NEXT: wgmma.wait_group.sync.aligned 1;
func.func @loop_in_if_in_while(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, %C: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, %nk: i32, %tiles: i32) attributes {tile.kernel} {
  %pn = tile.bid 1
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c2 = arith.constant 2 : i32
  %zero = arith.constant dense<0.0> : tensor<128x128xf32>
  %first = tile.bid 0
  %t = scf.while (%pm = %first) : (i32) -> (i32) {
    %more = arith.cmpi slt, %pm, %tiles : i32
    scf.condition(%more) %pm : i32
  } do {
  ^bb0(%pm1: i32):
    %rem = arith.remsi %pm1, %c2 : i32
    %even = arith.cmpi eq, %rem, %c0 : i32
    %acc = scf.if %even -> (tensor<128x128xf32>) {
      %r = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x128xf32>) : i32 {
        %a = tile.load %A[%pm1, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x64xf16>
        %b = tile.load %B[%k, %pn] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<64x128xf16>
        %m = tile.mma %a, %b, %acc0 : tensor<128x64xf16>, tensor<64x128xf16> -> tensor<128x128xf32>
        scf.yield %m : tensor<128x128xf32>
      }
      scf.yield %r : tensor<128x128xf32>
    } else {
      scf.yield %zero : tensor<128x128xf32>
    }
    tile.store %C[%pm1, %pn], %acc : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<128x128xf32>
    %next = arith.addi %pm1, %c2 : i32
    scf.yield %next : i32
  }
  return
}
