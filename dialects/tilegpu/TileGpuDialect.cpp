//===- TileGpuDialect.cpp - tilegpu dialect registration ------------------===//
#include "dialects/tilegpu/TileGpuDialect.h"

using namespace mlir;
using namespace mlir::tilegpu;

#include "dialects/tilegpu/TileGpuDialect.cpp.inc"

void TileGpuDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/tilegpu/TileGpuOps.cpp.inc"
      >();
  registerTypes();
  registerAttributes();
}
