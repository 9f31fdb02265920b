// RUN: tile-opt %s --split-input-file --convert-tile-to-gpu | FileCheck %s

// @tile.kernel(occupancy=N) reaches the lowering as tile.occupancy on the
// kernel: it becomes nvvm.minctasm (blocks per SM the registers must allow).

module attributes {tile.num_warps = 4 : i32} {
  // CHECK: gpu.func @occ(%{{.*}}: i32) kernel attributes {{{.*}}nvvm.minctasm = 3 : i32
  func.func @occ(%n: i32) attributes {tile.kernel, tile.occupancy = 3 : i32} {
    return
  }
}

// -----

// Without the hint no minimum is set (this kernel has no mma).
module attributes {tile.num_warps = 4 : i32} {
  // CHECK: gpu.func @plain
  // CHECK-NOT: minctasm
  // CHECK: gpu.return
  func.func @plain(%n: i32) attributes {tile.kernel} {
    return
  }
}

// -----

// An occupancy whose blocks cannot share an SM's 228 KB of shared memory
// (two blocks of 160 KB of rings, as cuTile's attention sample asks at
// 128x128 blocks) sets no minimum: the register cap would only spill. One
// that fits keeps it.
module attributes {tile.num_warps = 4 : i32} {
  // CHECK: gpu.func @too_big
  // CHECK-NOT: minctasm
  // CHECK: gpu.return
  func.func @too_big(%n: i32) attributes {tile.kernel, tile.occupancy = 2 : i32, tilegpu.shared_bytes = 163840 : i32} {
    return
  }
}

// -----

module attributes {tile.num_warps = 4 : i32} {
  // CHECK: gpu.func @fits(%{{.*}}: i32) kernel attributes {{{.*}}nvvm.minctasm = 2 : i32
  func.func @fits(%n: i32) attributes {tile.kernel, tile.occupancy = 2 : i32, tilegpu.shared_bytes = 65536 : i32} {
    return
  }
}
