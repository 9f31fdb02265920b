//===- TileDeferMmaWaits.cpp - issue wgmmas early, wait for them late -----===//
//
// The tile-defer-mma-waits pass. A loop body with several warpgroup mmas
// (the attention backward's S^T, dP^T, dV, dK and dQ products) lowers each
// to fence, wgmmas, commit and wait_group 0: the tensor cores idle while
// the threads compute the next product's operand, and the threads idle
// while the tensor cores run. FlashAttention-3's backward keeps two or
// three products in flight instead. This pass
//
//   1. (unless move-mmas=false) moves each mma up (with the pure ops that
//      compute its operands)
//      past what it does not read, stopping at an op that writes memory,
//      computes an operand and cannot move, or is an earlier mma that
//      waits on no more results than it: S^T = K Q^T and dP^T = V dO^T
//      are issued back to back, before P^T and dV += P^T dO;
//   2. marks the mmas `deferred` (commit, no wait) and puts a
//      tilegpu.wait_mma in front of the first op that reads a result, with
//      `pending` the number of mmas issued after it: the softmax of S^T
//      runs while dP^T is on the tensor cores, dS^T while dV is;
//   3. waits for every mma still in flight before an op that may write
//      what one of them reads (a shared buffer of the same allocation, or
//      an op whose writes it cannot place: an mbarrier arrive that hands a
//      ring slot back to the producer) and before the terminator, so
//      nothing is in flight across iterations.
//
// Loops that already keep mmas in flight (tile-pipeline-mma's matmul
// loops, tile-overlap-mma-chain's rotated attention loop) are left alone,
// as are bodies with fewer than two wgmmas.
//
//===----------------------------------------------------------------------===//
#include "compiler/Passes.h"
#include "dialects/tilegpu/TileGpuDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEDEFERMMAWAITS
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

/// An mma that lowers to wgmma (tile-to-gpu's two warpgroup paths: A in
/// shared memory, or A in registers of a 16- or 8-bit type).
bool lowersToWgmma(tilegpu::MmaOp mma) {
  auto tiling = mma.getTilingAttr();
  if (!tiling || !tiling.isWarpgroup())
    return false;
  return mma.getASharedBuffer() || !mma.getATileType().getElementType().isF32();
}

/// The allocation a shared buffer value is a slot of.
Value rootBuffer(Value buffer) {
  while (auto slot = buffer.getDefiningOp<tilegpu::SlotOp>())
    buffer = slot.getRing();
  return buffer;
}

/// Whether `op` (and what it nests) only reads memory, if anything.
bool writesNothing(Operation *op) {
  if (isMemoryEffectFree(op))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects || op->getNumRegions())
    return false;
  return effects.onlyHasEffect<MemoryEffects::Read>();
}

/// The body's wgmmas, if the pass applies to it.
SmallVector<tilegpu::MmaOp> deferrableMmas(Block *body) {
  SmallVector<tilegpu::MmaOp> mmas;
  bool alreadyAsync = false;
  body->walk([&](Operation *op) {
    if (auto mma = dyn_cast<tilegpu::MmaOp>(op))
      alreadyAsync |= mma.getInFlight() || mma.getDeferred();
    alreadyAsync |= isa<tilegpu::WaitMmaOp>(op);
  });
  if (alreadyAsync)
    return {};
  for (Operation &op : *body)
    if (auto mma = dyn_cast<tilegpu::MmaOp>(op); mma && lowersToWgmma(mma))
      mmas.push_back(mma);
  if (mmas.size() < 2)
    return {};
  return mmas;
}

/// How many mma results, chained, each op of `body` waits on: 0 for ops
/// that read no mma result, 1 + the mma's for the readers of its result.
DenseMap<Operation *, int64_t> mmaDepths(Block *body) {
  DenseMap<Operation *, int64_t> depth;
  for (Operation &op : *body) {
    int64_t d = 0;
    for (Value v : op.getOperands())
      if (Operation *def = v.getDefiningOp(); def && def->getBlock() == body)
        d = std::max(d, depth.lookup(def) + (isa<tilegpu::MmaOp>(def) ? 1 : 0));
    depth[&op] = d;
  }
  return depth;
}

/// Step 1: `mma` and the pure ops its operands come from, moved up past
/// what it does not read, as far as the last op before it that writes
/// memory, computes one of its operands and cannot move, or is an mma no
/// deeper in the chain of results than it: mmas keep their order unless a
/// later one waits on fewer results (dP^T = V dO^T passes dV += P^T dO,
/// whose P^T waits on S^T).
void issueEarly(tilegpu::MmaOp mma,
                const DenseMap<Operation *, int64_t> &depth) {
  Block *body = mma->getBlock();
  DenseSet<Operation *> needed;
  auto need = [&](Operation *op) {
    for (Value v : op->getOperands())
      if (Operation *def = v.getDefiningOp(); def && def->getBlock() == body)
        needed.insert(def);
  };
  need(mma);
  SmallVector<Operation *> moving;
  Operation *anchor = nullptr;
  for (Operation *op = mma->getPrevNode(); op; op = op->getPrevNode()) {
    if (needed.contains(op)) {
      if (!isMemoryEffectFree(op) || op->getNumRegions()) {
        anchor = op;
        break;
      }
      moving.push_back(op);
      need(op);
      continue;
    }
    bool passable = writesNothing(op);
    if (isa<tilegpu::MmaOp>(op))
      passable &= depth.lookup(op) > depth.lookup(mma);
    if (!passable) {
      anchor = op;
      break;
    }
  }
  if (!anchor || anchor->getNextNode() == mma.getOperation())
    return;
  Operation *at = anchor;
  for (Operation *op : llvm::reverse(moving)) {
    op->moveAfter(at);
    at = op;
  }
  mma->moveAfter(at);
}

/// Steps 2 and 3 on one body whose mmas were issued early.
void deferWaits(Block *body, ArrayRef<tilegpu::MmaOp> mmas) {
  DenseSet<Operation *> deferrable(mmas.begin(), mmas.end());
  // Issued and not yet waited for, oldest first.
  SmallVector<tilegpu::MmaOp> inFlight;
  auto indexOf = [&](Value v) -> int64_t {
    for (auto [i, mma] : llvm::enumerate(inFlight))
      if (mma.getResult() == v)
        return i;
    return -1;
  };
  // Waits for inFlight[0..last] in front of `op`.
  auto waitThrough = [&](Operation *op, int64_t last) {
    if (last < 0)
      return;
    SmallVector<Value> accs;
    for (tilegpu::MmaOp mma : ArrayRef(inFlight).take_front(last + 1))
      accs.push_back(mma.getResult());
    OpBuilder b(op);
    auto wait =
        tilegpu::WaitMmaOp::create(b, op->getLoc(), ValueRange(accs).getTypes(),
                                   accs, int64_t(inFlight.size()) - 1 - last);
    for (auto [acc, waited] : llvm::zip(accs, wait.getResults()))
      acc.replaceAllUsesExcept(waited, wait);
    inFlight.erase(inFlight.begin(), inFlight.begin() + last + 1);
  };

  for (Operation &op : llvm::make_early_inc_range(*body)) {
    int64_t last = -1;
    // Reads of a result, here or in a nested region.
    op.walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        last = std::max(last, indexOf(v));
    });
    // Writes where an mma in flight may read.
    if (op.hasTrait<OpTrait::IsTerminator>()) {
      last = int64_t(inFlight.size()) - 1;
    } else if (auto stage = dyn_cast<tilegpu::StageOperandOp>(op)) {
      Value written = rootBuffer(stage.getBuffer());
      for (auto [i, mma] : llvm::enumerate(inFlight)) {
        Value a = mma.getASharedBuffer();
        if ((a && rootBuffer(a) == written) ||
            rootBuffer(mma.getB()) == written)
          last = std::max(last, int64_t(i));
      }
    } else if (!deferrable.contains(&op) && !writesNothing(&op)) {
      last = int64_t(inFlight.size()) - 1;
    }
    waitThrough(&op, last);
    if (deferrable.contains(&op)) {
      auto mma = cast<tilegpu::MmaOp>(op);
      mma.setDeferred(true);
      inFlight.push_back(mma);
    }
  }
}

struct TileDeferMmaWaitsPass
    : tile::impl::TileDeferMmaWaitsBase<TileDeferMmaWaitsPass> {
  using TileDeferMmaWaitsBase::TileDeferMmaWaitsBase;

  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops) {
      Block *body = loop.getBody();
      SmallVector<tilegpu::MmaOp> mmas = deferrableMmas(body);
      if (mmas.empty())
        continue;
      if (moveMmas) {
        DenseMap<Operation *, int64_t> depth = mmaDepths(body);
        for (tilegpu::MmaOp mma : ArrayRef(mmas).drop_front())
          issueEarly(mma, depth);
      }
      deferWaits(body, mmas);
    }
  }
};

} // namespace
