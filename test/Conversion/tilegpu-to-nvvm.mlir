// RUN: tile-opt %s --convert-tile-to-gpu | FileCheck %s
// convert-tile-to-gpu on the tilegpu ops of tile-pipeline-mma: buffers at
// their allocated offsets in the shared window, scratch above them, slots
// a byte offset, copies cp.async into the buffer's layout, groups and
// waits cp.async's, and the tokens gone.

// A 64x32 f16 block into a ring of 64-byte swizzled panels: each thread
// copies 16-byte runs (8 f16) with a zero fill past the array's end.
#blocked = #tile.blocked<{sizePerThread = [1, 8], threadsPerWarp = [8, 4], warpsPerCTA = [4, 1], order = [1, 0]}>
module attributes {tile.num_warps = 4 : i32} {
  // CHECK: gpu.module @tile_kernels attributes {tile.num_warps = 4 : i32, tile.shared_mem = 16384 : i32}
  // CHECK-LABEL: gpu.func @copies
  // CHECK-SAME: tilegpu.shared_bytes = 16384 : i64
  // The ring at offset 1024 of the window.
  // CHECK: %[[W:.*]] = llvm.mlir.addressof @tile_shared : !llvm.ptr<3>
  // CHECK: %[[R:.*]] = llvm.getelementptr %[[W]][1024] : (!llvm.ptr<3>) -> !llvm.ptr<3>, i8
  // Slot %s: s * 4096 bytes.
  // CHECK: %[[OFF:.*]] = arith.muli %{{.*}}, %{{.*}} : i32
  // CHECK: %[[SLOT:.*]] = llvm.getelementptr %[[R]][%[[OFF]]] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
  // CHECK: %[[DST:.*]] = llvm.getelementptr %[[SLOT]][%{{.*}}] : (!llvm.ptr<3>, i32) -> !llvm.ptr<3>, i8
  // CHECK: %[[N:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : i32
  // CHECK: nvvm.cp.async.shared.global %[[DST]], %{{.*}}, 16, cache = cg, %[[N]]
  // CHECK: nvvm.cp.async.commit.group
  // CHECK: nvvm.cp.async.wait.group 1
  // CHECK-NOT: tilegpu.
  func.func @copies(%x: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                    %i: i32, %s: i32) attributes {tile.kernel, tilegpu.shared_bytes = 16384 : i64} {
    %ring = tilegpu.alloc_shared {offset = 1024} : !tilegpu.shared<64x32xf16, slots = 3, swizzle = 64>
    %slot = tilegpu.slot %ring[%s] : !tilegpu.shared<64x32xf16, slots = 3, swizzle = 64> -> !tilegpu.shared<64x32xf16, slots = 1, swizzle = 64>
    %t = tilegpu.async_copy %x[%i, %i] into %slot : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>, tensor<64x32xf16, #blocked> -> !tilegpu.shared<64x32xf16, slots = 1, swizzle = 64>
    %g = tilegpu.async_group %t
    tilegpu.async_wait %g pending = 1
    return
  }
}
