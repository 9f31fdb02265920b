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

// -----

// A warp-specialized kernel (one producer and two consumer warpgroups,
// 40 / 232 registers) under occupancy 2: two blocks of 384 threads cap it at
// 80 registers a thread, which leaves the consumers 96. With no accumulator
// to hold (this kernel has no mma) the hint stands and the consumers ask for
// 96; cuTile's attention sample at head dim 64, whose S and O take 96 a
// consumer thread, drops it (test_transposed_mma_loads.py checks its PTX).
module attributes {tile.num_warps = 12 : i32} {
  // CHECK: gpu.func @warp_specialized
  // CHECK-SAME: nvvm.maxnreg = 80
  // CHECK-SAME: nvvm.minctasm = 2
  // CHECK: nvvm.setmaxregister increase 96
  func.func @warp_specialized(%n: i32) attributes {tile.kernel, tile.occupancy = 2 : i32, tilegpu.shared_bytes = 65536 : i32} {
    %c0 = arith.constant 0 : i32
    %producer = arith.cmpi eq, %n, %c0 : i32
    scf.if %producer {
      nvvm.setmaxregister decrease 40
    } else {
      nvvm.setmaxregister increase 232
    } {tilegpu.warp_specialized = #tilegpu.warp_specialized<consumers = 8, producers = 4>}
    return
  }
}
