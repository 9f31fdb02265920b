//===- Driver.h - compile a tile module for a target ------------*- C++ -*-===//
//
// The entry points the Python module and tilec use. Each runs the tile-level
// passes, then the backend's pipeline, recording the IR after each stage.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_COMPILER_DRIVER_H
#define TILE_COMPILER_DRIVER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir::tile {

struct CompileOptions {
  std::string target = "cpu"; // "cpu", "sm_80", "sm_90"
  int numWarps = 0;           // 0: the compiler chooses
  int optLevel = 3;
  std::string dumpDir;        // when set, every stage is written there
};

/// The IR after each stage, in order: {"tile", text}, {"fused", text}, ...
using StageList = std::vector<std::pair<std::string, std::string>>;

/// What a failed compile reports: the stage that failed and the diagnostics
/// (MLIR's "file:line:col: error: ..." form), plus a reproducer path.
struct CompileFailure {
  std::string stage;
  std::string message;
  std::string reproducer;
};

/// A kernel compiled for an NVIDIA GPU.
struct GpuBinary {
  std::string kernelName;
  int numWarps = 4;
  int sharedMem = 0; // bytes of dynamic shared memory per block
  std::string ptx;
  std::string cubin;
  StageList stages;
};

/// Tile-level passes shared by every backend (canonicalize, tile-fuse, ...).
/// Runs on `module` in place; appends "tile" and "fused" to `stages`.
LogicalResult runTileLevelPasses(ModuleOp module, const CompileOptions &opts,
                                 StageList &stages, CompileFailure &failure);

/// tile IR -> PTX -> cubin (ptxas). Implemented in compiler/gpu/.
FailureOr<GpuBinary> compileForGpu(ModuleOp module, const CompileOptions &opts,
                                   CompileFailure &failure);

} // namespace mlir::tile

#endif
