//===- Registration.h - dialects and passes the project uses ----*- C++ -*-===//
#ifndef TILE_COMPILER_REGISTRATION_H
#define TILE_COMPILER_REGISTRATION_H

namespace mlir {
class DialectRegistry;
namespace tile {
/// The tile dialect and every upstream dialect (and interface model) the
/// pipelines produce or consume.
void registerAllDialects(DialectRegistry &registry);
/// The tile passes, the upstream passes the pipelines use, and the named
/// pipelines (tile-to-cpu, tile-to-ptx, ...).
void registerAllPasses();
} // namespace tile
} // namespace mlir

#endif
