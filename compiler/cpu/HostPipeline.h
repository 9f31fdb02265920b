//===- HostPipeline.h - the CPU backend's pass pipeline ---------*- C++ -*-===//
#ifndef TILE_COMPILER_CPU_HOSTPIPELINE_H
#define TILE_COMPILER_CPU_HOSTPIPELINE_H

#include "mlir/Support/LLVM.h"

namespace mlir {
class DialectRegistry;
class OpPassManager;
} // namespace mlir

namespace mlir::tile {

/// The stages of the host lowering that follow the tile-level passes, in
/// order; each is recorded in the compiled kernel's asm under its name.
///  - "host": tile-tiling (large reductions into loops; no warp tiling),
///    convert-tile-to-host, elementwise ops to linalg, fusion;
///  - "bufferized": one-shot bufferization, deallocation, matmul kernels;
///  - "llvm": loops, then the LLVM dialect.
ArrayRef<StringRef> getHostStageNames();
void buildHostStage(OpPassManager &pm, StringRef stage);

/// The whole of `tile-to-host`: tile-level passes, then every host stage.
void buildTileToHostPipeline(OpPassManager &pm);

/// Dialects and interface models the host lowering and its JIT need.
void registerHostDialects(DialectRegistry &registry);
/// The CPU backend's passes, the upstream passes it uses, and `tile-to-host`.
void registerHostPasses();

} // namespace mlir::tile

#endif // TILE_COMPILER_CPU_HOSTPIPELINE_H
