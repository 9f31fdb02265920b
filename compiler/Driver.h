//===- Driver.h - compile a tile module for a target ------------*- C++ -*-===//
//
// The entry points the Python module and tilec use. Each runs the tile-level
// passes, then the backend's pipeline, recording the IR after each stage.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_COMPILER_DRIVER_H
#define TILE_COMPILER_DRIVER_H

#include "compiler/MmaPipelining.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
class OpPassManager;
class PassManager;
class ScopedDiagnosticHandler;
} // namespace mlir

namespace mlir::tile {

/// Everything that decides what a compile produces. The Python frontend and
/// tilec read the TILE_* switches once into these fields; passes get them as
/// pass options, and the binary cache key is derived from them alone.
struct CompileOptions {
  std::string target = "cpu"; // "cpu", "sm_80", "sm_90"
  int numWarps = 0;           // 0: the compiler chooses
  int optLevel = 3;
  std::string dumpDir;        // when set, every stage is written there

  // Code generation for CUDA targets.
  MmaPipelining mmaPipelining = MmaPipelining::AsyncCopy; // TILE_GPU_PIPELINE
  int numStages = 0;         // cp.async ring slots of mma loops; 0: chosen
  bool warpgroupMma = true;  // wgmma where the target has it; TILE_WGMMA=0
  // A producer warpgroup for TMA rings: attention's and persistent
  // loops' by default, TILE_WARP_SPECIALIZE=1 every ring, =0 none.
  WarpSpecialization warpSpecialize = WarpSpecialization::Attention;
  // setmaxnreg's split of a warp-specialized kernel's registers per thread:
  // the producer keeps, the consumers ask for; TILE_WS_REGISTERS=P,C.
  int producerRegisters = 40;
  int consumerRegisters = 232;
  bool pingPong = false;       // the consumer warpgroups take turns at an
                               // attention ring's wgmmas; TILE_PING_PONG=1
  bool overlapMmaChain = true; // attention's softmax beside the previous
                               // iteration's P V; TILE_MMA_OVERLAP=0: false
  bool lateOpsFirst = false;   // in that overlap, O's rescale before S_j is
                               // issued; TILE_LATE_OPS_FIRST=1: true
  bool tiedWgmmaFence = true;  // a register-A wgmma's fence carries its A
                               // fragments; TILE_TIED_FENCE=0: false
  bool deferMmaWaits = false;  // a loop's wgmmas issued early, each waited
                               // for where it is read (tile-defer-mma-
                               // waits); TILE_DEFER_MMA_WAITS=1: true
  bool moveDeferredMmas = true; // with deferMmaWaits, the mmas move up
                                // too; TILE_DEFER_MMA_WAITS=in-place: false
  bool delayStagedMma = false; // a staged operand's mma one iteration late,
                               // its slots handed over by mbarriers
                               // (tile-delay-staged-mma);
                               // TILE_DELAY_STAGED_MMA=1: true
  bool splitUniformMasks = true; // loops cut where their masks turn all
                                 // true (causal attention masks only the
                                 // diagonal); TILE_SPLIT_MASKS=0: false
  bool stageStores = true;     // mma results stored in 16-byte runs through
                               // shared memory; TILE_STAGE_STORES=0: false
  bool tmaStores = true;       // warpgroup mma results stored by TMA bulk
                               // copies; TILE_TMA_STORES=0: false
  bool prefetchTensorMaps = false; // thread 0 prefetches the TMA
                                   // descriptors; TILE_PREFETCH_TMAPS=1
  bool bulkReduce = false;     // atomic adds of mma results by TMA bulk
                               // reductions; TILE_BULK_REDUCE=1: true
  bool stagedOperands = false; // wgmma for mmas whose operand a loop
                               // computes (tile-tiling staged-operands);
                               // TILE_STAGED_MMA=1: true
  bool nvptxRegisterScheduling = true; // TILE_NVPTX_SCHED=source: false

  // Debugging (tilec), as mlir-opt's flags of the same names; to stderr.
  bool printIRAfterAll = false; // --print-ir-after-all
  bool timePasses = false;      // --time-passes: a report per stage
  bool printDebugInfo = false;  // --mlir-print-debuginfo: locations in the
                                // recorded stages, line info in LLVM IR/PTX
  /// Stages the input IR has already been through, in order (tilec resuming
  /// from a dump or a reproducer): they do not run, and the input is
  /// recorded as the last of them.
  std::vector<std::string> skipStages;
};

/// The IR after each stage, in order: {"tile", text}, {"fused", text}, ...
using StageList = std::vector<std::pair<std::string, std::string>>;

/// What a failed compile reports: the stage that failed and the diagnostics
/// (MLIR's "file:line:col: error: ..." form), plus a reproducer path.
struct CompileFailure {
  std::string stage;
  std::string message;
  std::string reproducer;
};

/// A tensor-map parameter of a compiled GPU kernel (a kernel argument
/// marked `tilegpu.tensor_map_of`): the runtime encodes it at each launch
/// from array argument `array` (docs/internals.md section 3). Tensor maps
/// follow the kernel's other parameters, in this order.
struct TensorMapArg {
  int array = 0;            // the array's argument number
  std::vector<int64_t> box; // elements per dimension, in the array's order
  std::string elementType;  // "f16", "bf16", "f32", "f64", "u8", ... (TMA's)
  int swizzle = 0;          // bytes of the shared-memory swizzle
};

/// Two array arguments whose memory must not overlap at a launch: `read`
/// is read ahead (a TMA ring) of atomic updates of `written` in one loop
/// (tile-pipeline-mma's reductions); the runtime checks each launch.
/// Element sizes in bytes give the arrays' spans.
struct DisjointArrays {
  int written = 0, writtenBytes = 0;
  int read = 0, readBytes = 0;
};

/// A kernel compiled for an NVIDIA GPU.
struct GpuBinary {
  std::string kernelName;
  int numWarps = 4;
  int sharedMem = 0; // bytes of dynamic shared memory per block
  /// Blocks per thread-block cluster along grid axis 0 (1: no clusters);
  /// the kernel runs either way, clusters form where the grid divides.
  int clusterSize = 1;
  std::vector<TensorMapArg> tensorMaps;
  std::vector<DisjointArrays> disjoint;
  std::string ptx;
  std::string cubin;
  StageList stages;
};

/// Tile-level passes shared by every backend (canonicalize, tile-fuse, ...).
/// Runs on `module` in place; appends "tile" and "fused" to `stages`.
LogicalResult runTileLevelPasses(ModuleOp module, const CompileOptions &opts,
                                 StageList &stages, CompileFailure &failure);

/// The pipeline runTileLevelPasses runs, for named pipelines to reuse.
void buildTileLevelPipeline(OpPassManager &pm);

/// tile-chunk-loops (both backends: long reductions and long-K mmas into
/// loops), then, for GPUs, tile-tiling (warp/instruction tiling; `numWarps`,
/// 0: chosen).
void buildTilingPipeline(OpPassManager &pm, bool gpu, int numWarps = 0,
                         bool warpgroupMma = false,
                         bool stagedOperands = false);

/// Whether mma loops compile to wgmma: the target is sm_90 (Hopper) and the
/// options do not ask for mma.sync.
bool usesWarpgroupMma(const CompileOptions &opts);

/// The options text that keys the binary cache: every field that can change
/// the binary (not the dump directory or the debugging output).
std::string codegenOptionsText(const CompileOptions &opts);


/// The GPU stage "tiled" (after "fused"): buildTilingPipeline with the
/// options' warps. The CPU runs tile-tiling at the start of its "host" stage.
LogicalResult runTilingStage(ModuleOp module, const CompileOptions &opts,
                             StageList &stages, CompileFailure &failure);

/// Runs `pm` on `module` as the compile stage `stage`. On success the IR is
/// appended to `stages` (and written to the dump dir); on failure `failure`
/// gets the diagnostics and a reproducer: the stage's input IR, with
/// locations, headed by the pipeline that failed on it. A skipped stage does
/// not run (the last skipped one records the input); the debugging options
/// (IR after every pass, pass timing) apply to `pm`.
LogicalResult runStage(ModuleOp module, PassManager &pm, StringRef stage,
                       const CompileOptions &opts, StageList &stages,
                       CompileFailure &failure);

/// Whether `stage` is one the input has already been through (resuming).
bool isSkippedStage(const CompileOptions &opts, StringRef stage);

/// Appends the module's IR to `stages` as `stage` and, with a dump dir (the
/// option, else $TILE_DUMP_DIR), writes it to <dir>/<kernel>.<stage>.mlir.
void recordStage(ModuleOp module, StringRef stage, const CompileOptions &opts,
                 StageList &stages);
/// The same for a stage's text (LLVM IR, PTX, ...), written to
/// <dir>/<kernel>.<stage>.<extension>.
void recordStageText(StringRef kernel, StringRef stage, StringRef extension,
                     std::string text, const CompileOptions &opts,
                     StageList &stages);

/// Writes a reproducer: a header naming the stage and the pipeline to replay
/// with tile-opt, then `input` (IR). It goes to the dump dir when there is
/// one, else to a fresh temporary file; returns the path ("" on failure).
std::string writeReproducer(StringRef kernel, StringRef stage,
                            StringRef pipeline, StringRef input,
                            const CompileOptions &opts);

/// The name of the module's tile.kernel function ("kernel" if none).
std::string getKernelName(ModuleOp module);

/// Collects the diagnostics emitted on a context while it lives, one per
/// line in MLIR's "file:line:col: error: message" form (notes included).
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext *ctx);
  ~DiagnosticCollector();
  /// The diagnostics so far; clears them.
  std::string take();

private:
  std::string text;
  std::unique_ptr<ScopedDiagnosticHandler> handler;
};

/// tile IR -> PTX -> cubin (ptxas). Implemented in compiler/gpu/.
FailureOr<GpuBinary> compileForGpu(ModuleOp module, const CompileOptions &opts,
                                   CompileFailure &failure);

class HostKernel;
/// tile IR -> host code, JIT-compiled: the tile-level passes, then the host
/// stages. Implemented in compiler/cpu/ (HostJit.h defines HostKernel).
FailureOr<std::unique_ptr<HostKernel>>
compileForCpu(ModuleOp module, const CompileOptions &opts,
              CompileFailure &failure);

} // namespace mlir::tile

#endif
