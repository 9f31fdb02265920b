//===- HostJit.cpp - compile a tile module for the host and run it --------===//
#include "compiler/cpu/HostJit.h"
#include "compiler/cpu/HostPipeline.h"
#include "compiler/cpu/HostRuntime.h"
#include "compiler/cpu/HostThreadPool.h"

#include "compiler/Passes.h"
#include "compiler/cpu/HostPatterns.h"
#include "dialects/tile/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/Transforms/Passes.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
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

/// The host's target, less the native bf16 conversions: AVX512-BF16's
/// vcvtneps2bf16 treats subnormal inputs as zero and flushes subnormal
/// results, where tile's bfloat16 keeps them (a bf16 `fma % x` of a subnormal
/// read -0.0 for -1.0 on a Zen 4 host); without the feature LLVM rounds with
/// integer code, as on every other host.
static llvm::Expected<llvm::orc::JITTargetMachineBuilder> hostTargetBuilder() {
  auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (jtmb)
    jtmb->getFeatures().AddFeature("avx512bf16", false);
  return jtmb;
}

/// An LLJIT for the host with the host runtime's symbols and the process's
/// (malloc, libm, ...), and, when `tm` is given, a target machine configured
/// as the JIT's for `optLevel`: what compiles the kernel's object code.
static LogicalResult createJit(unsigned optLevel,
                               std::unique_ptr<llvm::orc::LLJIT> &result,
                               std::unique_ptr<llvm::TargetMachine> *tm,
                               std::string &error) {
  auto jtmb = hostTargetBuilder();
  if (!jtmb) {
    error = errorToString(jtmb.takeError());
    return failure();
  }
  jtmb->setCodeGenOptLevel(optLevel == 0   ? llvm::CodeGenOptLevel::None
                           : optLevel == 1 ? llvm::CodeGenOptLevel::Less
                           : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                                           : llvm::CodeGenOptLevel::Aggressive);
  if (tm) {
    auto machine = jtmb->createTargetMachine();
    if (!machine) {
      error = errorToString(machine.takeError());
      return failure();
    }
    *tm = std::move(*machine);
  }
  auto jit =
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*jtmb).create();
  if (!jit) {
    error = errorToString(jit.takeError());
    return failure();
  }
  llvm::orc::JITDylib &main = (*jit)->getMainJITDylib();
  llvm::orc::MangleAndInterner mangle((*jit)->getExecutionSession(),
                                      (*jit)->getDataLayout());
  if (llvm::Error err = main.define(
          llvm::orc::absoluteSymbols(getHostRuntimeSymbols(mangle)))) {
    error = errorToString(std::move(err));
    return failure();
  }
  result = std::move(*jit);
  return success();
}

/// Links `object` into `jit` and finds `_mlir_<name>` in it. Undefined
/// symbols resolve against the host runtime and the process, whether the
/// object was compiled now or read from the cache.
static LogicalResult loadObject(llvm::orc::LLJIT &jit, StringRef name,
                                StringRef object, void (*&entryPoint)(void **),
                                std::string &error) {
  if (llvm::Error err = jit.addObjectFile(
          llvm::MemoryBuffer::getMemBufferCopy(object, (name + ".o").str()))) {
    error = errorToString(std::move(err));
    return failure();
  }
  auto entry = jit.lookup(("_mlir_" + name).str());
  if (!entry) {
    error = errorToString(entry.takeError());
    return failure();
  }
  entryPoint = entry->toPtr<void (*)(void **)>();
  return success();
}

/// LLVM dialect -> LLVM IR -> optimized -> object code, loaded into an LLJIT
/// (createJit). The object is kept: the on-disk cache stores it.
static LogicalResult jitCompile(ModuleOp module, StringRef name,
                                const CompileOptions &opts, StageList &stages,
                                std::unique_ptr<llvm::orc::LLJIT> &result,
                                std::string &object,
                                void (*&entryPoint)(void **),
                                std::string &error) {
  unsigned optLevel = std::clamp(opts.optLevel, 0, 3);
  std::unique_ptr<llvm::orc::LLJIT> jit;
  std::unique_ptr<llvm::TargetMachine> tm;
  if (failed(createJit(optLevel, jit, &tm, error)))
    return failure();

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
  llvmModule->setDataLayout(jit->getDataLayout());
  llvmModule->setTargetTriple(jit->getTargetTriple());
  addPackedWrapper(*llvmModule, name);
  if (llvm::Error err =
          makeOptimizingTransformer(optLevel, 0, tm.get())(llvmModule.get())) {
    error = errorToString(std::move(err));
    return failure();
  }
  {
    std::string text;
    llvm::raw_string_ostream os(text);
    llvmModule->print(os, nullptr);
    recordStageText(name, "llvm-ir", "ll", std::move(text), opts, stages);
  }
  auto compiled = llvm::orc::SimpleCompiler(*tm)(*llvmModule);
  if (!compiled) {
    error = errorToString(compiled.takeError());
    return failure();
  }
  object.assign((*compiled)->getBufferStart(), (*compiled)->getBufferSize());
  if (failed(loadObject(*jit, name, object, entryPoint, error)))
    return failure();
  result = std::move(jit);
  return success();
}

/// The kernel's name, ABI and packing plan, from the module as the frontend
/// (or a resumed stage) gives it: no pass runs.
static LogicalResult describeKernel(ModuleOp module, std::string &name,
                                    std::vector<HostArg> &args,
                                    std::vector<int> &plan, size_t &numFlat,
                                    bool &launchable, std::string &error) {
  name = getKernelName(module);
  auto func = module.lookupSymbol<func::FuncOp>(name);
  if (!module.lookupSymbol(name)) {
    error = "error: the module has no tile.kernel function\n";
    return failure();
  }
  if (func) {
    DiagnosticCollector diagnostics(module->getContext());
    if (failed(describeArgs(func, args))) {
      error = diagnostics.take();
      return failure();
    }
  } else {
    // Resumed from the LLVM dialect: the signature is gone.
    launchable = false;
  }
  // The packing plan: each packed argument points at a flat slot.
  int slot = 0;
  for (const HostArg &arg : args) {
    if (arg.kind == HostArg::Kind::Array) {
      plan.push_back(slot); // allocated pointer
      plan.push_back(slot); // aligned pointer
      plan.push_back(-1);   // offset: 0
      for (unsigned i = 0; i < 2 * arg.rank(); ++i)
        plan.push_back(slot + 1 + i);
    } else {
      plan.push_back(slot);
    }
    slot += arg.numFlat();
  }
  numFlat = slot;
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
  std::string error;
  if (failed(describeKernel(module, kernel->name, kernel->args, kernel->plan,
                            kernel->numFlat, kernel->launchable, error)))
    return fail("tile", error);

  if (failed(runTileLevelPasses(module, opts, kernel->stages, failure)))
    return LogicalResult::failure();
  for (StringRef stage : getHostStageNames()) {
    PassManager pm(module->getContext());
    // Loops cut where their masks turn all true (as on the GPU, whose
    // pipeline runs it after the asynchronous passes).
    if (stage == "host" && opts.splitUniformMasks)
      pm.addPass(createTileSplitUniformMasks());
    buildHostStage(pm, stage);
    // Debug scopes turn the ops' locations into line info in the LLVM IR.
    if (stage == "llvm" && opts.printDebugInfo)
      pm.addPass(LLVM::createDIScopeForLLVMFuncOpPass());
    if (failed(runStage(module, pm, stage, opts, kernel->stages, failure)))
      return LogicalResult::failure();
  }

  initializeNativeTarget();
  if (failed(jitCompile(module, kernel->name, opts, kernel->stages, kernel->jit,
                        kernel->object, kernel->entry, error)))
    return fail("jit", error);
  return kernel;
}

FailureOr<std::unique_ptr<HostKernel>>
tile::loadForCpu(ModuleOp module, const std::string &object, StageList stages,
                 std::string &error) {
  auto kernel = std::make_unique<HostKernel>();
  if (failed(describeKernel(module, kernel->name, kernel->args, kernel->plan,
                            kernel->numFlat, kernel->launchable, error)))
    return failure();
  if (!kernel->launchable) {
    error = "the module's kernel has no tile signature";
    return failure();
  }
  initializeNativeTarget();
  std::unique_ptr<llvm::orc::LLJIT> jit;
  if (failed(createJit(/*optLevel=*/0, jit, nullptr, error)) ||
      failed(loadObject(*jit, kernel->name, object, kernel->entry, error)))
    return failure();
  kernel->jit = std::move(jit);
  kernel->object = object;
  kernel->stages = std::move(stages);
  return kernel;
}

std::vector<std::string> HostKernel::getSignature() const {
  auto list = [](ArrayRef<int64_t> values) {
    std::string text;
    for (auto [i, v] : llvm::enumerate(values))
      text += (i ? "," : "") +
              (ShapedType::isDynamic(v) ? std::string("?") : std::to_string(v));
    return text;
  };
  std::vector<std::string> sig;
  for (const HostArg &arg : args) {
    switch (arg.kind) {
    case HostArg::Kind::Array:
      sig.push_back("array:" + std::to_string(arg.rank()) + ":" +
                    list(arg.shape) + ":" + list(arg.strides));
      break;
    case HostArg::Kind::I32:
      sig.push_back("i32");
      break;
    case HostArg::Kind::I64:
      sig.push_back("i64");
      break;
    case HostArg::Kind::F32:
      sig.push_back("f32");
      break;
    case HostArg::Kind::F64:
      sig.push_back("f64");
      break;
    }
  }
  return sig;
}

const std::string &tile::hostTargetIdentity() {
  static const std::string identity = [] {
    std::string id = "llvm " LLVM_VERSION_STRING "\n";
    auto jtmb = hostTargetBuilder();
    if (!jtmb)
      return id + "no host target: " + errorToString(jtmb.takeError());
    id += jtmb->getTargetTriple().str() + "\n" + jtmb->getCPU() + "\n";
    std::vector<std::string> features = jtmb->getFeatures().getFeatures();
    llvm::sort(features);
    for (const std::string &f : features)
      id += f + ",";
    return id;
  }();
  return identity;
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
