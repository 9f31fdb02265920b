//===- TileDelayStagedMma.cpp - a staged operand's mma one iteration late -===//
//
// The tile-delay-staged-mma pass. In the fused attention backward every
// consumer warpgroup writes its rows of dS^T into a two-slot shared buffer
// (tilegpu.stage_operand), and dQ^T = K^T dS^T, whose contraction runs
// over the rows of both warpgroups, reads it right after a barrier of all
// consumer threads. The barrier puts the warpgroups in lock step: both
// compute their softmax at the same time while the tensor cores idle
// (Nsight Compute, 2026-12-06: the fused kernel's wgmma waits fell to 6% of
// its stalls, the two-kernel dK/dV's were 23%, and it ran 1.6x as long for
// 1.25x the products).
//
// The pass runs the mma that reads the staged slot, and the bulk reduction
// of its result, one iteration late, and hands each slot from the writing
// warpgroups to the reading ones by mbarriers instead of the barrier:
//
//   wait empty[k % 2] (parity (k / 2 + 1) % 2: the slot's previous reads)
//   stage_operand dS^T_k into slot k % 2   {unsynchronized}
//   arrive full[k % 2]
//   if k > 0:
//     wait full[(k-1) % 2] (parity ((k-1) / 2) % 2)
//     dQ^T_{k-1} = K^T slot (k-1) % 2;  arrive empty[(k-1) % 2]
//     bulk_reduce_add dQ^T_{k-1}
//
// and the last iteration's late part after the loop. A warpgroup waits only
// for the other's writes of the previous iteration, so the two may run up
// to about an iteration apart, one's softmax beside the other's wgmmas.
// Iteration k is the loop's (iv - lb) / step; what the late part reads of
// the iteration (the block's coordinates) is recomputed from iv - step.
// Each barrier counts every consumer thread. Loops it leaves alone: not
// the consumer loop of tile-warp-specialize, no staged operand read by one
// mma whose only user is a bulk reduction, operands computed by ops that
// are not pure.
//
//===----------------------------------------------------------------------===//
#include "compiler/Passes.h"
#include "compiler/gpu/TileToGpuCommon.h"
#include "dialects/tilegpu/TileGpuDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEDELAYSTAGEDMMA
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

/// The ops of one consumer loop the pass moves.
struct StagedMma {
  scf::ForOp loop;
  tilegpu::StageOperandOp stage;
  tilegpu::SlotOp slot; // the staged slot, of a two-slot buffer
  tilegpu::MmaOp mma;
  tilegpu::BulkReduceAddOp reduce;
};

std::optional<StagedMma> matchStagedMma(scf::ForOp loop) {
  if (!isConsumerLoop(loop))
    return std::nullopt;
  SmallVector<tilegpu::StageOperandOp> stages(
      loop.getBody()->getOps<tilegpu::StageOperandOp>());
  if (stages.size() != 1)
    return std::nullopt;
  StagedMma s{loop, stages.front(), {}, {}, {}};
  s.slot = s.stage.getBuffer().getDefiningOp<tilegpu::SlotOp>();
  if (!s.slot || s.slot->getBlock() != loop.getBody() ||
      s.slot.getRing().getType().getSlots() != 2)
    return std::nullopt;
  // The one mma reading the slot, in the body, after the staging.
  for (Operation *user : s.slot->getUsers()) {
    if (user == s.stage.getOperation())
      continue;
    auto mma = dyn_cast<tilegpu::MmaOp>(user);
    if (!mma || s.mma || mma->getBlock() != loop.getBody() ||
        mma.getInFlight() || mma.getDeferred() ||
        !s.stage->isBeforeInBlock(mma))
      return std::nullopt;
    s.mma = mma;
  }
  if (!s.mma || !s.mma.getResult().hasOneUse())
    return std::nullopt;
  s.reduce =
      dyn_cast<tilegpu::BulkReduceAddOp>(*s.mma.getResult().getUsers().begin());
  if (!s.reduce || s.reduce->getBlock() != loop.getBody())
    return std::nullopt;
  auto step = loop.getStep().getDefiningOp<arith::ConstantIntOp>();
  if (!step || step.value() != 1)
    return std::nullopt;
  return s;
}

/// The body's ops the late part reads (besides the mma and the
/// reduction), in program order: pure ops only, computed from the
/// induction variable and values from outside the loop.
FailureOr<SmallVector<Operation *>> lateSlice(StagedMma &s) {
  Block *body = s.loop.getBody();
  SetVector<Operation *> slice;
  SmallVector<Operation *> work = {s.mma, s.reduce};
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (!def || def->getBlock() != body || def == s.mma.getOperation() ||
          def == s.slot.getOperation() || slice.contains(def))
        continue;
      if (!isMemoryEffectFree(def) || def->getNumRegions())
        return failure();
      slice.insert(def);
      work.push_back(def);
    }
  }
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return ordered;
}

/// (iteration % 2, parity of the slot's `use`-th phase) for iteration
/// `k` of the loop; `ahead` shifts the phase (the empty barrier's first
/// waits pass at once).
std::pair<Value, Value> slotAndParity(OpBuilder &b, Location loc, Value k,
                                      int64_t ahead) {
  Value slot = arith::RemSIOp::create(b, loc, k, constI32(b, loc, 2));
  Value use = arith::AddIOp::create(
      b, loc, arith::DivSIOp::create(b, loc, k, constI32(b, loc, 2)),
      constI32(b, loc, ahead));
  return {slot, arith::RemSIOp::create(b, loc, use, constI32(b, loc, 2))};
}

/// The late part of iteration `iv` (an induction-variable value): the
/// slice recomputed, the wait for the slot's writes, the mma, the arrive
/// that frees the slot, the reduction.
void emitLatePart(OpBuilder &b, StagedMma &s, ArrayRef<Operation *> slice,
                  Value iv, Value full, Value empty) {
  Location loc = s.mma.getLoc();
  IRMapping map;
  map.map(s.loop.getInductionVar(), iv);
  for (Operation *op : slice)
    b.clone(*op, map);
  Value k = arith::SubIOp::create(b, loc, iv, s.loop.getLowerBound());
  auto [index, parity] = slotAndParity(b, loc, k, 0);
  Value slot = tilegpu::SlotOp::create(b, loc, s.slot.getType(),
                                       s.slot.getRing(), index);
  map.map(s.slot.getResult(), slot);
  tilegpu::MBarrierWaitOp::create(b, loc, full, index, parity);
  Operation *mma = b.clone(*s.mma, map);
  tilegpu::MBarrierArriveOp::create(b, loc, empty, index, Value());
  map.map(s.mma.getResult(), mma->getResult(0));
  b.clone(*s.reduce, map);
}

void delay(StagedMma &s, ArrayRef<Operation *> slice) {
  scf::ForOp loop = s.loop;
  Location loc = loop.getLoc();
  int64_t consumers = warpRoleOf(loop->getParentRegion())->threads();

  // The barriers: initialized with the ring's, before the roles split.
  OpBuilder b(loop->getParentOp());
  auto type = tilegpu::MBarriersType::get(b.getContext(), 2);
  Value full = tilegpu::AllocMBarriersOp::create(b, loc, type, IntegerAttr());
  Value empty = tilegpu::AllocMBarriersOp::create(b, loc, type, IntegerAttr());
  for (Value bars : {full, empty})
    for (int64_t i = 0; i < 2; ++i)
      tilegpu::MBarrierInitOp::create(b, loc, bars, constI32(b, loc, i),
                                      constI32(b, loc, consumers));

  // The staging: wait until the slot's last readers are done, write it
  // without the barrier, arrive.
  b.setInsertionPoint(s.stage);
  Value k = arith::SubIOp::create(b, loc, loop.getInductionVar(),
                                  loop.getLowerBound());
  auto [index, emptyParity] = slotAndParity(b, loc, k, 1);
  Value slot = tilegpu::SlotOp::create(b, loc, s.slot.getType(),
                                       s.slot.getRing(), index);
  tilegpu::MBarrierWaitOp::create(b, loc, empty, index, emptyParity);
  s.stage.getBufferMutable().assign(slot);
  s.stage.setUnsynchronized(true);
  b.setInsertionPointAfter(s.stage);
  tilegpu::MBarrierArriveOp::create(b, loc, full, index, Value());

  // The late part of the iteration before `next` (iv, or the upper bound
  // after the loop), when `next` is past the lower bound.
  auto latePartBefore = [&](Value next) {
    Value past = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, next,
                                       loop.getLowerBound());
    auto guard = scf::IfOp::create(b, loc, past, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard insertion(b);
    b.setInsertionPoint(guard.thenBlock()->getTerminator());
    Value iv = arith::SubIOp::create(b, loc, next, loop.getStep());
    emitLatePart(b, s, slice, iv, full, empty);
    return guard;
  };
  b.setInsertionPoint(loop.getBody()->getTerminator());
  latePartBefore(loop.getInductionVar());
  b.setInsertionPointAfter(loop);
  scf::IfOp after = latePartBefore(loop.getUpperBound());
  b.setInsertionPointAfter(after);
  gpu::BarrierOp::create(b, loc);
  for (Value bars : {full, empty})
    for (int64_t i = 0; i < 2; ++i)
      tilegpu::MBarrierInvalOp::create(b, loc, bars, constI32(b, loc, i));

  s.reduce->erase();
  s.mma->erase();
  for (Operation *op : llvm::reverse(slice))
    if (op->use_empty())
      op->erase();
  if (s.slot->use_empty())
    s.slot->erase();
}

struct TileDelayStagedMmaPass
    : tile::impl::TileDelayStagedMmaBase<TileDelayStagedMmaPass> {
  using TileDelayStagedMmaBase::TileDelayStagedMmaBase;

  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      std::optional<StagedMma> s = matchStagedMma(loop);
      if (!s)
        continue;
      FailureOr<SmallVector<Operation *>> slice = lateSlice(*s);
      if (failed(slice))
        continue;
      delay(*s, *slice);
    }
  }
};

} // namespace
