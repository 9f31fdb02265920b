//===- GpuTarget.h - NVVM-dialect gpu.module to PTX and cubin ----*- C++ -*-===//
#ifndef TILE_COMPILER_GPU_GPUTARGET_H
#define TILE_COMPILER_GPU_GPUTARGET_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"

#include <string>

namespace mlir::tile {

struct PtxOptions {
  std::string chip = "sm_90";
  int optLevel = 3;
  /// NVPTX schedules for register pressure (false: LLVM's source order).
  bool registerScheduling = true;
};

/// The PTX feature LLVM needs for `chip` (Debian's LLVM defaults too low).
std::string getPtxFeatures(StringRef chip);

/// The chip to generate and assemble for: sm_90a in place of sm_90 when
/// the module uses wgmma or setmaxnreg (arch-specific, Hopper only), else
/// `chip`; translateToPtx refuses them on any other chip.
std::string getModuleChip(gpu::GPUModuleOp module, StringRef chip);

/// On a kernel: the positions of its tensor-map parameters (generic
/// pointers until then), which translateToPtx turns into 128-byte
/// __grid_constant__ byval parameters, 64-byte aligned.
constexpr llvm::StringLiteral kGridConstantArgsAttr = "tile.grid_constant_args";

/// Translates a gpu.module lowered to the LLVM/NVVM dialects to LLVM IR,
/// links the libdevice functions it calls, optimizes it and runs the NVPTX
/// backend. `llvmIR` receives the optimized LLVM IR when given.
FailureOr<std::string> translateToPtx(gpu::GPUModuleOp module,
                                      const PtxOptions &options,
                                      std::string *llvmIR = nullptr);

/// Runs ptxas on `ptx`; returns the cubin. `log` receives ptxas's output
/// (with -v: registers, spills, shared memory). `lineInfo` keeps the PTX's
/// .loc line info in the cubin (ptxas -lineinfo), for SASS listings.
FailureOr<std::string> assembleCubin(StringRef ptx, StringRef chip,
                                     std::string &log, bool verbose = false,
                                     bool lineInfo = false);

/// The ptxas to run: $TILE_PTXAS, $CUDA_HOME/bin/ptxas,
/// /usr/local/cuda/bin/ptxas, or ptxas on PATH.
std::string findPtxas();

} // namespace mlir::tile

#endif
