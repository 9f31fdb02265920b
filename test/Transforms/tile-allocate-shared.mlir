// RUN: tile-opt %s --split-input-file --tile-allocate-shared | FileCheck %s
// Buffers live at the same time are laid out one after the other, each at
// its type's alignment (1024 bytes for swizzled panels, 128 for dense
// blocks, which TMA reads and writes, 16 for padded rows, 8 for mbarriers);
// the kernel records where they end, where convert-tile-to-gpu's scratch
// starts.

// CHECK-LABEL: func.func @rings
// CHECK-SAME: tilegpu.shared_bytes = 99344 : i64
func.func @rings(%i: i32) attributes {tile.kernel} {
  // 4 x 8 KB swizzled: [0, 32768).
  // CHECK: tilegpu.alloc_shared {offset = 0 : i64} : !tilegpu.shared<128x32xf16, slots = 4, swizzle = 64>
  %a = tilegpu.alloc_shared : !tilegpu.shared<128x32xf16, slots = 4, swizzle = 64>
  // 3 slots of 40 x 72 x 2 = 5760 bytes (padded rows): [32768, 50048).
  // CHECK: tilegpu.alloc_shared {offset = 32768 : i64} : !tilegpu.shared<40x64xf16, slots = 3, row_stride = 72>
  %p = tilegpu.alloc_shared : !tilegpu.shared<40x64xf16, slots = 3, row_stride = 72>
  // Two mbarriers at the next 8 bytes: [50048, 50064).
  // CHECK: tilegpu.alloc_mbarriers {offset = 50048 : i64} : !tilegpu.mbarriers<2>
  %m = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<2>
  // Swizzled again: up to the next 1024 (50176), 3 x 16 KB: [50176, 99328).
  // CHECK: tilegpu.alloc_shared {offset = 50176 : i64} : !tilegpu.shared<64x128xf16, slots = 3, swizzle = 128>
  %b = tilegpu.alloc_shared : !tilegpu.shared<64x128xf16, slots = 3, swizzle = 128>
  // One dense f32 (16 bytes): the gap below the swizzled buffer,
  // [50064, 50176), holds no 128-byte aligned 16 bytes (a TMA copy into
  // 16-byte aligned bytes faults), so it goes after: [99328, 99344).
  // CHECK: tilegpu.alloc_shared {offset = 99328 : i64} : !tilegpu.shared<1x1xf32, slots = 1>
  %s = tilegpu.alloc_shared : !tilegpu.shared<1x1xf32, slots = 1>
  // All still in use here.
  %sa = tilegpu.slot %a[%i] : !tilegpu.shared<128x32xf16, slots = 4, swizzle = 64> -> !tilegpu.shared<128x32xf16, slots = 1, swizzle = 64>
  %sp = tilegpu.slot %p[%i] : !tilegpu.shared<40x64xf16, slots = 3, row_stride = 72> -> !tilegpu.shared<40x64xf16, slots = 1, row_stride = 72>
  tilegpu.mbarrier_arrive %m[%i] : !tilegpu.mbarriers<2>
  %sb = tilegpu.slot %b[%i] : !tilegpu.shared<64x128xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<64x128xf16, slots = 1, swizzle = 128>
  %ss = tilegpu.slot %s[%i] : !tilegpu.shared<1x1xf32, slots = 1> -> !tilegpu.shared<1x1xf32, slots = 1>
  return
}

// -----

// The rings of two loops one after the other share bytes; a buffer used in
// a loop is live for the whole loop.
// CHECK-LABEL: func.func @two_loops
// CHECK-SAME: tilegpu.shared_bytes = 40960 : i64
func.func @two_loops(%n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  // CHECK: tilegpu.alloc_shared {offset = 0 : i64} : !tilegpu.shared<128x64xf16, slots = 2, swizzle = 128>
  %first = tilegpu.alloc_shared : !tilegpu.shared<128x64xf16, slots = 2, swizzle = 128>
  // Live across both loops: beside the first ring.
  // CHECK: tilegpu.alloc_shared {offset = 32768 : i64} : !tilegpu.shared<64x64xf16, slots = 1, swizzle = 128>
  %early = tilegpu.alloc_shared : !tilegpu.shared<64x64xf16, slots = 1, swizzle = 128>
  scf.for %k = %c0 to %n step %c1 : i32 {
    %s = tilegpu.slot %first[%k] : !tilegpu.shared<128x64xf16, slots = 2, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
  }
  // The first ring is dead: the second takes its bytes, not early's.
  // CHECK: tilegpu.alloc_shared {offset = 0 : i64} : !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>
  %second = tilegpu.alloc_shared : !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>
  scf.for %k = %c0 to %n step %c1 : i32 {
    %s = tilegpu.slot %second[%c0] : !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128> -> !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>
  }
  %e = tilegpu.slot %early[%c0] : !tilegpu.shared<64x64xf16, slots = 1, swizzle = 128> -> !tilegpu.shared<64x64xf16, slots = 1, swizzle = 128>
  return
}

// -----

// A kernel without buffers gets no attribute.
// CHECK-LABEL: func.func @none
// CHECK-NOT: tilegpu.shared_bytes
func.func @none() attributes {tile.kernel} {
  return
}

// -----

// Scratch (convert-tile-to-gpu's) starts past the buffers live at a step or
// later: past the ring in the loop, at 0 after it, where the ring is dead
// and nothing is allocated later.
// CHECK-LABEL: func.func @scratch_after_loop
// CHECK-SAME: tilegpu.shared_bytes = 32768 : i64
// CHECK-NEXT: tilegpu.scratch_base 32768
// CHECK: tilegpu.alloc_shared {offset = 0 : i64}
// CHECK: scf.for
// CHECK: tilegpu.scratch_base 0
// CHECK-NEXT: tile.bid 0
func.func @scratch_after_loop(%n: i32) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %ring = tilegpu.alloc_shared : !tilegpu.shared<128x64xf16, slots = 2, swizzle = 128>
  scf.for %k = %c0 to %n step %c1 : i32 {
    %s = tilegpu.slot %ring[%k] : !tilegpu.shared<128x64xf16, slots = 2, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
  }
  %b = tile.bid 0
  return
}

// -----

// A warp-specialized kernel: time runs through the consumers' ops. The
// ring the producer fills and the consumers read dies after the consumers'
// loop, so the epilogue's buffer takes its bytes (first fit, past the
// producer's own buffer); a buffer only the producer uses stays live
// through the whole scf.if. The producer's scratch starts past every
// buffer, the consumers' past the ones live then or later.
// CHECK-LABEL: func.func @warp_specialized
// CHECK-SAME: tilegpu.shared_bytes = 33792 : i64
// CHECK: tilegpu.alloc_shared {offset = 0 : i64} : !tilegpu.shared<1x4xf32, slots = 1>
// CHECK: tilegpu.alloc_shared {offset = 1024 : i64} : !tilegpu.shared<128x64xf16, slots = 2, swizzle = 128>
// CHECK: tilegpu.alloc_mbarriers {offset = 16 : i64}
// CHECK: scf.if
// CHECK-NEXT: tilegpu.scratch_base 33792
// CHECK: } else {
// CHECK-NEXT: tilegpu.scratch_base 33792
// CHECK-NEXT: scf.for
// CHECK: tilegpu.scratch_base 9232
// CHECK-NEXT: tilegpu.alloc_shared {offset = 16 : i64} : !tilegpu.shared<64x64xf16, slots = 1, row_stride = 72>
// CHECK: tilegpu.scratch_base 16
// CHECK-NEXT: tile.bid 0
// CHECK: tilegpu.warp_specialized
// CHECK-NEXT: tilegpu.scratch_base 0
// CHECK-NEXT: return
func.func @warp_specialized(%n: i32, %producer: i1) attributes {tile.kernel} {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %own = tilegpu.alloc_shared : !tilegpu.shared<1x4xf32, slots = 1>
  %ring = tilegpu.alloc_shared : !tilegpu.shared<128x64xf16, slots = 2, swizzle = 128>
  %full = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<2>
  scf.if %producer {
    scf.for %k = %c0 to %n step %c1 : i32 {
      %s = tilegpu.slot %ring[%k] : !tilegpu.shared<128x64xf16, slots = 2, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
      tilegpu.mbarrier_arrive %full[%k] : !tilegpu.mbarriers<2>
      %o = tilegpu.slot %own[%c0] : !tilegpu.shared<1x4xf32, slots = 1> -> !tilegpu.shared<1x4xf32, slots = 1>
    }
  } else {
    scf.for %k = %c0 to %n step %c1 : i32 {
      tilegpu.mbarrier_wait %full[%k], %c0 : !tilegpu.mbarriers<2>
      %s = tilegpu.slot %ring[%k] : !tilegpu.shared<128x64xf16, slots = 2, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
    }
    %stage = tilegpu.alloc_shared : !tilegpu.shared<64x64xf16, slots = 1, row_stride = 72>
    %t = tilegpu.slot %stage[%c0] : !tilegpu.shared<64x64xf16, slots = 1, row_stride = 72> -> !tilegpu.shared<64x64xf16, slots = 1, row_stride = 72>
    %b = tile.bid 0
  } {tilegpu.warp_specialized = #tilegpu.warp_specialized<consumers = 8, producers = 4>}
  return
}

// -----

// A dense ring after a barrier (as a ring of lse rows streamed by TMA in a
// cluster kernel, whose barriers come first) starts at 128 bytes, not at
// the barrier's end: a TMA copy to a 16-byte aligned slot faults with
// "misaligned address". Its slots (256 bytes) stay 128-byte aligned.
// CHECK-LABEL: func.func @dense_after_barrier
// CHECK-SAME: tilegpu.shared_bytes = 896 : i64
// CHECK: tilegpu.alloc_mbarriers {offset = 0 : i64} : !tilegpu.mbarriers<3>
// CHECK: tilegpu.alloc_shared {offset = 128 : i64} : !tilegpu.shared<1x64xf32, slots = 3>
func.func @dense_after_barrier(%i: i32) attributes {tile.kernel} {
  %m = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<3>
  %r = tilegpu.alloc_shared : !tilegpu.shared<1x64xf32, slots = 3>
  tilegpu.mbarrier_arrive %m[%i] : !tilegpu.mbarriers<3>
  %s = tilegpu.slot %r[%i] : !tilegpu.shared<1x64xf32, slots = 3> -> !tilegpu.shared<1x64xf32, slots = 1>
  return
}
