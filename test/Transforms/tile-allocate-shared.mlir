// RUN: tile-opt %s --split-input-file --tile-allocate-shared | FileCheck %s
// Buffers live at the same time are laid out one after the other, each at
// its type's alignment (1024 bytes for swizzled panels, 16 for padded rows,
// 8 for mbarriers); the kernel records where they end, where
// convert-tile-to-gpu's scratch starts.

// CHECK-LABEL: func.func @rings
// CHECK-SAME: tilegpu.shared_bytes = 99328 : i64
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
  // One f32 (16 bytes): first fit, in the gap below the swizzled buffer.
  // CHECK: tilegpu.alloc_shared {offset = 50064 : i64} : !tilegpu.shared<1x1xf32, slots = 1>
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
