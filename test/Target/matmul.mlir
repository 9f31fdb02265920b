// 128x128x32 f16 matmul with a K loop: ldmatrix + mma.sync m16n8k16.
// REQUIRES: ptxas
// RUN: tile-opt %s --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: tile-opt %s --tile-to-gpu | FileCheck %s --check-prefix=PIPE
// RUN: tile-opt %s --tile-to-llvm-nvvm --tile-emit-ptx="chip=sm_80 output=%t80.ptx" -o /dev/null
// RUN: %ptxas -arch=sm_80 %t80.ptx -o %t80.cubin

// CHECK: .visible .entry matmul(
// CHECK: .maxntid 256, 1, 1
// CHECK: .minnctapersm 2
// CHECK: ld.global.v4.b32
// CHECK: st.shared.v4.b32
// CHECK: bar.sync
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK: st.global.v2.b32
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

// Software pipelining: the next A and B tiles travel around the loop, their
// loads at the top of the body, ahead of the mma's staging and barriers.
// PIPE: scf.for {{.*}} -> (vector<64xf32>, vector<16xf16>, vector<16xf16>)
// PIPE: ld.global.v4.b32
// PIPE: gpu.barrier
// PIPE: nvvm.mma.sync

module {
  func.func @matmul(%A: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                    %B: !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>,
                    %C: !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>,
                    %nk: i32) attributes {tile.kernel} {
    %pm = tile.bid 0
    %pn = tile.bid 1
    %c0 = arith.constant 0 : i32
    %c1 = arith.constant 1 : i32
    %zero = arith.constant dense<0.0> : tensor<128x128xf32>
    %acc = scf.for %k = %c0 to %nk step %c1 iter_args(%acc0 = %zero) -> (tensor<128x128xf32>) : i32 {
      %a = tile.load %A[%pm, %k] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<128x32xf16>
      %b = tile.load %B[%k, %pn] : !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16> -> tensor<32x128xf16>
      %r = tile.mma %a, %b, %acc0 : tensor<128x32xf16>, tensor<32x128xf16> -> tensor<128x128xf32>
      scf.yield %r : tensor<128x128xf32>
    }
    tile.store %C[%pm, %pn], %acc : !tile.array<?x?xf32, strides = [?, 1], align = 16, div = 16>, tensor<128x128xf32>
    return
  }
}
