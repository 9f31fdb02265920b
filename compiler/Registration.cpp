//===- Registration.cpp - dialects and passes the project uses ------------===//
#include "compiler/Registration.h"
#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void mlir::tile::registerAllDialects(DialectRegistry &registry) {
  registry.insert<TileDialect, arith::ArithDialect, func::FuncDialect,
                  math::MathDialect, scf::SCFDialect, tensor::TensorDialect>();
}

void mlir::tile::registerAllPasses() {
  registerTilePasses();
  registerCanonicalizerPass();
  registerCSEPass();
  registerInlinerPass();
  registerSymbolDCEPass();
}
