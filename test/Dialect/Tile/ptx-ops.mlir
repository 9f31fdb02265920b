// RUN: tile-opt %s | tile-opt | FileCheck %s

// The tile.ptx ops round-trip.
// CHECK-LABEL: func.func @ptx_ops
// CHECK: %{{.*}}:4 = tile.ptx.ld_global %arg0, %arg1 {memory_order = #tile.memory_order<acquire>, memory_scope = #tile.memory_scope<device>, pad = array<i64: 0, 1, 2, 3>} : i32, i32, i32, i32
// CHECK: tile.ptx.ld_global %arg0, %arg1 {byte, pad = array<i64: 255>} : i16
// CHECK: tile.ptx.st_global %arg0, %arg1, %{{.*}}, %{{.*}} {memory_order = #tile.memory_order<release>, memory_scope = #tile.memory_scope<sys>} : i32, i32
// CHECK: tile.ptx.st_global %arg0, %arg1, %{{.*}} {byte} : i16
// CHECK: tile.ptx.atom_global add %arg0, %arg2 {memory_scope = #tile.memory_scope<block>} : f64
// CHECK: tile.ptx.atom_global xor %arg0, %arg3 {memory_scope = #tile.memory_scope<sys>} : i64
func.func @ptx_ops(%p: !llvm.ptr<1>, %in: i1, %d: f64, %l: i64) {
  %w:4 = tile.ptx.ld_global %p, %in {pad = array<i64: 0, 1, 2, 3>, memory_order = #tile.memory_order<acquire>, memory_scope = #tile.memory_scope<device>} : i32, i32, i32, i32
  %b = tile.ptx.ld_global %p, %in {byte, pad = array<i64: 255>} : i16
  tile.ptx.st_global %p, %in, %w#0, %w#1 {memory_order = #tile.memory_order<release>, memory_scope = #tile.memory_scope<sys>} : i32, i32
  tile.ptx.st_global %p, %in, %b {byte} : i16
  %a = tile.ptx.atom_global add %p, %d {memory_scope = #tile.memory_scope<block>} : f64
  %x = tile.ptx.atom_global xor %p, %l {memory_scope = #tile.memory_scope<sys>} : i64
  return
}
