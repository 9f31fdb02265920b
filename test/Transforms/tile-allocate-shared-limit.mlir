// RUN: tile-opt %s --split-input-file --tile-allocate-shared -verify-diagnostics
// Buffers live at the same time that end past the 227 KB (232448 bytes) a
// block can have are an error at the largest, not a kernel whose launch
// fails.

func.func @too_large(%i: i32) attributes {tile.kernel} {
  // 3 x 32 KB and 4 x 32 KB: 229376 bytes; with Q's 16 KB, 245760.
  %a = tilegpu.alloc_shared : !tilegpu.shared<128x128xf16, slots = 3, swizzle = 128>
  // expected-error @+1 {{this kernel's shared-memory buffers need 245760 bytes, more than the 232448 a block can have; the largest, for this op, takes 131072: use fewer stages (num_stages) or smaller tiles}}
  %b = tilegpu.alloc_shared : !tilegpu.shared<128x128xf16, slots = 4, swizzle = 128>
  %q = tilegpu.alloc_shared : !tilegpu.shared<64x128xf16, slots = 1, swizzle = 128>
  %sa = tilegpu.slot %a[%i] : !tilegpu.shared<128x128xf16, slots = 3, swizzle = 128> -> !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>
  %sb = tilegpu.slot %b[%i] : !tilegpu.shared<128x128xf16, slots = 4, swizzle = 128> -> !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>
  %sq = tilegpu.slot %q[%i] : !tilegpu.shared<64x128xf16, slots = 1, swizzle = 128> -> !tilegpu.shared<64x128xf16, slots = 1, swizzle = 128>
  return
}

// -----

// Just under the limit is fine: 7 x 32 KB, 2 KB and eight mbarriers
// (231488 bytes).
func.func @at_the_limit(%i: i32) attributes {tile.kernel} {
  %a = tilegpu.alloc_shared : !tilegpu.shared<128x128xf16, slots = 7, swizzle = 128>
  %p = tilegpu.alloc_shared : !tilegpu.shared<16x64xf16, slots = 1>
  %m = tilegpu.alloc_mbarriers : !tilegpu.mbarriers<8>
  %sa = tilegpu.slot %a[%i] : !tilegpu.shared<128x128xf16, slots = 7, swizzle = 128> -> !tilegpu.shared<128x128xf16, slots = 1, swizzle = 128>
  %sp = tilegpu.slot %p[%i] : !tilegpu.shared<16x64xf16, slots = 1> -> !tilegpu.shared<16x64xf16, slots = 1>
  tilegpu.mbarrier_arrive %m[%i] : !tilegpu.mbarriers<8>
  return
}
