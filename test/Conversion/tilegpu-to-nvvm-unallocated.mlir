// RUN: not tile-opt %s --convert-tile-to-gpu 2>&1 | FileCheck %s
// A buffer without an offset stops the conversion: tile-allocate-shared
// comes first.
module attributes {tile.num_warps = 4 : i32} {
  func.func @unallocated() attributes {tile.kernel} {
    // CHECK: error: 'tilegpu.alloc_shared' op has no offset; run tile-allocate-shared first
    %ring = tilegpu.alloc_shared : !tilegpu.shared<64x32xf16, slots = 3, swizzle = 64>
    return
  }
}
