// RUN: tile-opt %s | tile-opt | FileCheck %s
// The two wgmma forms NVVM lacks, as typed ops (their asm, byte for byte
// the PTX of before, is pinned by Target/matmul-wgmma.mlir and
// Target/attention.mlir).

// CHECK-LABEL: func.func @wgmma
// CHECK: %[[D:.*]]:4 = tile.ptx.wgmma_reg_a(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}), (%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}), %{{.*}} {b_k_major, input_type = bf16, n = 8 : i64} : (f32, f32, f32, f32), (i32, i32, i32, i32) -> f32, f32, f32, f32
// CHECK: tile.ptx.wgmma_wait %[[D]]#0, %[[D]]#1, %[[D]]#2, %[[D]]#3 pending = 0 : f32, f32, f32, f32 -> f32, f32, f32, f32
func.func @wgmma(%c: f32, %a: i32, %desc: i64) -> f32 {
  %d:4 = tile.ptx.wgmma_reg_a(%c, %c, %c, %c), (%a, %a, %a, %a), %desc {n = 8, input_type = bf16, b_k_major} : (f32, f32, f32, f32), (i32, i32, i32, i32) -> f32, f32, f32, f32
  %w:4 = tile.ptx.wgmma_wait %d#0, %d#1, %d#2, %d#3 pending = 0 : f32, f32, f32, f32 -> f32, f32, f32, f32
  return %w#3 : f32
}
