// RUN: tile-opt %s | tile-opt | FileCheck %s
// Every tilegpu type and op prints and parses back.

// CHECK-LABEL: func.func @types
// CHECK-SAME: !tilegpu.shared<128x64xf16, slots = 4, swizzle = 128>
// CHECK-SAME: !tilegpu.shared<32x128xbf16, slots = 3, row_stride = 136>
// CHECK-SAME: !tilegpu.shared<64x64xf32, slots = 1>
// CHECK-SAME: !tilegpu.token
// CHECK-SAME: !tilegpu.mbarriers<4>
// CHECK-SAME: !tilegpu.tensor_map<128x64xf16, swizzle = 128>
func.func @types(%a: !tilegpu.shared<128x64xf16, slots = 4, swizzle = 128>,
                 %b: !tilegpu.shared<32x128xbf16, slots = 3, row_stride = 136>,
                 %c: !tilegpu.shared<64x64xf32, slots = 1>,
                 %t: !tilegpu.token, %m: !tilegpu.mbarriers<4>,
                 %map: !tilegpu.tensor_map<128x64xf16, swizzle = 128>) {
  return
}

// CHECK-LABEL: func.func @ring
func.func @ring(%x: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                %i: i32, %j: i32, %s: i32) {
  // CHECK: %[[R:.*]] = tilegpu.alloc_shared {offset = 0 : i64} : !tilegpu.shared<128x64xf16, slots = 4, swizzle = 128>
  %ring = tilegpu.alloc_shared {offset = 0} : !tilegpu.shared<128x64xf16, slots = 4, swizzle = 128>
  // CHECK: %[[S:.*]] = tilegpu.slot %[[R]][%{{.*}}] : !tilegpu.shared<128x64xf16, slots = 4, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
  %slot = tilegpu.slot %ring[%s] : !tilegpu.shared<128x64xf16, slots = 4, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
  // CHECK: %[[T:.*]] = tilegpu.async_copy %{{.*}}[%{{.*}}, %{{.*}}] into %[[S]] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, tensor<128x64xf16> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
  %t = tilegpu.async_copy %x[%i, %j] into %slot : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, tensor<128x64xf16> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
  // CHECK: %[[G:.*]] = tilegpu.async_group %[[T]]
  %g = tilegpu.async_group %t
  // CHECK: tilegpu.async_wait %[[G]] pending = 2
  tilegpu.async_wait %g pending = 2
  return
}

// CHECK-LABEL: func.func @mma
func.func @mma(%a: !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>,
               %b: !tilegpu.shared<64x256xf16, slots = 1, swizzle = 128>,
               %kt: !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>,
               %q: tensor<128x64xf16>, %acc: tensor<128x256xf32>,
               %acc2: tensor<128x128xf32>) -> (tensor<128x256xf32>, tensor<128x128xf32>) {
  // CHECK: tilegpu.mma %{{.*}}, %{{.*}}, %{{.*}} {in_flight, tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 256], instr = [64, 256, 16]}>} : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.shared<64x256xf16, slots = 1, swizzle = 128> -> tensor<128x256xf32>
  %r = tilegpu.mma %a, %b, %acc {in_flight, tiling = #tile.mma_tiling<{warps = [8, 1], warp_tile = [16, 256], instr = [64, 256, 16]}>} : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.shared<64x256xf16, slots = 1, swizzle = 128> -> tensor<128x256xf32>
  // A in registers, B^T (K of attention) in shared memory.
  // CHECK: tilegpu.mma %{{.*}}, %{{.*}}, %{{.*}} {b_transposed} : tensor<128x64xf16>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> tensor<128x128xf32>
  %s = tilegpu.mma %q, %kt, %acc2 {b_transposed} : tensor<128x64xf16>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128> -> tensor<128x128xf32>
  // CHECK: tilegpu.wait_mma %{{.*}} pending = 0 : tensor<128x256xf32> -> tensor<128x256xf32>
  %w = tilegpu.wait_mma %r pending = 0 : tensor<128x256xf32> -> tensor<128x256xf32>
  return %w, %s : tensor<128x256xf32>, tensor<128x128xf32>
}

// CHECK-LABEL: func.func @tma
func.func @tma(%map: !tilegpu.tensor_map<128x64xf16, swizzle = 128>, %i: i32,
               %j: i32, %s: i32, %bytes: i32, %parity: i32) {
  // CHECK: tilegpu.alloc_mbarriers {offset = 1024 : i64} : !tilegpu.mbarriers<4>
  %bars = tilegpu.alloc_mbarriers {offset = 1024} : !tilegpu.mbarriers<4>
  %ring = tilegpu.alloc_shared : !tilegpu.shared<128x64xf16, slots = 4, swizzle = 128>
  %slot = tilegpu.slot %ring[%s] : !tilegpu.shared<128x64xf16, slots = 4, swizzle = 128> -> !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
  %one = arith.constant 1 : i32
  // CHECK: tilegpu.mbarrier_init %{{.*}}[%{{.*}}], %{{.*}} : !tilegpu.mbarriers<4>
  tilegpu.mbarrier_init %bars[%s], %one : !tilegpu.mbarriers<4>
  // CHECK: tilegpu.mbarrier_arrive_expect_tx %{{.*}}[%{{.*}}], %{{.*}} : !tilegpu.mbarriers<4>
  tilegpu.mbarrier_arrive_expect_tx %bars[%s], %bytes : !tilegpu.mbarriers<4>
  // CHECK: tilegpu.tma_load %{{.*}}[%{{.*}}, %{{.*}}] into %{{.*}}, %{{.*}}[%{{.*}}] : !tilegpu.tensor_map<128x64xf16, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<4>
  tilegpu.tma_load %map[%j, %i] into %slot, %bars[%s] : !tilegpu.tensor_map<128x64xf16, swizzle = 128>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<4>
  // CHECK: tilegpu.mbarrier_wait %{{.*}}[%{{.*}}], %{{.*}} : !tilegpu.mbarriers<4>
  tilegpu.mbarrier_wait %bars[%s], %parity : !tilegpu.mbarriers<4>
  // CHECK: tilegpu.mbarrier_arrive %{{.*}}[%{{.*}}] : !tilegpu.mbarriers<4>
  tilegpu.mbarrier_arrive %bars[%s] : !tilegpu.mbarriers<4>
  // CHECK: tilegpu.tma_store %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}] : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.tensor_map<128x64xf16, swizzle = 128>
  tilegpu.tma_store %slot into %map[%j, %i] : !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>, !tilegpu.tensor_map<128x64xf16, swizzle = 128>
  // A block of four 128-byte panels, one box (a panel) each.
  %wide = tilegpu.alloc_shared : !tilegpu.shared<128x256xf16, slots = 1, swizzle = 128>
  // CHECK: tilegpu.tma_load %{{.*}}[%{{.*}}, %{{.*}}] into %{{.*}}, %{{.*}}[%{{.*}}] : !tilegpu.tensor_map<128x64xf16, swizzle = 128>, !tilegpu.shared<128x256xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<4>
  tilegpu.tma_load %map[%j, %i] into %wide, %bars[%s] : !tilegpu.tensor_map<128x64xf16, swizzle = 128>, !tilegpu.shared<128x256xf16, slots = 1, swizzle = 128>, !tilegpu.mbarriers<4>
  // A row of per-column values, read back in a layout of the reader's.
  %rows = tilegpu.alloc_shared : !tilegpu.shared<1x64xf32, slots = 4>
  %row = tilegpu.slot %rows[%s] : !tilegpu.shared<1x64xf32, slots = 4> -> !tilegpu.shared<1x64xf32, slots = 1>
  // CHECK: tilegpu.read_shared %{{.*}} : !tilegpu.shared<1x64xf32, slots = 1> -> tensor<1x64xf32>
  %r = tilegpu.read_shared %row : !tilegpu.shared<1x64xf32, slots = 1> -> tensor<1x64xf32>
  // CHECK: tilegpu.mbarrier_inval %{{.*}}[%{{.*}}] : !tilegpu.mbarriers<4>
  tilegpu.mbarrier_inval %bars[%s] : !tilegpu.mbarriers<4>
  return
}
