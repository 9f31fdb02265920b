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
