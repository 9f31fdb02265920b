//===- LinalgPasses.cpp - the upstream linalg passes the host uses --------===//
#include "compiler/cpu/LinalgPasses.h"

#include "mlir/Dialect/Linalg/Passes.h"

using namespace mlir;

std::unique_ptr<Pass> host_linalg::createElementwiseToLinalg() {
  return createConvertElementwiseToLinalgPass();
}

std::unique_ptr<Pass> host_linalg::createElementwiseFusion() {
  return createLinalgElementwiseOpFusionPass();
}

std::unique_ptr<Pass> host_linalg::createLinalgToLoops() {
  return createConvertLinalgToLoopsPass();
}

void host_linalg::registerPasses() {
  registerConvertElementwiseToLinalgPass();
  registerConvertLinalgToLoopsPass();
  registerLinalgElementwiseOpFusionPass();
}
