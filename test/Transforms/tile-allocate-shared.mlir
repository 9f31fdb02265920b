// RUN: tile-opt %s --split-input-file --tile-allocate-shared | FileCheck %s
// Buffers in program order, each at its type's alignment (1024 bytes for
// swizzled panels, 16 for padded rows, 8 for mbarriers); the kernel records
// where they end, where convert-tile-to-gpu's scratch starts.

// CHECK-LABEL: func.func @rings
// CHECK-SAME: tilegpu.shared_bytes = 99344 : i64
func.func @rings() attributes {tile.kernel} {
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
  // One f32: 16 bytes at 99328.
  // CHECK: tilegpu.alloc_shared {offset = 99328 : i64} : !tilegpu.shared<1x1xf32, slots = 1>
  %s = tilegpu.alloc_shared : !tilegpu.shared<1x1xf32, slots = 1>
  return
}

// -----

// A kernel without buffers gets no attribute.
// CHECK-LABEL: func.func @none
// CHECK-NOT: tilegpu.shared_bytes
func.func @none() attributes {tile.kernel} {
  return
}
