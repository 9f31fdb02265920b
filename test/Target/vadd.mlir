// Vector add: contiguous f32 tiles load and store as 16-byte vectors.
// REQUIRES: ptxas
// RUN: tile-opt %s --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: tile-opt %s --tile-to-llvm-nvvm --tile-emit-ptx="chip=sm_80 output=%t80.ptx" -o /dev/null
// RUN: %ptxas -arch=sm_80 %t80.ptx -o %t80.cubin

// CHECK: .target sm_90
// CHECK: .visible .entry vadd(
// CHECK-NEXT: .param .u64 .ptr .global .align 1 vadd_param_0,
// CHECK-NEXT: .param .u64 vadd_param_1,
// CHECK-NEXT: .param .u64 vadd_param_2,
// CHECK: .maxntid 128, 1, 1
// Counted, not ordered: scheduling for register pressure interleaves them.
// Plain add.f32: fp contraction is allowed (as in Triton and nvcc).
// RUN: grep -c "ld.global.v4.b32" %t.ptx | FileCheck %s --check-prefix=LOADS
// RUN: grep -c "add.f32" %t.ptx | FileCheck %s --check-prefix=ADDS
// RUN: grep -c "st.global.v4.b32" %t.ptx | FileCheck %s --check-prefix=STORES
// LOADS: {{^}}4{{$}}
// ADDS: {{^}}8{{$}}
// STORES: {{^}}2{{$}}
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

module {
  func.func @vadd(%x: !tile.array<?xf32, strides = [1], align = 16, div = 16>,
                  %y: !tile.array<?xf32, strides = [1], align = 16, div = 16>,
                  %o: !tile.array<?xf32, strides = [1], align = 16, div = 16>,
                  %n: i32) attributes {tile.kernel} {
    %i = tile.bid 0
    %a = tile.load %x[%i] : !tile.array<?xf32, strides = [1], align = 16, div = 16> -> tensor<1024xf32>
    %b = tile.load %y[%i] : !tile.array<?xf32, strides = [1], align = 16, div = 16> -> tensor<1024xf32>
    %c = arith.addf %a, %b : tensor<1024xf32>
    tile.store %o[%i], %c : !tile.array<?xf32, strides = [1], align = 16, div = 16>, tensor<1024xf32>
    return
  }
}
