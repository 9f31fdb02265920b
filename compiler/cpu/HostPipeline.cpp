//===- HostPipeline.cpp - the CPU backend's pass pipeline -----------------===//
#include "compiler/cpu/HostPipeline.h"
#include "compiler/cpu/LinalgPasses.h"
#include "compiler/ExpandF8.h"
#include "compiler/Driver.h"
#include "compiler/Passes.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToFuncs/MathToFuncs.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/FuncBufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Index/IR/IndexDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Linalg/Transforms/SubsetInsertionOpInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/AllocationOpInterfaceImpl.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/BufferDeallocationOpInterfaceImpl.h"
#include "mlir/Dialect/SCF/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/Dialect/Tensor/Transforms/SubsetInsertionOpInterfaceImpl.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/BufferizableOpInterfaceImpl.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

ArrayRef<StringRef> tile::getHostStageNames() {
  static const StringRef names[] = {"host", "bufferized", "llvm"};
  return names;
}

static void buildHostConversion(OpPassManager &pm) {
  // Large reductions into loops; warps mean nothing here.
  tile::buildTilingPipeline(pm, /*gpu=*/false);
  pm.addPass(tile::createConvertTileToHost());
  pm.addPass(createCanonicalizerPass());
  OpPassManager &fpm = pm.nest<func::FuncOp>();
  fpm.addPass(host_linalg::createElementwiseToLinalg());
  fpm.addPass(host_linalg::createElementwiseFusion());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  // Last: the canonicalizer would give the ops their tensor.empty back.
  pm.addPass(tile::createTileHostInPlace());
}

static void buildBufferization(OpPassManager &pm) {
  bufferization::OneShotBufferizePassOptions options;
  options.bufferizeFunctionBoundaries = true;
  // Tiles rebound in a loop (m = maximum(m, x)) yield fresh buffers.
  options.allowReturnAllocsFromLoops = true;
  options.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  pm.addPass(bufferization::createOneShotBufferizePass(options));
  pm.addPass(createCanonicalizerPass());
  bufferization::buildBufferDeallocationPipeline(pm);
  pm.addPass(tile::createTileHostMatmul());
  pm.addPass(createCanonicalizerPass());
}

namespace {
/// Drops the `contract` flag that arith-emulate-unsupported-floats and
/// math-extend-to-supported-types put on their extf/truncf pairs: with it,
/// extf(truncf(x)) folds to x and a chain of f16/bf16 ops keeps f32 range and
/// precision ((A + A) - A with A = 40000 gives 40000 where NumPy and the GPU
/// give inf; a comparison sees the unrounded value, a select the rounded one).
struct RoundHalvesAfterEveryOp
    : PassWrapper<RoundHalvesAfterEveryOp, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(RoundHalvesAfterEveryOp)
  StringRef getArgument() const final { return "tile-host-round-halves"; }
  StringRef getDescription() const final {
    return "Round every emulated f16/bf16 op to its type (no extf/truncf "
           "contraction)";
  }
  void runOnOperation() override {
    getOperation().walk([](Operation *op) {
      if (isa<arith::ExtFOp, arith::TruncFOp>(op))
        op->removeAttr("fastmath");
    });
  }
};
} // namespace

static void buildLlvmLowering(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(host_linalg::createLinalgToLoops());
  // f16 and bf16 arithmetic runs in f32, rounded back after every op (x86
  // has no half arithmetic); conversions to and from bf16 become integer code.
  pm.addPass(math::createMathExtendToSupportedTypes());
  arith::ArithEmulateUnsupportedFloatsOptions emulate;
  emulate.sourceTypeStrs = {"f16", "bf16", "f8E4M3FN", "f8E5M2"};
  pm.addPass(arith::createArithEmulateUnsupportedFloats(emulate));
  pm.addPass(std::make_unique<RoundHalvesAfterEveryOp>());
  // fp8 casts as integer code (LLVM has no fp8 type; before arith-expand,
  // which lowers the bf16 casts this leaves).
  pm.addPass(tile::createExpandF8Pass());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  pm.addPass(arith::createArithExpandOpsPass(expand));
  pm.addPass(createConvertMathToFuncs());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createFinalizeMemRefToLLVMConversionPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createUBToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void tile::buildHostStage(OpPassManager &pm, StringRef stage) {
  if (stage == "host")
    buildHostConversion(pm);
  else if (stage == "bufferized")
    buildBufferization(pm);
  else if (stage == "llvm")
    buildLlvmLowering(pm);
  else
    llvm_unreachable("unknown host stage");
}

void tile::buildTileToHostPipeline(OpPassManager &pm) {
  buildTileLevelPipeline(pm);
  for (StringRef stage : getHostStageNames())
    buildHostStage(pm, stage);
}

void tile::registerHostDialects(DialectRegistry &registry) {
  registry.insert<affine::AffineDialect, arith::ArithDialect,
                  bufferization::BufferizationDialect, cf::ControlFlowDialect,
                  func::FuncDialect, index::IndexDialect, linalg::LinalgDialect,
                  LLVM::LLVMDialect, math::MathDialect, memref::MemRefDialect,
                  scf::SCFDialect, tensor::TensorDialect, ub::UBDialect,
                  vector::VectorDialect>();
  arith::registerBufferizableOpInterfaceExternalModels(registry);
  arith::registerBufferDeallocationOpInterfaceExternalModels(registry);
  bufferization::func_ext::registerBufferizableOpInterfaceExternalModels(
      registry);
  linalg::registerBufferizableOpInterfaceExternalModels(registry);
  linalg::registerSubsetOpInterfaceExternalModels(registry);
  memref::registerAllocationOpInterfaceExternalModels(registry);
  scf::registerBufferizableOpInterfaceExternalModels(registry);
  scf::registerBufferDeallocationOpInterfaceExternalModels(registry);
  tensor::registerBufferizableOpInterfaceExternalModels(registry);
  tensor::registerSubsetOpInterfaceExternalModels(registry);
  vector::registerBufferizableOpInterfaceExternalModels(registry);
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
}

void tile::registerHostPasses() {
  host_linalg::registerPasses();
  PassRegistration<RoundHalvesAfterEveryOp>();
  tile::registerExpandF8Pass();
  bufferization::registerOneShotBufferizePass();
  bufferization::registerBufferizationPipelines();
  PassPipelineRegistration<>(
      "tile-to-host",
      "Lower tile IR to the LLVM dialect for the CPU backend: tile-level "
      "passes, convert-tile-to-host, bufferization, loops, LLVM",
      buildTileToHostPipeline);
}
