// cuTile's memory_order/memory_scope in PTX. Loads and stores with an
// ordering become ld.<sem>.<scope> / st.<sem>.<scope>; an acquire has a block
// barrier after it, a release one before it (the block is one thread of the
// memory model). Relaxed atomics at block or system scope are atom.relaxed
// with that scope and no fence or barrier (NVPTX would print every atomicrmw
// at gpu scope); acq_rel at sys scope puts fence.acq_rel.sys around them;
// cmpxchg carries its own ordering and scope. The default (an atomic with no
// attributes) stays acq_rel at gpu scope.
// REQUIRES: ptxas
// RUN: tile-opt %s --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin

// CHECK-LABEL: .visible .entry loads_stores(
// CHECK: ld.acquire.gpu.global.v4.b32
// CHECK: bar.sync 0;
// CHECK: ld.relaxed.sys.global.v4.b32
// CHECK-NOT: bar.sync
// CHECK: bar.sync 0;
// CHECK: st.release.cta.global.v4.b32
// CHECK: st.relaxed.gpu.global.v4.b32
// CHECK: ret;
module {
  func.func @loads_stores(%x: !tile.array<?xf32, strides = [1], align = 16, div = 16>,
                          %y: !tile.array<?xf32, strides = [1], align = 16, div = 16>) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %a = tile.load %x[%c0] {memory_order = #tile.memory_order<acquire>, memory_scope = #tile.memory_scope<device>} : !tile.array<?xf32, strides = [1], align = 16, div = 16> -> tensor<512xf32>
    %b = tile.load %x[%c1] {memory_order = #tile.memory_order<relaxed>, memory_scope = #tile.memory_scope<sys>} : !tile.array<?xf32, strides = [1], align = 16, div = 16> -> tensor<512xf32>
    %s = arith.addf %a, %b : tensor<512xf32>
    tile.store %y[%c0], %s {memory_order = #tile.memory_order<release>, memory_scope = #tile.memory_scope<block>} : !tile.array<?xf32, strides = [1], align = 16, div = 16>, tensor<512xf32>
    tile.store %y[%c1], %s {memory_order = #tile.memory_order<relaxed>, memory_scope = #tile.memory_scope<device>} : !tile.array<?xf32, strides = [1], align = 16, div = 16>, tensor<512xf32>
    return
  }

  // CHECK-LABEL: .visible .entry atomics(
  // CHECK-NOT: bar.sync
  // CHECK-NOT: fence
  // CHECK: atom.relaxed.cta.global.add.u32
  // CHECK-NOT: fence
  // CHECK-NOT: bar.sync
  // CHECK: atom.relaxed.sys.global.max.s32
  // CHECK: bar.sync 0;
  // CHECK-NEXT: fence.acq_rel.sys;
  // CHECK: atom.relaxed.sys.global.add.f32
  // CHECK: fence.acq_rel.sys;
  // CHECK-NEXT: bar.sync 0;
  // CHECK: atom.acquire.cta.global.cas.b32
  // The acquire's barrier, then the default xchg's release barrier and fence.
  // CHECK: bar.sync 0;
  // CHECK-NEXT: bar.sync 0;
  // CHECK-NEXT: fence.acq_rel.gpu;
  // CHECK: atom.global.exch.b32
  // CHECK: fence.acq_rel.gpu;
  // CHECK: ret;
  func.func @atomics(%n: !tile.array<?xi32, strides = [1], align = 16>,
                     %f: !tile.array<?xf32, strides = [1], align = 16>) attributes {tile.kernel} {
    %idx = tile.iota : tensor<128xi32>
    %one = arith.constant dense<1> : tensor<128xi32>
    %onef = arith.constant dense<1.0> : tensor<128xf32>
    %a = tile.atomic_rmw add %n[%idx], %one {memory_order = #tile.memory_order<relaxed>, memory_scope = #tile.memory_scope<block>} : !tile.array<?xi32, strides = [1], align = 16>[tensor<128xi32>], tensor<128xi32>
    %b = tile.atomic_rmw max %n[%idx], %one {memory_order = #tile.memory_order<relaxed>, memory_scope = #tile.memory_scope<sys>} : !tile.array<?xi32, strides = [1], align = 16>[tensor<128xi32>], tensor<128xi32>
    %c = tile.atomic_rmw add %f[%idx], %onef {memory_order = #tile.memory_order<acq_rel>, memory_scope = #tile.memory_scope<sys>} : !tile.array<?xf32, strides = [1], align = 16>[tensor<128xi32>], tensor<128xf32>
    %d = tile.atomic_cas %n[%idx], %one, %one {memory_order = #tile.memory_order<acquire>, memory_scope = #tile.memory_scope<block>} : !tile.array<?xi32, strides = [1], align = 16>[tensor<128xi32>], tensor<128xi32>
    %e = tile.atomic_rmw xchg %n[%idx], %one : !tile.array<?xi32, strides = [1], align = 16>[tensor<128xi32>], tensor<128xi32>
    return
  }

  // A slice moves the base pointer by start * stride and bounds the axis by
  // stop - start; a raw view keeps the base and is unbounded.
  // CHECK-LABEL: .visible .entry views(
  // CHECK: mul.lo.s64
  // CHECK: st.global
  // CHECK: ret;
  func.func @views(%x: !tile.array<?x?xf32, strides = [?, 1], align = 16>, %lo: i32, %hi: i32) attributes {tile.kernel} {
    %c0 = arith.constant 0 : i32
    %s = tile.array_slice %x[0] %lo, %hi : !tile.array<?x?xf32, strides = [?, 1], align = 16> -> !tile.array<?x?xf32, strides = [?, 1], align = 4>
    %t = tile.load %s[%c0, %c0] : !tile.array<?x?xf32, strides = [?, 1], align = 4> -> tensor<8x16xf32>
    tile.store %s[%c0, %c0], %t : !tile.array<?x?xf32, strides = [?, 1], align = 4>, tensor<8x16xf32>
    %r = tile.raw_view %x : !tile.array<?x?xf32, strides = [?, 1], align = 16> -> !tile.array<?xf32, strides = [1], align = 4>
    %i = tile.iota : tensor<128xi32>
    %g = tile.gather %r[%i] : !tile.array<?xf32, strides = [1], align = 4>[tensor<128xi32>] -> tensor<128xf32>
    tile.scatter %r[%i], %g : !tile.array<?xf32, strides = [1], align = 4>[tensor<128xi32>], tensor<128xf32>
    return
  }
}
