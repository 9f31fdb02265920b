// 128x128x32 f16 matmul with a K loop: a 4-stage cp.async ring in shared
// memory, one barrier per iteration, ldmatrix.x4 + mma.sync m16n8k16.
// REQUIRES: ptxas
// RUN: tile-opt %s --tile-to-llvm-nvvm --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: %ptxas -arch=sm_90 -v %t.ptx -o %t.cubin 2>&1 | FileCheck %s --check-prefix=PTXAS
// RUN: tile-opt %s --tile-to-gpu | FileCheck %s --check-prefix=RING
// RUN: tile-opt %s --tile-to-gpu=mma-pipelining=regs | FileCheck %s --check-prefix=PIPE
// RUN: tile-opt %s --tile-to-llvm-nvvm=mma-pipelining=regs --tile-emit-ptx=output=%t.regs.ptx -o /dev/null
// RUN: FileCheck %s --check-prefix=REGS < %t.regs.ptx
// RUN: %ptxas -arch=sm_90 %t.regs.ptx -o %t.regs.cubin
// RUN: tile-opt %s --tile-to-llvm-nvvm=mma-pipelining=off --tile-emit-ptx=output=%t.off.ptx -o /dev/null
// RUN: %ptxas -arch=sm_90 %t.off.ptx -o %t.off.cubin
// RUN: tile-opt %s --tile-to-gpu=num-stages=2 | FileCheck %s --check-prefix=TWO
// RUN: not tile-opt %s --tile-to-gpu=num-stages=16 2>&1 | FileCheck %s --check-prefix=TOOMANY
// RUN: tile-opt %s --tile-to-llvm-nvvm --tile-emit-ptx="chip=sm_80 output=%t80.ptx" -o /dev/null
// RUN: %ptxas -arch=sm_80 %t80.ptx -o %t80.cubin

// CHECK: .visible .entry matmul(
// CHECK: .maxntid 256, 1, 1
// CHECK: .minnctapersm 2
// Prologue: stages 0..2, one commit group each.
// CHECK-COUNT-3: cp.async.commit_group
// CHECK: cp.async.wait_group 2
// CHECK-NEXT: bar.sync 0
// CHECK-NOT: bar.sync
// CHECK: cp.async.cg.shared.global {{.*}}, 16, %r
// CHECK: cp.async.commit_group
// CHECK-NOT: bar.sync
// CHECK: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// CHECK-NOT: bar.sync
// CHECK: cp.async.wait_group 0
// The epilogue goes through the dead ring's bytes (tile-stage-stores):
// fragments in, 16-byte runs of rows out.
// CHECK: st.shared.v2.b32
// CHECK: ld.shared.v4.b32
// CHECK: st.global.v4.b32
// Four slots of A [128][40] and B [32][136] f16 above the (unused) scratch.
// RING: tile.shared_mem = 75776
// num-stages (tile's num_stages, an autotuning knob) sets the slots: two.
// TWO: tile.shared_mem = 37888
// More slots than a block's shared memory holds is an error at the mma.
// TOOMANY: error: num_stages=16 needs 16 shared-memory slots of 18944 bytes
// REGS: ld.global.v4.b32
// REGS: st.shared.v4.b32
// REGS: bar.sync
// REGS: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// REGS: mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32
// PTXAS: 0 bytes spill stores, 0 bytes spill loads

// Software pipelining: the next A and B tiles travel around the loop, their
// loads at the top of the body, ahead of the mma's staging and barriers.
// PIPE: scf.for {{.*}} -> (vector<64xf32>, vector<16xf16>, vector<16xf16>)
// PIPE: tile.ptx.ld_global {{.*}} : i32, i32, i32, i32
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
