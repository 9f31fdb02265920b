//===- Driver.cpp - stages, diagnostics, dumps and reproducers ------------===//
#include "compiler/Driver.h"
#include "compiler/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tile;

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

/// "file:line:col" of the innermost file location in `loc`, or "".
static std::string formatLocation(Location loc) {
  std::string text;
  loc->walk([&](Location inner) {
    if (auto flc = dyn_cast<FileLineColLoc>(inner)) {
      text = (flc.getFilename().getValue() + ":" + Twine(flc.getLine()) + ":" +
              Twine(flc.getColumn()))
                 .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}

static StringRef severityName(DiagnosticSeverity severity) {
  switch (severity) {
  case DiagnosticSeverity::Error:
    return "error";
  case DiagnosticSeverity::Warning:
    return "warning";
  case DiagnosticSeverity::Note:
    return "note";
  case DiagnosticSeverity::Remark:
    return "remark";
  }
  llvm_unreachable("unknown severity");
}

static void formatDiagnostic(Diagnostic &diag, raw_ostream &os) {
  auto line = [&](Diagnostic &d) {
    std::string where = formatLocation(d.getLocation());
    if (!where.empty())
      os << where << ": ";
    os << severityName(d.getSeverity()) << ": " << d.str() << "\n";
  };
  line(diag);
  for (Diagnostic &note : diag.getNotes())
    line(note);
}

DiagnosticCollector::DiagnosticCollector(MLIRContext *ctx)
    : handler(std::make_unique<ScopedDiagnosticHandler>(
          ctx, [this](Diagnostic &diag) {
            llvm::raw_string_ostream os(text);
            formatDiagnostic(diag, os);
            return success();
          })) {}

DiagnosticCollector::~DiagnosticCollector() = default;

std::string DiagnosticCollector::take() { return std::exchange(text, {}); }

//===----------------------------------------------------------------------===//
// Stages
//===----------------------------------------------------------------------===//

std::string tile::getKernelName(ModuleOp module) {
  // Any function kind: after lowering the kernel is an llvm.func.
  for (Operation &op : module.getBody()->getOperations())
    if (op.hasAttr("tile.kernel"))
      if (auto symbol = dyn_cast<SymbolOpInterface>(op))
        return symbol.getName().str();
  // IR past the 'gpu' stage (tilec resuming) has only the GPU kernel.
  std::string name = "kernel";
  module->walk([&](SymbolOpInterface symbol) {
    if (!symbol->hasAttr("gpu.kernel"))
      return WalkResult::advance();
    name = symbol.getName().str();
    return WalkResult::interrupt();
  });
  return name;
}

static std::string getDumpDir(const CompileOptions &opts) {
  return opts.dumpDir; // TILE_DUMP_DIR reaches here through the options
}

static bool writeFile(StringRef path, StringRef text) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return false;
  os << text;
  return !os.has_error();
}

/// A kernel name as a file name part: the name is the user's (any Python
/// `__name__`), so "../../x" must not walk out of the dump directory.
static std::string fileNamePart(StringRef kernel) {
  std::string safe;
  for (char c : kernel.take_front(128))
    safe += llvm::isAlnum(c) || c == '_' || c == '-' || c == '.' ? c : '_';
  if (safe.empty() || safe.front() == '.')
    safe.insert(0, "_");
  return safe;
}

/// Writes `text` to <dump dir>/<fileName> when there is a dump dir.
static void dumpFile(const CompileOptions &opts, const Twine &fileName,
                     StringRef text) {
  std::string dir = getDumpDir(opts);
  if (dir.empty() || llvm::sys::fs::create_directories(dir))
    return;
  SmallString<256> path(dir);
  llvm::sys::path::append(path, fileName);
  (void)writeFile(path, text);
}

void tile::recordStageText(StringRef kernel, StringRef stage,
                           StringRef extension, std::string text,
                           const CompileOptions &opts, StageList &stages) {
  dumpFile(opts, fileNamePart(kernel) + "." + stage + "." + extension, text);
  stages.emplace_back(stage.str(), std::move(text));
}

/// Whether the input IR has already been through `stage` (tilec resuming).
static bool isSkipped(const CompileOptions &opts, StringRef stage) {
  return llvm::is_contained(opts.skipStages, stage);
}

static OpPrintingFlags stagePrintingFlags(const CompileOptions &opts) {
  OpPrintingFlags flags;
  if (opts.printDebugInfo)
    flags.enableDebugInfo();
  return flags;
}

void tile::recordStage(ModuleOp module, StringRef stage,
                       const CompileOptions &opts, StageList &stages) {
  // Of the skipped stages only the last is the input; the others never ran.
  if (isSkipped(opts, stage) && opts.skipStages.back() != stage)
    return;
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os, stagePrintingFlags(opts));
  recordStageText(getKernelName(module), stage, "mlir", std::move(text), opts,
                  stages);
}

std::string tile::writeReproducer(StringRef kernel, StringRef stage,
                                  StringRef pipeline, StringRef input,
                                  const CompileOptions &opts) {
  SmallString<256> path;
  std::string dir = getDumpDir(opts);
  std::string fileKernel = fileNamePart(kernel);
  if (!dir.empty() && !llvm::sys::fs::create_directories(dir)) {
    path = dir;
    llvm::sys::path::append(path, fileKernel + "." + stage + ".repro.mlir");
  } else {
    int fd;
    if (llvm::sys::fs::createTemporaryFile("tile-" + fileKernel + "-" + stage,
                                           "mlir", fd, path))
      return {};
    llvm::sys::Process::SafelyCloseFileDescriptor(fd);
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "// tile reproducer: the input of stage '" << stage << "' of kernel '"
     << kernel << "', which failed.\n";
  // tilec reads the stage from the first line and resumes before it.
  os << "// Replay: tilec " << path << " --emit "
     << (stage == "parse" ? StringRef("tile") : stage) << " --target "
     << opts.target;
  if (opts.numWarps)
    os << " --num-warps " << opts.numWarps;
  if (opts.optLevel != 3)
    os << " --opt-level " << opts.optLevel;
  os << "\n";
  if (!pipeline.empty())
    os << "// Replay: tile-opt '--pass-pipeline=" << pipeline
       << "' <this file>\n";
  os << input;
  return writeFile(path, text) ? path.str().str() : std::string();
}

namespace {
/// Remembers which pass failed: passes may fail without a diagnostic.
struct FailedPassRecorder : PassInstrumentation {
  explicit FailedPassRecorder(std::string &name) : name(name) {}
  void runAfterPassFailed(Pass *pass, Operation *) override {
    if (name.empty())
      name = pass->getArgument().empty() ? pass->getName().str()
                                         : pass->getArgument().str();
  }
  std::string &name;
};
} // namespace

LogicalResult tile::runStage(ModuleOp module, PassManager &pm, StringRef stage,
                             const CompileOptions &opts, StageList &stages,
                             CompileFailure &failure) {
  if (isSkipped(opts, stage)) {
    recordStage(module, stage, opts, stages);
    return success();
  }
  std::string input;
  {
    llvm::raw_string_ostream os(input);
    module->print(os, OpPrintingFlags().enableDebugInfo());
  }
  std::string failedPass;
  pm.addInstrumentation(std::make_unique<FailedPassRecorder>(failedPass));
  // As mlir-opt --print-ir-after-all: after every pass, at the pass's scope.
  if (opts.printIRAfterAll)
    pm.enableIRPrinting([](Pass *, Operation *) { return false; },
                        [](Pass *, Operation *) { return true; },
                        /*printModuleScope=*/false,
                        /*printAfterOnlyOnChange=*/false,
                        /*printAfterOnlyOnFailure=*/false, llvm::errs(),
                        stagePrintingFlags(opts));
  // --time-passes: a report per stage, printed as the stage ends. Timing
  // goes last so that it does not time the other instrumentations.
  auto timing = std::make_unique<DefaultTimingManager>();
  TimingScope timingRoot;
  if (opts.timePasses) {
    timing->setEnabled(true);
    timingRoot = timing->getRootScope();
    pm.enableTiming(timingRoot);
  }
  DiagnosticCollector diagnostics(module->getContext());
  LogicalResult result = pm.run(module);
  if (opts.timePasses) {
    llvm::errs() << "// tile: pass timing of stage '" << stage << "'\n";
    timingRoot = TimingScope();
    timing.reset(); // prints the report
  }
  if (succeeded(result)) {
    recordStage(module, stage, opts, stages);
    return success();
  }
  std::string pipeline;
  {
    llvm::raw_string_ostream os(pipeline);
    pm.printAsTextualPipeline(os);
  }
  failure.stage = stage.str();
  failure.message = diagnostics.take();
  if (failure.message.empty())
    failure.message = "error: pass '" + failedPass + "' failed in stage '" +
                      stage.str() + "'\n";
  failure.reproducer =
      writeReproducer(getKernelName(module), stage, pipeline, input, opts);
  return LogicalResult::failure();
}

void tile::buildTileLevelPipeline(OpPassManager &pm) {
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createTileFuse());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
}

void tile::buildTilingPipeline(OpPassManager &pm, bool gpu, int numWarps,
                               bool warpgroupMma, bool stagedOperands) {
  TileChunkLoopsOptions chunks;
  // The CPU's matmul microkernel loops over K itself.
  if (!gpu)
    chunks.maxMmaK = 0;
  pm.addPass(createTileChunkLoops(chunks));
  if (!gpu)
    return;
  TileTilingOptions options;
  options.numWarps = numWarps;
  options.warpgroupMma = warpgroupMma;
  options.stagedOperands = stagedOperands;
  pm.addPass(createTileTiling(options));
}

bool tile::usesWarpgroupMma(const CompileOptions &opts) {
  // wgmma is sm_90a only: Blackwell (sm_100) dropped it.
  return opts.warpgroupMma &&
         (opts.target == "sm_90" || opts.target == "sm_90a");
}

std::string tile::codegenOptionsText(const CompileOptions &opts) {
  std::string debug = opts.printDebugInfo ? ";lineinfo" : "";
  // num_warps and the GPU switches mean nothing on the host.
  std::string splitMasks = opts.splitUniformMasks ? "" : ";split_masks=0";
  if (opts.target == "cpu")
    return "opt_level=" + std::to_string(opts.optLevel) + debug + splitMasks;
  return "num_warps=" + std::to_string(opts.numWarps) +
         ";opt_level=" + std::to_string(opts.optLevel) + debug +
         ";pipeline=" + stringifyMmaPipelining(opts.mmaPipelining).str() +
         ";stages=" + std::to_string(opts.numStages) +
         ";sched=" + (opts.nvptxRegisterScheduling ? "regpressure" : "source") +
         ";wgmma=" + (usesWarpgroupMma(opts) ? "1" : "0") +
         ";ws=" + stringifyWarpSpecialization(opts.warpSpecialize).str() +
         (opts.producerRegisters == CompileOptions().producerRegisters &&
                  opts.consumerRegisters == CompileOptions().consumerRegisters
              ? ""
              : ";ws_registers=" + std::to_string(opts.producerRegisters) +
                    "," + std::to_string(opts.consumerRegisters)) +
         (opts.pingPong ? ";ping_pong=1" : "") +
         (opts.overlapMmaChain ? "" : ";mma_overlap=0") +
         (opts.lateOpsFirst ? ";late_ops_first=1" : "") +
         (opts.tiedWgmmaFence ? "" : ";tied_fence=0") + splitMasks +
         (opts.stageStores ? "" : ";stage_stores=0") +
         (opts.tmaStores ? "" : ";tma_stores=0") +
         (opts.prefetchTensorMaps ? ";prefetch_tmaps=1" : "") +
         (opts.bulkReduce ? ";bulk_reduce=1" : "") +
         (opts.stagedOperands ? ";staged_mma=1" : "") +
         (!opts.deferMmaWaits     ? ""
          : opts.moveDeferredMmas ? ";defer_mma_waits=1"
                                  : ";defer_mma_waits=in-place") +
         (opts.delayStagedMma ? ";delay_staged_mma=1" : "");
}

LogicalResult tile::runTileLevelPasses(ModuleOp module,
                                       const CompileOptions &opts,
                                       StageList &stages,
                                       CompileFailure &failure) {
  if (opts.skipStages.empty() || opts.skipStages.back() == "tile")
    recordStage(module, "tile", opts, stages);
  PassManager pm(module->getContext());
  buildTileLevelPipeline(pm);
  return runStage(module, pm, "fused", opts, stages, failure);
}

LogicalResult tile::runTilingStage(ModuleOp module, const CompileOptions &opts,
                                   StageList &stages, CompileFailure &failure) {
  PassManager pm(module->getContext());
  buildTilingPipeline(pm, /*gpu=*/true, opts.numWarps, usesWarpgroupMma(opts),
                      opts.stagedOperands);
  return runStage(module, pm, "tiled", opts, stages, failure);
}
