//===- GpuTarget.cpp - NVVM-dialect gpu.module to PTX and cubin -----------===//
#include "compiler/gpu/GpuTarget.h"
#include "compiler/gpu/PtxasWorkarounds.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/DiagnosticInfo.h"
#include "llvm/IR/DiagnosticPrinter.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Program.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Triple.h"

#include <mutex>

extern "C" {
void LLVMInitializeNVPTXTargetInfo();
void LLVMInitializeNVPTXTarget();
void LLVMInitializeNVPTXTargetMC();
void LLVMInitializeNVPTXAsmPrinter();
}

using namespace mlir;
using namespace mlir::tile;

/// Sets one of the NVPTX backend's command-line options (they are global).
static void setBackendOption(llvm::StringRef name, llvm::StringRef value) {
  auto &registered = llvm::cl::getRegisteredOptions();
  if (auto it = registered.find(name); it != registered.end())
    it->second->addOccurrence(0, name, value);
}

static void initNVPTX() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    // Tiles lower to per-thread LLVM vectors; NVPTX's default (source-order)
    // DAG scheduling then expands each vector op in full before the next, so
    // every element of every operand is live at once (a 8192-wide layernorm:
    // 114 registers; scheduled for register pressure: 80, as Triton's
    // per-element code gets). Higher occupancy, same instructions.
    // PtxOptions::registerScheduling (false: TILE_NVPTX_SCHED=source)
    // restores LLVM's default, for comparisons.
    //
    // f32 division is div.full (within 2 ulp, full range), as Triton's `/`:
    // the IEEE div.rn sequence made a 32768-wide softmax instruction-bound.
    setBackendOption("nvptx-prec-divf32", "1");
    // 32-bit shared-memory pointers, as Triton's: a matmul's cp.async and
    // ldmatrix addressing takes half the integer instructions.
    setBackendOption("nvptx-short-ptr", "true");
  });
}

/// NVPTX reads its scheduling flag (a global cl::opt) when a target machine
/// is created: set it and create the machine under one lock, so that
/// concurrent compiles with different options each get their own.
static std::unique_ptr<llvm::TargetMachine>
createNVPTXMachine(const llvm::Target &target, const llvm::Triple &triple,
                   const PtxOptions &options) {
  static std::mutex lock;
  std::lock_guard<std::mutex> guard(lock);
  setBackendOption("nvptx-sched4reg",
                   options.registerScheduling ? "true" : "false");
  llvm::TargetOptions targetOptions;
  // a * b + c may become one fma, as in Triton (and nvcc) by default: fewer
  // instructions and one rounding instead of two.
  targetOptions.AllowFPOpFusion = llvm::FPOpFusion::Fast;
  return std::unique_ptr<llvm::TargetMachine>(target.createTargetMachine(
      triple, options.chip, getPtxFeatures(options.chip), targetOptions,
      std::nullopt, std::nullopt,
      options.optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
      : options.optLevel >= 1 ? llvm::CodeGenOptLevel::Default
                              : llvm::CodeGenOptLevel::None));
}

std::string mlir::tile::getPtxFeatures(StringRef chip) {
  // PTX 8.0 covers sm_90 (and everything before it) and ptxas 12+ reads it.
  return "+ptx80";
}

static std::string cudaRoot() {
  if (const char *home = std::getenv("CUDA_HOME"))
    return home;
  return "/usr/local/cuda";
}

std::string mlir::tile::findPtxas() {
  if (const char *p = std::getenv("TILE_PTXAS"))
    return p;
  std::string path = cudaRoot() + "/bin/ptxas";
  if (llvm::sys::fs::can_execute(path))
    return path;
  if (auto found = llvm::sys::findProgramByName("ptxas"))
    return *found;
  return path;
}

static std::string libdevicePath() {
  if (const char *p = std::getenv("TILE_LIBDEVICE"))
    return p;
  return cudaRoot() + "/nvvm/libdevice/libdevice.10.bc";
}

/// Links the libdevice functions `module` declares, then internalizes them so
/// that the optimizer inlines and drops them.
static LogicalResult linkLibdevice(llvm::Module &module, Location loc) {
  bool needed = llvm::any_of(module.functions(), [](llvm::Function &f) {
    return f.isDeclaration() && f.getName().starts_with("__nv_");
  });
  if (!needed)
    return success();
  auto buffer = llvm::MemoryBuffer::getFile(libdevicePath());
  if (!buffer)
    return emitError(loc) << "cannot read libdevice at " << libdevicePath()
                          << " (set TILE_LIBDEVICE)";
  auto lib = llvm::parseBitcodeFile(buffer.get()->getMemBufferRef(),
                                    module.getContext());
  if (!lib)
    return emitError(loc) << "cannot parse libdevice: "
                          << llvm::toString(lib.takeError());
  (*lib)->setTargetTriple(module.getTargetTriple());
  (*lib)->setDataLayout(module.getDataLayout());
  if (llvm::Linker::linkModules(module, std::move(*lib),
                                llvm::Linker::Flags::LinkOnlyNeeded))
    return emitError(loc) << "linking libdevice failed";
  for (llvm::Function &f : module.functions())
    if (!f.isDeclaration() && f.getName().starts_with("__nv_"))
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  // libdevice asks __nvvm_reflect whether to flush denormals: no.
  module.addModuleFlag(llvm::Module::Override, "nvvm-reflect-ftz",
                       static_cast<uint32_t>(0));
  return success();
}

/// The first op of `module` that only sm_90a has (wgmma, setmaxnreg), or
/// null. Every wgmma group ends in a commit; its fence may be an asm
/// statement (register-A fp8 carries its fragments through one).
static Operation *findArchSpecificOp(gpu::GPUModuleOp module) {
  Operation *found = nullptr;
  module.walk([&](Operation *op) {
    if (isa<NVVM::WgmmaFenceAlignedOp, NVVM::WgmmaGroupSyncAlignedOp,
            NVVM::WgmmaWaitGroupSyncOp, NVVM::WgmmaMmaAsyncOp,
            NVVM::SetMaxRegisterOp>(op)) {
      found = op;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return found;
}

std::string mlir::tile::getModuleChip(gpu::GPUModuleOp module, StringRef chip) {
  if (chip != "sm_90")
    return chip.str();
  return findArchSpecificOp(module) ? "sm_90a" : chip.str();
}

/// Inline asm LLVM's backend would die on, from IR resumed from a
/// hand-edited dump: the AsmPrinter aborts the process (report_fatal_error)
/// on a `$` reference it cannot resolve in the asm string, and code
/// generation crashed on a constraint string it cannot parse (compiler
/// fuzzer, seed 20261210). References: `$$`, `$N`, `${N}`, `${N:m}` and the
/// dialect-variant markers `$(`, `$|`, `$)`.
static LogicalResult verifyInlineAsm(gpu::GPUModuleOp gpuModule) {
  WalkResult result = gpuModule.walk([](LLVM::InlineAsmOp op) {
    StringRef constraints = op.getConstraints();
    if (!constraints.empty() &&
        llvm::InlineAsm::ParseConstraints(constraints).empty()) {
      op.emitOpError() << "has constraints LLVM cannot parse: '"
                       << constraints.take_front(40) << "...'";
      return WalkResult::interrupt();
    }
    size_t numOperands = 0; // outputs and inputs; clobbers (~) are not
    for (StringRef c : llvm::split(constraints, ','))
      if (!c.trim().starts_with("~"))
        ++numOperands;
    StringRef text = op.getAsmString();
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] != '$')
        continue;
      StringRef rest = text.substr(i + 1);
      if (!rest.empty() && llvm::is_contained("$(|)", rest.front())) {
        ++i;
        continue;
      }
      bool braced = rest.consume_front("{");
      size_t digits = rest.find_if_not(llvm::isDigit);
      unsigned number;
      bool valid = digits != 0 &&
                   !rest.take_front(digits).getAsInteger(10, number) &&
                   number < numOperands;
      if (valid && braced) {
        size_t close = rest.find('}');
        valid = close != StringRef::npos && close >= digits;
      }
      if (!valid) {
        op.emitOpError() << "asm string refers to an operand with '$"
                         << text.substr(i + 1, 8)
                         << "...', which names none of its " << numOperands
                         << " operands";
        return WalkResult::interrupt();
      }
    }
    return WalkResult::advance();
  });
  return failure(result.wasInterrupted());
}

FailureOr<std::string> mlir::tile::translateToPtx(gpu::GPUModuleOp gpuModule,
                                                  const PtxOptions &ptxOptions,
                                                  std::string *llvmIR) {
  initNVPTX();
  PtxOptions options = ptxOptions;
  options.chip = getModuleChip(gpuModule, options.chip);
  Location loc = gpuModule.getLoc();
  MLIRContext *ctx = gpuModule.getContext();
  registerBuiltinDialectTranslation(*ctx);
  registerLLVMDialectTranslation(*ctx);
  registerNVVMDialectTranslation(*ctx);
  registerGPUDialectTranslation(*ctx);

  if (failed(verifyInlineAsm(gpuModule)))
    return failure();
  // LLVM's instruction selection aborts the process on these elsewhere.
  if (Operation *op = findArchSpecificOp(gpuModule);
      op && options.chip != "sm_90a")
    return op->emitError() << "'" << op->getName()
                           << "' needs sm_90a (Hopper), not " << options.chip;
  // Before sm_90 every launch waits for its predecessor: griddepcontrol
  // (which ptxas refuses there) has nothing to do.
  unsigned version = 0;
  if (!StringRef(options.chip).drop_front(3).consumeInteger(10, version) &&
      version < 90)
    gpuModule.walk([](NVVM::GriddepcontrolOp op) { op.erase(); });
  // A CUtensorMap is passed by value and used in place (its generic
  // address): byval with nvvm.grid_constant, not a copy in local memory.
  gpuModule.walk([ctx](LLVM::LLVMFuncOp func) {
    auto args = func->getAttrOfType<DenseI32ArrayAttr>(kGridConstantArgsAttr);
    if (!args)
      return;
    auto bytes = LLVM::LLVMArrayType::get(IntegerType::get(ctx, 8), 128);
    for (int32_t arg : args.asArrayRef()) {
      func.setArgAttr(arg, LLVM::LLVMDialect::getByValAttrName(),
                      TypeAttr::get(bytes));
      func.setArgAttr(arg, LLVM::LLVMDialect::getAlignAttrName(),
                      IntegerAttr::get(IntegerType::get(ctx, 64), 64));
      func.setArgAttr(arg, NVVM::NVVMDialect::getGridConstantAttrName(),
                      UnitAttr::get(ctx));
    }
    func->removeAttr(kGridConstantArgsAttr);
  });
  llvm::LLVMContext llvmContext;
  // Errors the backend reports (an inline asm constraint it cannot meet,
  // ...) would exit the process without a handler: collected instead.
  std::string backendErrors;
  llvm::raw_string_ostream backendErrorStream(backendErrors);
  llvm::DiagnosticPrinterRawOStream backendPrinter(backendErrorStream);
  llvmContext.setDiagnosticHandlerCallBack(
      [](const llvm::DiagnosticInfo *info, void *printer) {
        if (info->getSeverity() != llvm::DS_Error)
          return;
        info->print(*static_cast<llvm::DiagnosticPrinter *>(printer));
        *static_cast<llvm::DiagnosticPrinterRawOStream *>(printer) << "; ";
      },
      &backendPrinter);
  std::unique_ptr<llvm::Module> module =
      translateModuleToLLVMIR(gpuModule, llvmContext, gpuModule.getName());
  if (!module)
    return emitError(loc) << "translation of the gpu.module to LLVM IR failed";

  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return emitError(loc) << "NVPTX target unavailable: " << error;
  std::unique_ptr<llvm::TargetMachine> machine =
      createNVPTXMachine(*target, triple, options);
  if (!machine)
    return emitError(loc) << "cannot create an NVPTX target machine for "
                          << options.chip;
  module->setTargetTriple(triple);
  module->setDataLayout(machine->createDataLayout());
  if (failed(linkLibdevice(*module, loc)))
    return failure();

  if (options.optLevel > 0) {
    llvm::LoopAnalysisManager lam;
    llvm::FunctionAnalysisManager fam;
    llvm::CGSCCAnalysisManager cgam;
    llvm::ModuleAnalysisManager mam;
    llvm::PassBuilder pb(machine.get());
    pb.registerModuleAnalyses(mam);
    pb.registerCGSCCAnalyses(cgam);
    pb.registerFunctionAnalyses(fam);
    pb.registerLoopAnalyses(lam);
    pb.crossRegisterProxies(lam, fam, cgam, mam);
    llvm::OptimizationLevel level = options.optLevel >= 3
                                        ? llvm::OptimizationLevel::O3
                                        : llvm::OptimizationLevel::O2;
    llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(level);
    mpm.run(*module, mam);
  }
  // After the optimizer, which would narrow the rewrite back.
  avoidNarrowNegationFolds(*module);
  if (llvmIR) {
    llvmIR->clear();
    llvm::raw_string_ostream os(*llvmIR);
    module->print(os, nullptr);
  }

  llvm::SmallString<0> ptx;
  {
    llvm::raw_svector_ostream os(ptx);
    llvm::legacy::PassManager pm;
    if (machine->addPassesToEmitFile(pm, os, nullptr,
                                     llvm::CodeGenFileType::AssemblyFile))
      return emitError(loc) << "the NVPTX backend cannot emit assembly";
    pm.run(*module);
  }
  if (!backendErrors.empty())
    return emitError(loc) << "the NVPTX backend failed: " << backendErrors;
  return std::string(ptx.str());
}

static FailureOr<std::string> runPtxas(StringRef ptx, StringRef chip,
                                       std::string &log, bool verbose,
                                       bool lineInfo) {
  llvm::SmallString<128> ptxPath, cubinPath, logPath;
  int fd;
  if (llvm::sys::fs::createTemporaryFile("tile", "ptx", fd, ptxPath)) {
    log = "cannot create a temporary file";
    return failure();
  }
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << ptx;
  }
  llvm::sys::fs::createTemporaryFile("tile", "cubin", cubinPath);
  llvm::sys::fs::createTemporaryFile("tile", "log", logPath);
  std::string ptxas = findPtxas();
  std::string arch = ("-arch=" + chip).str();
  SmallVector<StringRef> args{ptxas, arch, ptxPath, "-o", cubinPath};
  if (verbose)
    args.push_back("-v");
  if (lineInfo)
    args.push_back("-lineinfo");
  std::optional<StringRef> redirects[] = {std::nullopt, StringRef(logPath),
                                          StringRef(logPath)};
  std::string errMsg;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0,
                                     &errMsg);
  if (auto buf = llvm::MemoryBuffer::getFile(logPath))
    log = (*buf)->getBuffer().str();
  if (!errMsg.empty())
    log += errMsg;
  FailureOr<std::string> cubin = failure();
  if (rc == 0)
    if (auto buf = llvm::MemoryBuffer::getFile(cubinPath, /*IsText=*/false))
      cubin = (*buf)->getBuffer().str();
  llvm::sys::fs::remove(ptxPath);
  llvm::sys::fs::remove(cubinPath);
  llvm::sys::fs::remove(logPath);
  if (rc != 0 && log.empty())
    log = "ptxas (" + ptxas + ") failed with exit code " + std::to_string(rc);
  return cubin;
}

/// The most bytes of spill stores in a ptxas -v log.
static int64_t spillBytes(StringRef log) {
  int64_t most = 0;
  StringRef marker = " bytes spill stores";
  for (size_t at = log.find(marker); at != StringRef::npos;
       at = log.find(marker, at + 1)) {
    size_t start = log.find_last_not_of("0123456789", at - 1) + 1;
    int64_t n = 0;
    if (!log.slice(start, at).getAsInteger(10, n))
      most = std::max(most, n);
  }
  return most;
}

/// `ptx` without the line of each directive in `directives` (if present).
static std::string withoutDirectives(StringRef ptx,
                                     ArrayRef<StringRef> directives) {
  std::string out = ptx.str();
  for (StringRef directive : directives) {
    size_t at = out.find(directive.str());
    if (at != std::string::npos)
      out.erase(at, out.find('\n', at) - at);
  }
  return out;
}

/// The value of directive `name` (".maxnreg") in `ptx`, or 0.
static int64_t directiveValue(StringRef ptx, StringRef name) {
  size_t at = ptx.find(name);
  int64_t value = 0;
  if (at != StringRef::npos)
    ptx.drop_front(at + name.size()).ltrim().consumeInteger(10, value);
  return value;
}

FailureOr<std::string> mlir::tile::assembleCubin(StringRef ptx, StringRef chip,
                                                 std::string &log, bool verbose,
                                                 bool lineInfo) {
  // Register caps are dropped when ptxas cannot fit the code under them, or
  // spills more than a few registers: the .minnctapersm of two blocks per SM
  // for mma kernels, and a warp-specialized kernel's .maxnreg (its setmaxnreg
  // plan). Without it ptxas takes what the code needs, more than the plan,
  // which still covers the consumers' setmaxnreg.inc.
  bool capped = ptx.contains(".minnctapersm") || ptx.contains(".maxnreg");
  if (!capped)
    return runPtxas(ptx, chip, log, verbose, lineInfo);
  FailureOr<std::string> cubin =
      runPtxas(ptx, chip, log, /*verbose=*/true, lineInfo);
  if (succeeded(cubin) && spillBytes(log) <= 64)
    return cubin;
  std::string cappedLog = log;
  FailureOr<std::string> uncapped =
      runPtxas(withoutDirectives(ptx, {".minnctapersm", ".maxnreg"}), chip, log,
               /*verbose=*/true, lineInfo);
  // Fewer registers than the plan would leave setmaxnreg.inc waiting
  // forever: the spilling build is the one to keep.
  int64_t plan = directiveValue(ptx, ".maxnreg");
  if (succeeded(uncapped) && plan && directiveValue(log, "Used") < plan &&
      succeeded(cubin)) {
    log = cappedLog;
    return cubin;
  }
  return uncapped;
}
