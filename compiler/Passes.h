//===- Passes.h - tile compiler passes --------------------------*- C++ -*-===//
#ifndef TILE_COMPILER_PASSES_H
#define TILE_COMPILER_PASSES_H

#include "dialects/tile/TileDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Pass/Pass.h"

namespace mlir::tile {
#define GEN_PASS_DECL
#include "compiler/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

#endif
