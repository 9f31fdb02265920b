// setmaxnreg and wgmma exist on sm_90a only. A module holding setmaxnreg but
// no wgmma (IR resumed from an edited dump, found by the compiler fuzzer,
// seed 20261209) was generated for plain sm_90 and LLVM's instruction
// selection aborted the process ("Cannot select: intrinsic
// llvm.nvvm.setmaxnreg.inc"); now it takes sm_90a, and on another chip it is
// an error on the op.
// RUN: tile-opt %s --tile-emit-ptx=output=%t.ptx -o /dev/null
// RUN: FileCheck %s < %t.ptx
// RUN: not tile-opt %s --tile-emit-ptx="chip=sm_80 output=%t80.ptx" -o /dev/null 2>&1 \
// RUN:   | FileCheck %s --check-prefix=SM80

// CHECK: .target sm_90a
// CHECK: setmaxnreg.inc.sync.aligned.u32 232;
// SM80: error: 'nvvm.setmaxregister' needs sm_90a (Hopper), not sm_80
module attributes {gpu.container_module} {
  gpu.module @producer {
    llvm.func @grow() attributes {gpu.kernel, nvvm.kernel} {
      nvvm.setmaxregister increase 232
      llvm.return
    }
  }
}
