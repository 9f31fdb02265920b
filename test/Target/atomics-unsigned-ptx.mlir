// umax/umin (tile.atomic_max/min on unsigned arrays: the IR's integers are
// signless, so the frontend picks the kind) reach PTX as unsigned atomics,
// max/min as signed ones; the block-scoped form takes the .u32 inline PTX.
// REQUIRES: ptxas
// RUN: tile-opt %s --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 %t.ptx -o %t.cubin
// RUN: tile-opt %s -convert-tile-to-host | FileCheck %s --check-prefix=HOST

// CHECK: .visible .entry minmax(
// CHECK-DAG: atom.global.max.u32
// CHECK-DAG: atom.global.min.u64
// CHECK-DAG: atom.global.max.s32
// CHECK-DAG: atom.relaxed.cta.global.max.u32
// HOST-DAG: memref.atomic_rmw maxu
// HOST-DAG: memref.atomic_rmw minu
// HOST-DAG: memref.atomic_rmw maxs

module {
  func.func @minmax(%u: !tile.array<?xi32, strides = [1], align = 16>,
                    %w: !tile.array<?xi64, strides = [1], align = 16>) attributes {tile.kernel} {
    %idx = arith.constant dense<0> : tensor<128xi32>
    %v = arith.constant dense<7> : tensor<128xi32>
    %v64 = arith.constant dense<7> : tensor<128xi64>
    %a = tile.atomic_rmw umax %u[%idx], %v : !tile.array<?xi32, strides = [1], align = 16>[tensor<128xi32>], tensor<128xi32>
    %b = tile.atomic_rmw umin %w[%idx], %v64 : !tile.array<?xi64, strides = [1], align = 16>[tensor<128xi32>], tensor<128xi64>
    %c = tile.atomic_rmw max %u[%idx], %v : !tile.array<?xi32, strides = [1], align = 16>[tensor<128xi32>], tensor<128xi32>
    %d = tile.atomic_rmw umax %u[%idx], %v {memory_scope = #tile.memory_scope<block>} : !tile.array<?xi32, strides = [1], align = 16>[tensor<128xi32>], tensor<128xi32>
    return
  }
}
