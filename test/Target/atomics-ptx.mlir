// The orderings tile atomics reach PTX with: a spin lock (scalar atomic_cas
// in a while loop), the update it protects, its release (atomic_xchg), and a
// tile atomic_add. cmpxchg keeps acq_rel at gpu scope; atomicrmw (relaxed in
// PTX whatever its LLVM ordering) sits between fence.acq_rel.gpu. One thread
// (tid.x 0) runs a scalar atomic; the block meets at a barrier before it and
// reads its old value from shared memory after it.
// REQUIRES: ptxas
// RUN: tile-opt %s --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin

// CHECK: .visible .entry lock(
// CHECK: mov.u32 [[TID:%r[0-9]+]], %tid.x;
// CHECK: setp.eq.b32 %p{{[0-9]+}}, [[TID]], 0;
// The loop's exit test: every thread reads the owner's old value.
// CHECK: bar.sync 0;
// CHECK-NEXT: ld.shared.b32 [[ALL:%r[0-9]+]], [tile_shared];
// CHECK-NEXT: setp.eq.b32 [[HELD:%p[0-9]+]], [[ALL]], 1;
// CHECK-NEXT: @[[HELD]] bra{{.*}} [[SPIN:\$L__BB0_[0-9]+]];
// CHECK: [[SPIN]]:
// CHECK-NEXT: bar.sync 0;
// CHECK-NOT: fence
// CHECK: atom.acq_rel.gpu.global.cas.b32 [[OLD:%r[0-9]+]], [%rd{{[0-9]+}}], 0, 1;
// CHECK: st.shared.b32 [tile_shared], [[OLD]];
// CHECK: ld.global.b32
// CHECK: st.global.b32
// CHECK: bar.sync 0;
// CHECK-NEXT: fence.acq_rel.gpu;
// CHECK: atom.global.exch.b32
// CHECK: fence.acq_rel.gpu;
// CHECK-NEXT: bar.sync 0;
// CHECK: bar.sync 0;
// CHECK-NEXT: fence.acq_rel.gpu;
// CHECK: atom.global.add.f32
// CHECK: fence.acq_rel.gpu;
// CHECK-NEXT: bar.sync 0;
// CHECK: ret;

module {
  func.func @lock(%locks: !tile.array<?xi32, strides = [1], align = 16>,
                  %cnt: !tile.array<?xi32, strides = [1], align = 16>,
                  %x: !tile.array<?xf32, strides = [1], align = 16, div = 16>,
                  %sum: !tile.array<?xf32, strides = [1], align = 16>) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %zero = arith.constant dense<0> : tensor<i32>
    %one = arith.constant dense<1> : tensor<i32>
    scf.while : () -> () {
      %old = tile.atomic_cas %locks[%zero], %zero, %one : !tile.array<?xi32, strides = [1], align = 16>[tensor<i32>], tensor<i32>
      %held = arith.cmpi eq, %old, %one : tensor<i32>
      %h = tensor.extract %held[] : tensor<i1>
      scf.condition(%h)
    } do {
      scf.yield
    }
    %v = tile.load %cnt[%c0] : !tile.array<?xi32, strides = [1], align = 16> -> tensor<1xi32>
    %one1 = arith.constant dense<1> : tensor<1xi32>
    %w = arith.addi %v, %one1 : tensor<1xi32>
    tile.store %cnt[%c0], %w : !tile.array<?xi32, strides = [1], align = 16>, tensor<1xi32>
    %r = tile.atomic_rmw xchg %locks[%zero], %zero : !tile.array<?xi32, strides = [1], align = 16>[tensor<i32>], tensor<i32>
    %t = tile.load %x[%c0] : !tile.array<?xf32, strides = [1], align = 16, div = 16> -> tensor<128xf32>
    %idx = arith.constant dense<0> : tensor<128xi32>
    %a = tile.atomic_rmw add %sum[%idx], %t : !tile.array<?xf32, strides = [1], align = 16>[tensor<128xi32>], tensor<128xf32>
    return
  }
}
