//===- Registration.cpp - dialects and passes the project uses ------------===//
#include "compiler/Registration.h"
#include "compiler/Passes.h"
#include "compiler/gpu/GpuPipeline.h"
#include "compiler/cpu/HostPipeline.h"

#include "dialects/tilegpu/TileGpuDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/Passes.h"

void mlir::tile::registerAllDialects(DialectRegistry &registry) {
  registry.insert<TileDialect, arith::ArithDialect, func::FuncDialect,
                  math::MathDialect, scf::SCFDialect, tensor::TensorDialect>();
  // What the GPU backend produces (tile-opt parses its stages).
  registry.insert<tilegpu::TileGpuDialect, gpu::GPUDialect, LLVM::LLVMDialect,
                  NVVM::NVVMDialect, vector::VectorDialect>();
  registerGpuLoweringExtensions(registry);
  registerHostDialects(registry);
}

void mlir::tile::registerAllPasses() {
  registerTilePasses();
  registerCanonicalizerPass();
  registerCSEPass();
  registerInlinerPass();
  registerSymbolDCEPass();
  registerHostPasses();
  registerTileGpuPipelines();
}
