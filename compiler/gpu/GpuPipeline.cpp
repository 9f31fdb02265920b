//===- GpuPipeline.cpp - tile IR to PTX and cubin -------------------------===//
#include "compiler/gpu/GpuPipeline.h"
#include "compiler/Driver.h"
#include "compiler/Passes.h"
#include "compiler/gpu/GpuTarget.h"
#include "compiler/gpu/LinearLayout.h"
#include "compiler/gpu/TilePipelineMma.h"
#include "compiler/gpu/TilePtxToLLVM.h"
#include "compiler/gpu/TileToGpuCommon.h"
#include "dialects/tilegpu/TileGpuDialect.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/NVVMToLLVM/NVVMToLLVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace mlir::tile;

void mlir::tile::registerGpuLoweringExtensions(DialectRegistry &registry) {
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
  registerConvertNVVMToLLVMInterface(registry);
  NVVM::registerConvertGpuToNVVMInterface(registry);
  registerConvertTilePtxToLLVMInterface(registry);
}

void mlir::tile::buildTileToGpuPipeline(
    OpPassManager &pm, int numWarps, bool warpgroupMma,
    const TilePipelineMmaOptions &pipelining) {
  buildTilingPipeline(pm, /*gpu=*/true, numWarps, warpgroupMma);
  TileMapThreadsOptions mapOptions;
  mapOptions.numWarps = numWarps;
  pm.addPass(createTileMapThreads(mapOptions));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createTilePipelineMma(pipelining));
  pm.addPass(createTileStageStores());
  pm.addPass(createTileAllocateShared());
  pm.addPass(createConvertTileToGpu());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void mlir::tile::buildGpuToNVVMPipeline(OpPassManager &pm) {
  pm.addPass(createSCFToControlFlowPass());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertNVVMToLLVMPass());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

namespace {
struct TileGpuPipelineOptions : PassPipelineOptions<TileGpuPipelineOptions> {
  Option<int> numWarps{*this, "num-warps",
                       llvm::cl::desc("warps per block (0: chosen)"),
                       llvm::cl::init(0)};
  Option<bool> warpgroupMma{
      *this, "warpgroup-mma",
      llvm::cl::desc("sm_90 wgmma for qualifying mma loops"),
      llvm::cl::init(false)};
  Option<std::string> mmaPipelining{
      *this, "mma-pipelining",
      llvm::cl::desc("mma loop pipelining: off, regs or async"),
      llvm::cl::init("async")};
  Option<int> numStages{
      *this, "num-stages",
      llvm::cl::desc("cp.async ring slots of mma loops (0: chosen)"),
      llvm::cl::init(0)};

  TilePipelineMmaOptions pipeliningOptions() const {
    TilePipelineMmaOptions pipelining;
    pipelining.mmaPipelining = mmaPipelining;
    pipelining.numStages = numStages;
    return pipelining;
  }
};
} // namespace

void mlir::tile::registerTileGpuPipelines() {
  PassPipelineRegistration<TileGpuPipelineOptions>(
      "tile-to-gpu",
      "tile IR to gpu.func kernels on per-thread vectors (gpu/nvvm/llvm)",
      [](OpPassManager &pm, const TileGpuPipelineOptions &options) {
        buildTileToGpuPipeline(pm, options.numWarps, options.warpgroupMma,
                               options.pipeliningOptions());
      });
  PassPipelineRegistration<TileGpuPipelineOptions>(
      "tile-to-llvm-nvvm",
      "tile IR to a gpu.module in the LLVM and NVVM dialects (for "
      "--tile-emit-ptx)",
      [](OpPassManager &pm, const TileGpuPipelineOptions &options) {
        buildTileToGpuPipeline(pm, options.numWarps, options.warpgroupMma,
                               options.pipeliningOptions());
        buildGpuToNVVMPipeline(pm);
      });
}

//===----------------------------------------------------------------------===//
// compileForGpu
//===----------------------------------------------------------------------===//

/// The name TMA's element type `type` has in the kernel metadata: floats by
/// name, anything else by its width (a copy moves bytes; fp8 as u8).
static std::string tmaElementName(Type type) {
  if (type.isF16())
    return "f16";
  if (type.isBF16())
    return "bf16";
  if (type.isF32())
    return "f32";
  if (type.isF64())
    return "f64";
  return "u" + std::to_string(std::max(8u, type.getIntOrFloatBitWidth()));
}

std::vector<TensorMapArg> mlir::tile::getTensorMapArgs(ModuleOp module) {
  std::vector<TensorMapArg> maps;
  for (auto func : module.getOps<func::FuncOp>()) {
    if (!func->hasAttr("tile.kernel"))
      continue;
    for (unsigned i = 0; i < func.getNumArguments(); ++i) {
      auto of = func.getArgAttrOfType<tilegpu::TensorMapOfAttr>(
          i, tilegpu::TensorMapOfAttr::getArgAttrName());
      if (!of)
        continue;
      auto type = cast<tilegpu::TensorMapType>(func.getArgumentTypes()[i]);
      TensorMapArg arg;
      arg.array = int(of.getArray());
      arg.box.assign(type.getBox().begin(), type.getBox().end());
      arg.elementType = tmaElementName(type.getElementType());
      arg.swizzle = int(type.getSwizzle());
      maps.push_back(std::move(arg));
    }
  }
  return maps;
}

std::vector<DisjointArrays> mlir::tile::getDisjointArrays(ModuleOp module) {
  std::vector<DisjointArrays> pairs;
  for (auto func : module.getOps<func::FuncOp>()) {
    auto attr =
        func->getAttrOfType<DenseI32ArrayAttr>(pipeline::kDisjointArraysAttr);
    if (!func->hasAttr("tile.kernel") || !attr)
      continue;
    auto bytes = [&](int32_t arg) {
      auto array = cast<ArrayType>(func.getArgumentTypes()[arg]);
      return int(storageBytes(array.getElementType()));
    };
    ArrayRef<int32_t> args = attr.asArrayRef();
    for (size_t i = 0; i + 1 < args.size(); i += 2)
      pairs.push_back(
          {args[i], bytes(args[i]), args[i + 1], bytes(args[i + 1])});
  }
  return pairs;
}

FailureOr<GpuBinary> mlir::tile::compileForGpu(ModuleOp module,
                                               const CompileOptions &opts,
                                               CompileFailure &failure) {
  MLIRContext *ctx = module.getContext();
  GpuBinary bin;
  StringRef chip = opts.target;
  if (!chip.starts_with("sm_")) {
    failure.stage = "target";
    failure.message = "error: compileForGpu needs an sm_XX target, got '" +
                      opts.target + "'\n";
    return mlir::failure();
  }
  bin.kernelName = getKernelName(module);
  if (failed(runTileLevelPasses(module, opts, bin.stages, failure)) ||
      failed(runTilingStage(module, opts, bin.stages, failure)))
    return mlir::failure();

  PassManager mapPm(ctx);
  TileMapThreadsOptions mapOptions;
  mapOptions.numWarps = opts.numWarps;
  mapPm.addPass(createTileMapThreads(mapOptions));
  mapPm.addPass(createCanonicalizerPass());
  if (failed(runStage(module, mapPm, "mapped", opts, bin.stages, failure)))
    return mlir::failure();
  // tilec resumes from IR it takes to be mapped; the passes below read every
  // tensor's layout.
  Value unmapped;
  module.walk([&](Operation *op) {
    for (Value v : op->getResults())
      if (auto type = dyn_cast<RankedTensorType>(v.getType()))
        if (!type.getEncoding() && !unmapped)
          unmapped = v;
  });
  if (unmapped) {
    failure.stage = "pipelined";
    failure.message = "error: a tensor has no thread layout after stage "
                      "'mapped' (IR given as mapped must have them): " +
                      unmapped.getDefiningOp()->getName().getStringRef().str() +
                      "\n";
    return mlir::failure();
  }
  if (auto warps = module->getAttrOfType<IntegerAttr>(kNumWarpsAttr))
    bin.numWarps = warps.getInt();

  // The asynchronous level: rings, copies and mmas on shared operands.
  PassManager pipePm(ctx);
  TilePipelineMmaOptions pipelining;
  pipelining.mmaPipelining = stringifyMmaPipelining(opts.mmaPipelining).str();
  pipelining.numStages = opts.numStages;
  pipelining.epilogueRoom =
      opts.warpSpecialize != WarpSpecialization::Off && opts.stageStores;
  pipePm.addPass(createTilePipelineMma(pipelining));
  if (opts.bulkReduce)
    pipePm.addPass(createTileBulkReduce());
  if (opts.warpSpecialize != WarpSpecialization::Off) {
    TileWarpSpecializeOptions specialization;
    specialization.rings = stringifyWarpSpecialization(opts.warpSpecialize);
    // Ping-pong turns per rotated iteration where the loop is rotated, per
    // wgmma where it is not.
    specialization.pingPong = opts.pingPong && !opts.overlapMmaChain;
    specialization.producerRegisters = opts.producerRegisters;
    specialization.consumerRegisters = opts.consumerRegisters;
    pipePm.addPass(createTileWarpSpecialize(specialization));
    pipePm.addPass(createTileClusterMulticast());
    if (opts.overlapMmaChain) {
      TileOverlapMmaChainOptions overlap;
      overlap.pingPong = opts.pingPong;
      overlap.lateOpsFirst = opts.lateOpsFirst;
      pipePm.addPass(createTileOverlapMmaChain(overlap));
    }
  }
  if (opts.delayStagedMma && opts.warpSpecialize != WarpSpecialization::Off)
    pipePm.addPass(createTileDelayStagedMma());
  // Only where operands loaded in front of a loop wait in shared memory
  // (TMA rings on sm_90): with them in registers, as on the cp.async ring,
  // the copies of the loop made ptxas spill (attention_dq: 336 bytes).
  if (opts.splitUniformMasks && opts.mmaPipelining == MmaPipelining::Tma &&
      usesWarpgroupMma(opts))
    pipePm.addPass(createTileSplitUniformMasks());
  if (opts.deferMmaWaits && usesWarpgroupMma(opts)) {
    TileDeferMmaWaitsOptions defer;
    defer.moveMmas = opts.moveDeferredMmas;
    pipePm.addPass(createTileDeferMmaWaits(defer));
  }
  if (opts.stageStores) {
    TileStageStoresOptions staging;
    staging.tmaStores = opts.tmaStores;
    pipePm.addPass(createTileStageStores(staging));
  }
  pipePm.addPass(createTileAllocateShared());
  if (failed(runStage(module, pipePm, "pipelined", opts, bin.stages, failure)))
    return mlir::failure();
  // A warp-specialized kernel launches its producer warps too.
  for (auto func : module.getOps<func::FuncOp>())
    if (func->hasAttr("tile.kernel"))
      bin.numWarps = blockWarps(func, bin.numWarps);
  bin.tensorMaps = getTensorMapArgs(module);
  for (auto func : module.getOps<func::FuncOp>())
    if (auto cluster = func->getAttrOfType<IntegerAttr>(kClusterSizeAttr))
      bin.clusterSize = int(cluster.getInt());
  bin.disjoint = getDisjointArrays(module);

  PassManager gpuPm(ctx);
  ConvertTileToGpuOptions lowering;
  lowering.prefetchTensorMaps = opts.prefetchTensorMaps;
  lowering.tiedWgmmaFence = opts.tiedWgmmaFence;
  gpuPm.addPass(createConvertTileToGpu(lowering));
  gpuPm.addPass(createCanonicalizerPass());
  gpuPm.addPass(createCSEPass());
  if (failed(runStage(module, gpuPm, "gpu", opts, bin.stages, failure)))
    return mlir::failure();

  PassManager nvvmPm(ctx);
  buildGpuToNVVMPipeline(nvvmPm);
  // Debug scopes turn the ops' Python locations into line info: !dbg in the
  // LLVM IR, .file/.loc in the PTX (directives only: no DWARF sections, and
  // no `.target ..., debug`, which would ask ptxas for a debug build).
  if (opts.printDebugInfo) {
    LLVM::DIScopeForLLVMFuncOpPassOptions scopes;
    scopes.emissionKind = LLVM::DIEmissionKind::DebugDirectivesOnly;
    nvvmPm.addPass(LLVM::createDIScopeForLLVMFuncOpPass(scopes));
  }
  if (failed(runStage(module, nvvmPm, "nvvm", opts, bin.stages, failure)))
    return mlir::failure();
  gpu::GPUModuleOp gpuModule;
  for (auto m : module.getOps<gpu::GPUModuleOp>())
    gpuModule = m;
  if (auto shared =
          gpuModule ? gpuModule->getAttrOfType<IntegerAttr>("tile.shared_mem")
                    : IntegerAttr())
    bin.sharedMem = shared.getInt();

  // The steps after the MLIR stages fail with the nvvm IR as reproducer;
  // tilec replays it from there.
  auto reproduce = [&](StringRef stage) {
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os, OpPrintingFlags().enableDebugInfo());
    return writeReproducer(bin.kernelName, stage, "", text, opts);
  };
  DiagnosticCollector diagnostics(ctx);
  PtxOptions ptxOptions;
  // sm_90a for wgmma modules: the PTX and ptxas must agree on it.
  ptxOptions.chip =
      gpuModule ? getModuleChip(gpuModule, opts.target) : opts.target;
  ptxOptions.optLevel = opts.optLevel;
  ptxOptions.registerScheduling = opts.nvptxRegisterScheduling;
  std::string llvmIR;
  FailureOr<std::string> ptx =
      gpuModule ? translateToPtx(gpuModule, ptxOptions, &llvmIR)
                : FailureOr<std::string>(mlir::failure());
  if (failed(ptx)) {
    failure.stage = "llvm";
    failure.message = diagnostics.take();
    if (failure.message.empty())
      failure.message = "error: no gpu.module to translate\n";
    failure.reproducer = reproduce("llvm");
    return mlir::failure();
  }
  recordStageText(bin.kernelName, "llvm", "ll", llvmIR, opts, bin.stages);
  recordStageText(bin.kernelName, "ptx", "ptx", *ptx, opts, bin.stages);
  bin.ptx = *ptx;

  std::string log;
  FailureOr<std::string> cubin = assembleCubin(
      *ptx, ptxOptions.chip, log, /*verbose=*/false, opts.printDebugInfo);
  if (failed(cubin)) {
    failure.stage = "cubin";
    failure.message = "error: ptxas failed:\n" + log;
    failure.reproducer = reproduce("cubin");
    return mlir::failure();
  }
  bin.cubin = std::move(*cubin);
  return bin;
}
