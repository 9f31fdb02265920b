//===- LinalgPasses.h - the upstream linalg passes the host uses -*- C++ -*-===//
//
// mlir/Dialect/Linalg/Passes.h declares a function named mlir::tile, which
// clashes with this project's namespace; only LinalgPasses.cpp includes it.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_COMPILER_CPU_LINALGPASSES_H
#define TILE_COMPILER_CPU_LINALGPASSES_H

#include <memory>

namespace mlir {
class Pass;
namespace host_linalg {
std::unique_ptr<Pass> createElementwiseToLinalg();
std::unique_ptr<Pass> createElementwiseFusion();
std::unique_ptr<Pass> createLinalgToLoops();
/// Registers the three for tile-opt.
void registerPasses();
} // namespace host_linalg
} // namespace mlir

#endif // TILE_COMPILER_CPU_LINALGPASSES_H
