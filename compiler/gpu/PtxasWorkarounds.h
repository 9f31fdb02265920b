//===- PtxasWorkarounds.h - LLVM IR that ptxas would miscompile -*- C++ -*-===//
#ifndef TILE_COMPILER_GPU_PTXASWORKAROUNDS_H
#define TILE_COMPILER_GPU_PTXASWORKAROUNDS_H

namespace llvm {
class Module;
} // namespace llvm

namespace mlir::tile {

/// Rewrites the 16-bit integer negations and absolute values of `module`
/// (optimized LLVM IR, right before NVPTX code generation) to compute in 32
/// bits. ptxas (CUDA 13.0, sm_90a) folds `cvt.s32.s16(neg.s16 x)`,
/// `mul.wide.s16(neg.s16 x, y)` and `cvt.s32.s16(abs.s16 x)` into 32-bit
/// operations on sext(x), wrong for x = -32768 (-(-32768) wraps to -32768
/// in 16 bits, not 32768). A 32-bit negation whose low half is then used is
/// kept as written. The replacement is inline PTX, which LLVM cannot
/// narrow back. Returns how many instructions were rewritten.
unsigned avoidNarrowNegationFolds(llvm::Module &module);

} // namespace mlir::tile

#endif
