//===- tile-opt.cpp - mlir-opt with the tile dialect and passes -----------===//
//
// Registers only what the project needs: the tile dialect, the upstream
// dialects its pipelines produce, the tile passes and the named pipelines.
//
//===----------------------------------------------------------------------===//
#include "compiler/Registration.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::tile::registerAllDialects(registry);
  mlir::tile::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tile optimizer driver\n", registry));
}
