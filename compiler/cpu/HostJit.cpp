//===- HostJit.cpp - compile a tile module for the host and run it --------===//
#include "compiler/cpu/HostJit.h"
#include "compiler/cpu/HostPipeline.h"
#include "compiler/cpu/HostRuntime.h"
#include "compiler/cpu/HostThreadPool.h"

#include "compiler/cpu/HostPatterns.h"
#include "dialects/tile/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

using namespace mlir;
using namespace mlir::tile;

HostKernel::HostKernel() = default;
HostKernel::~HostKernel() = default;

static void initializeNativeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

/// The ABI class of each kernel argument; fails on types the ABI lacks. A
/// kernel resumed after convert-tile-to-host has memrefs for arrays and its
/// grid arguments already.
static LogicalResult describeArgs(func::FuncOp func,
                                  std::vector<HostArg> &args) {
  ArrayRef<Type> types = func.getArgumentTypes();
  unsigned n = types.size();
  if (n >= host::kNumGridArgs &&
      func.getArgAttr(n - host::kNumGridArgs, "tile.grid"))
    n -= host::kNumGridArgs;
  for (unsigned i = 0; i < n; ++i) {
    Type type = types[i];
    HostArg arg;
    if (auto array = dyn_cast<ArrayType>(type)) {
      arg.kind = HostArg::Kind::Array;
      arg.shape.assign(array.getShape().begin(), array.getShape().end());
      arg.strides.assign(array.getStrides().begin(), array.getStrides().end());
    } else if (auto memref = dyn_cast<MemRefType>(type)) {
      auto [strides, offset] = memref.getStridesAndOffset();
      arg.kind = HostArg::Kind::Array;
      arg.shape.assign(memref.getShape().begin(), memref.getShape().end());
      arg.strides.assign(strides.begin(), strides.end());
    } else if (type.isInteger(32)) {
      arg.kind = HostArg::Kind::I32;
    } else if (type.isInteger(64)) {
      arg.kind = HostArg::Kind::I64;
    } else if (type.isF32()) {
      arg.kind = HostArg::Kind::F32;
    } else if (type.isF64()) {
      arg.kind = HostArg::Kind::F64;
    } else {
      return func.emitError() << "argument " << i << " has type " << type
                              << ", which kernels cannot take (arrays, i32, "
                                 "i64, f32 and f64 only)";
    }
    args.push_back(std::move(arg));
  }
  return success();
}

static std::string errorToString(llvm::Error error) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::logAllUnhandledErrors(std::move(error), os);
  return text;
}

/// Adds `_mlir_<name>(void **args)`, which loads each argument of `name`
/// through args[i] and calls it (mlir::ExecutionEngine's packed interface).
static void addPackedWrapper(llvm::Module &module, StringRef name) {
  llvm::Function *kernel = module.getFunction(name);
  llvm::LLVMContext &ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type *ptr = b.getPtrTy();
  auto *wrapper = llvm::Function::Create(
      llvm::FunctionType::get(b.getVoidTy(), {ptr}, false),
      llvm::GlobalValue::ExternalLinkage, "_mlir_" + name, module);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", wrapper));
  SmallVector<llvm::Value *> args;
  for (llvm::Argument &arg : kernel->args()) {
    llvm::Value *slot =
        b.CreateGEP(ptr, wrapper->getArg(0), b.getInt64(arg.getArgNo()));
    args.push_back(b.CreateLoad(arg.getType(), b.CreateLoad(ptr, slot)));
  }
  b.CreateCall(kernel, args);
  b.CreateRetVoid();
}

/// LLVM dialect -> LLVM IR -> optimized -> machine code in an LLJIT with the
/// host runtime's symbols and the process's (malloc, libm, ...).
static LogicalResult jitCompile(ModuleOp module, StringRef name,
                                const CompileOptions &opts, StageList &stages,
                                std::unique_ptr<llvm::orc::LLJIT> &result,
                                void (*&entryPoint)(void **),
                                std::string &error) {
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!jtmb) {
    error = errorToString(jtmb.takeError());
    return failure();
  }
  unsigned optLevel = std::clamp(opts.optLevel, 0, 3);
  jtmb->setCodeGenOptLevel(optLevel == 0   ? llvm::CodeGenOptLevel::None
                           : optLevel == 1 ? llvm::CodeGenOptLevel::Less
                           : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                                           : llvm::CodeGenOptLevel::Aggressive);
  auto tm = jtmb->createTargetMachine();
  if (!tm) {
    error = errorToString(tm.takeError());
    return failure();
  }
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*jtmb).create();
  if (!jit) {
    error = errorToString(jit.takeError());
    return failure();
  }
  llvm::orc::JITDylib &main = (*jit)->getMainJITDylib();
  llvm::orc::MangleAndInterner mangle((*jit)->getExecutionSession(),
                                      (*jit)->getDataLayout());
  if (llvm::Error err =
          main.define(llvm::orc::absoluteSymbols(getHostRuntimeSymbols(mangle)))) {
    error = errorToString(std::move(err));
    return failure();
  }

  auto llvmContext = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> llvmModule;
  {
    DiagnosticCollector diagnostics(module->getContext());
    llvmModule = translateModuleToLLVMIR(module, *llvmContext, name);
    if (!llvmModule) {
      error = diagnostics.take();
      return failure();
    }
  }
  llvmModule->setDataLayout((*jit)->getDataLayout());
  llvmModule->setTargetTriple((*jit)->getTargetTriple());
  addPackedWrapper(*llvmModule, name);
  if (llvm::Error err =
          makeOptimizingTransformer(optLevel, 0, tm->get())(llvmModule.get())) {
    error = errorToString(std::move(err));
    return failure();
  }
  {
    std::string text;
    llvm::raw_string_ostream os(text);
    llvmModule->print(os, nullptr);
    recordStageText(name, "llvm-ir", "ll", std::move(text), opts, stages);
  }
  if (llvm::Error err = (*jit)->addIRModule(llvm::orc::ThreadSafeModule(
          std::move(llvmModule), std::move(llvmContext)))) {
    error = errorToString(std::move(err));
    return failure();
  }
  auto entry = (*jit)->lookup(("_mlir_" + name).str());
  if (!entry) {
    error = errorToString(entry.takeError());
    return failure();
  }
  entryPoint = entry->toPtr<void (*)(void **)>();
  result = std::move(*jit);
  return success();
}

FailureOr<std::unique_ptr<HostKernel>>
tile::compileForCpu(ModuleOp module, const CompileOptions &opts,
                    CompileFailure &failure) {
  // Failures outside a pass pipeline: the module as it is reproduces them.
  auto fail = [&](StringRef stage, const Twine &message) {
    failure.stage = stage.str();
    failure.message = message.str();
    std::string input;
    llvm::raw_string_ostream os(input);
    module->print(os, OpPrintingFlags().enableDebugInfo());
    failure.reproducer =
        writeReproducer(getKernelName(module), stage, "", input, opts);
    return FailureOr<std::unique_ptr<HostKernel>>(LogicalResult::failure());
  };
  auto kernel = std::make_unique<HostKernel>();
  kernel->name = getKernelName(module);
  auto func = module.lookupSymbol<func::FuncOp>(kernel->name);
  if (!module.lookupSymbol(kernel->name))
    return fail("tile", "error: the module has no tile.kernel function\n");
  if (func) {
    DiagnosticCollector diagnostics(module->getContext());
    if (failed(describeArgs(func, kernel->args)))
      return fail("tile", diagnostics.take());
  } else {
    // Resumed from the LLVM dialect: the signature is gone.
    kernel->launchable = false;
  }
  // The packing plan: each packed argument points at a flat slot.
  int slot = 0;
  for (const HostArg &arg : kernel->args) {
    if (arg.kind == HostArg::Kind::Array) {
      kernel->plan.push_back(slot); // allocated pointer
      kernel->plan.push_back(slot); // aligned pointer
      kernel->plan.push_back(-1);   // offset: 0
      for (unsigned i = 0; i < 2 * arg.rank(); ++i)
        kernel->plan.push_back(slot + 1 + i);
    } else {
      kernel->plan.push_back(slot);
    }
    slot += arg.numFlat();
  }
  kernel->numFlat = slot;

  if (failed(runTileLevelPasses(module, opts, kernel->stages, failure)))
    return LogicalResult::failure();
  for (StringRef stage : getHostStageNames()) {
    PassManager pm(module->getContext());
    buildHostStage(pm, stage);
    // Debug scopes turn the ops' locations into line info in the LLVM IR.
    if (stage == "llvm" && opts.printDebugInfo)
      pm.addPass(LLVM::createDIScopeForLLVMFuncOpPass());
    if (failed(runStage(module, pm, stage, opts, kernel->stages, failure)))
      return LogicalResult::failure();
  }

  initializeNativeTarget();
  std::string error;
  if (failed(jitCompile(module, kernel->name, opts, kernel->stages,
                        kernel->jit, kernel->entry, error)))
    return fail("jit", error);
  return kernel;
}

std::string HostKernel::launch(std::array<int64_t, 3> grid,
                               const uint64_t *flat) const {
  if (!launchable)
    return "compiled from the LLVM dialect, which no longer says which "
           "arguments are arrays: compile an earlier stage to launch it";
  // Extents and strides the kernel was specialized for must match.
  const uint64_t *slot = flat;
  for (auto [i, arg] : llvm::enumerate(args)) {
    if (arg.kind == HostArg::Kind::Array) {
      auto *dims = reinterpret_cast<const int64_t *>(slot + 1);
      for (unsigned d = 0; d < arg.rank(); ++d) {
        if (!ShapedType::isDynamic(arg.shape[d]) && dims[d] != arg.shape[d])
          return "argument " + std::to_string(i) + ": extent " +
                 std::to_string(d) + " is " + std::to_string(dims[d]) +
                 " but the kernel was compiled for " +
                 std::to_string(arg.shape[d]);
        int64_t stride = dims[arg.rank() + d];
        if (!ShapedType::isDynamic(arg.strides[d]) &&
            stride != arg.strides[d] && dims[d] > 1)
          return "argument " + std::to_string(i) + ": stride " +
                 std::to_string(d) + " is " + std::to_string(stride) +
                 " but the kernel was compiled for " +
                 std::to_string(arg.strides[d]);
      }
    }
    slot += arg.numFlat();
  }
  for (int64_t g : grid)
    if (g < 0)
      return "grid dimensions must be non-negative";
  int64_t total = grid[0] * grid[1] * grid[2];
  if (total == 0)
    return {};

  static const int64_t zero = 0;
  SmallVector<void *, 32> packedTemplate;
  for (int s : plan)
    packedTemplate.push_back(s < 0 ? static_cast<void *>(
                                         const_cast<int64_t *>(&zero))
                                   : const_cast<uint64_t *>(flat + s));
  int32_t sizes[3] = {int32_t(grid[0]), int32_t(grid[1]), int32_t(grid[2])};
  auto body = [&](int64_t begin, int64_t end) {
    int32_t bid[3];
    SmallVector<void *, 32> packed(packedTemplate);
    for (int i = 0; i < 3; ++i)
      packed.push_back(&bid[i]);
    for (int i = 0; i < 3; ++i)
      packed.push_back(&sizes[i]);
    for (int64_t id = begin; id < end; ++id) {
      bid[0] = int32_t(id % grid[0]);
      bid[1] = int32_t((id / grid[0]) % grid[1]);
      bid[2] = int32_t(id / (grid[0] * grid[1]));
      entry(packed.data());
    }
  };
  parallelChunks(total, body);
  return {};
}
