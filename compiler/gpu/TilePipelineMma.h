//===- TilePipelineMma.h - tile-pipeline-mma's shared helpers ---*- C++ -*-===//
//
// tile-pipeline-mma lives in TilePipelineMma.cpp (registers and cp.async
// rings) and TilePipelineMmaTma.cpp (TMA rings); these are the pieces both
// use.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_COMPILER_GPU_TILEPIPELINEMMA_H
#define TILE_COMPILER_GPU_TILEPIPELINEMMA_H

#include "dialects/tile/TileDialect.h"
#include "dialects/tilegpu/TileGpuDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tile::pipeline {

/// Collects into `slice` (in body order) the ops of `forOp`'s body that `v`
/// depends on; false when one cannot be re-evaluated for another iteration.
bool collectIndexSlice(Value v, scf::ForOp forOp,
                       llvm::SetVector<Operation *> &slice);
/// Whether `op` (or an op in it) may write memory.
bool writesMemory(Operation *op);
/// Whether `load` reads a plain block: a 2-d block (possibly behind unit
/// dimensions) of a unit-inner-stride array, zero-padded, unordered, weak.
/// What both the cp.async and the TMA rings can copy.
bool isPlainBlockLoad(LoadOp load);
/// Whether `load` lowers to 16-byte copies (a plain block, 16-byte aligned
/// and vectorizable).
bool copiesIn16Bytes(LoadOp load);
/// The most dynamic shared memory a block can have on sm_80/sm_90.
constexpr int64_t kMaxSharedBytes = 227 * 1024;
/// Elements of padding per row of tile-stage-stores' staging buffer: the
/// 8 rows one fragment store writes land in distinct banks.
constexpr int64_t kStageRowPadding = 8;
/// Bytes a ring sized to fill shared memory leaves for the scratch of its
/// loop (the reductions and conversions inside the loop body).
constexpr int64_t kScratchSlack = 2 * 1024;
/// Slots (2..4) of a cp.async ring of `slotBytes` slots: about half of an
/// SM's shared memory.
int64_t ringStages(int64_t slotBytes);
/// Slots of a matmul's wgmma ring of `slotBytes` slots (3-4).
int64_t warpgroupRingStages(int64_t slotBytes);
/// `automatic` slots unless num-stages asks for `requested` (at least
/// `minimum`); an error at `mma` when they cannot fit.
FailureOr<int64_t> ringSlots(MmaOp mma, int64_t automatic, int64_t requested,
                             int64_t minimum, int64_t slotBytes);
/// Slot ((iv - lb) / step + ahead) % stages of `forOp`'s ring, as i32.
Value ringSlotAt(OpBuilder &b, Location loc, scf::ForOp forOp, Value iv,
                 int64_t ahead, int64_t stages);
/// A ring of `stages` slots of `rows` x `cols` blocks in front of `forOp`.
Value allocRing(scf::ForOp forOp, int64_t rows, int64_t cols, Type elemType,
                int64_t stages, int64_t swizzle, int64_t rowStride);
/// `mma` rewritten as a tilegpu.mma on this iteration's slots (slot 0 of a
/// one-slot A buffer; `aTransposed`: it holds A^T).
void replaceWithSharedMma(MmaOp mma, scf::ForOp forOp, int64_t stages,
                          Value aRing, Value bRing, bool bTransposed,
                          bool inFlight, bool aTransposed = false);
/// Whether `mma`'s result only feeds the next iteration's mma and the
/// loop's results (its wgmma may stay in flight across the back edge).
bool onlyFeedsNextIteration(MmaOp mma, scf::ForOp forOp);

/// After `forOp`, whose last wgmma is still in flight: a tilegpu.wait_mma
/// that the uses of the accumulators it yields (f32, or int8's i32) read
/// instead. Returns the wait, or null when the loop yields none.
Operation *waitForInFlightAccumulators(scf::ForOp forOp);

/// One mma of a loop whose B streams through a ring (attention's K^T and
/// V): the load, the views from the mma's B down to it, the load's index
/// slice, whether B is read K-major (the transpose of a row-major block),
/// and the ring once built.
struct StreamedB {
  MmaOp mma;
  LoadOp load;
  SmallVector<Operation *> chain;
  llvm::SetVector<Operation *> slice;
  bool kMajor = false;
  Value ring;
};
/// Whether every mma of `forOp`'s body reads B from a plain block load of
/// the body (16-byte copies with `in16Bytes`); one entry per mma in `out`.
/// `sharedLoads`: a load several mmas read (through views of their own or
/// shared ones) is one entry per mma; the caller gives them one ring.
/// `staged`: the mmas with an operand the body computes in registers
/// (stagedOperand) go there instead of failing the loop.
bool collectStreamedB(scf::ForOp forOp, bool in16Bytes,
                      SmallVectorImpl<StreamedB> &out,
                      bool sharedLoads = false,
                      SmallVectorImpl<MmaOp> *staged = nullptr);
/// Whether every use of the loads and views of `streamed` is one of them or
/// their mmas (nothing else reads the registers the rings replace).
bool onlyStreamedUses(ArrayRef<StreamedB> streamed);
/// Erases the views and loads of `streamed` (and `extra`) left unused.
void eraseStreamedViews(ArrayRef<StreamedB> streamed,
                        ArrayRef<Operation *> extra = {});
/// The TMA ring of a matmul-shaped sm_90 wgmma loop (TilePipelineMmaTma.cpp);
/// false when the loop or its operands do not qualify (the caller then
/// tries the cp.async ring).
/// `epilogueRoom`: see the pass's option of that name.
FailureOr<bool> pipelineTma(scf::ForOp forOp, int64_t numStages,
                            bool epilogueRoom);
/// TMA rings for the B operands of every wgmma of the loop (attention's
/// K^T and V), A staying where it is; false when they do not qualify.
/// `ringArrays` (if given) gets the kernel arguments the rings read.
/// `withRows`: the (1, n) rows the loop loads come through rings too.
FailureOr<bool>
pipelineTmaB(scf::ForOp forOp, int64_t numStages,
             SmallVectorImpl<BlockArgument> *ringArrays = nullptr,
             bool withRows = true);
/// The tensor-map argument of `func` describing `array` as `type`, added
/// after the others when the kernel has none yet.
FailureOr<Value> tensorMapArg(func::FuncOp func, BlockArgument array,
                              tilegpu::TensorMapType type);
/// The kernel attribute listing pairs of array arguments (written, read
/// ahead) whose memory must not overlap at a launch: a loop whose atomic
/// updates a ring reads ahead of (the runtime checks each launch).
constexpr llvm::StringLiteral kDisjointArraysAttr = "tile.disjoint_arrays";

} // namespace mlir::tile::pipeline

#endif
