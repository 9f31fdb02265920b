//===- TileToGpuPrefetch.cpp - software pipelining of mma loops -----------===//
//
// In an scf.for that feeds tile.mma from tile.load, the loads of iteration
// i + 1 are issued at the top of iteration i (their results carried to the
// next iteration), so the global loads are in flight while the tensor cores
// work on iteration i's operands. The first iteration's loads move in front
// of the loop. A load past the last iteration reads out of bounds, which
// the predicated load lowering turns into no memory traffic (or a harmless
// in-bounds read).
//
//===----------------------------------------------------------------------===//
#include "compiler/gpu/TileToGpuCommon.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// Collects into `slice` (in body order) the ops of `body` that `v` depends
/// on; false when one of them cannot be re-evaluated for another iteration
/// (it reads memory or a loop-carried value).
bool collectIndexSlice(Value v, scf::ForOp forOp,
                       llvm::SetVector<Operation *> &slice) {
  if (v == forOp.getInductionVar())
    return true;
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() != forOp.getBody();
  Operation *def = v.getDefiningOp();
  if (!forOp->isProperAncestor(def))
    return true;
  if (def->getBlock() != forOp.getBody() || def->getNumRegions() ||
      !isMemoryEffectFree(def) ||
      llvm::any_of(def->getResultTypes(),
                   [](Type t) { return isa<RankedTensorType>(t); }))
    return false;
  for (Value operand : def->getOperands())
    if (!collectIndexSlice(operand, forOp, slice))
      return false;
  slice.insert(def);
  return true;
}

bool writesMemory(Operation *op) {
  bool writes = false;
  op->walk([&](Operation *inner) {
    auto iface = dyn_cast<MemoryEffectOpInterface>(inner);
    if (!iface) {
      writes |= !inner->hasTrait<OpTrait::HasRecursiveMemoryEffects>() &&
                !isa<scf::YieldOp>(inner);
      return;
    }
    writes |= iface.hasEffect<MemoryEffects::Write>();
  });
  return writes;
}

/// Clones `slice` and `load` with the induction variable bound to `iv`.
Value cloneAt(OpBuilder &b, scf::ForOp forOp, ArrayRef<Operation *> slice,
              LoadOp load, Value iv) {
  IRMapping map;
  map.map(forOp.getInductionVar(), iv);
  for (Operation *op : slice)
    b.clone(*op, map);
  return b.clone(*load, map)->getResult(0);
}

void prefetchLoop(scf::ForOp forOp) {
  Block *body = forOp.getBody();
  if (!llvm::any_of(body->getOps<MmaOp>(),
                    [](MmaOp mma) { return getMmaKind(mma) != MmaKind::Fma; }))
    return;
  if (writesMemory(forOp))
    return;
  SmallVector<std::pair<LoadOp, SmallVector<Operation *>>> loads;
  for (LoadOp load : body->getOps<LoadOp>()) {
    llvm::SetVector<Operation *> slice;
    if (llvm::all_of(load->getOperands(), [&](Value v) {
          return collectIndexSlice(v, forOp, slice);
        }))
      loads.push_back({load, SmallVector<Operation *>(slice.getArrayRef())});
  }
  if (loads.empty())
    return;

  // Iteration 0's tiles, loaded in front of the loop.
  OpBuilder b(forOp);
  SmallVector<Value> inits;
  for (auto &[load, slice] : loads)
    inits.push_back(cloneAt(b, forOp, slice, load, forOp.getLowerBound()));

  IRRewriter rewriter(forOp.getContext());
  auto newFor = cast<scf::ForOp>(*forOp.replaceWithAdditionalYields(
      rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &yb, Location loc, ArrayRef<BlockArgument> args) {
        // Iteration i + 1's tiles, issued before iteration i's work.
        Block *newBody = args.front().getOwner();
        OpBuilder::InsertionGuard guard(yb);
        yb.setInsertionPointToStart(newBody);
        Value iv = newBody->getArgument(0);
        Value next = arith::AddIOp::create(yb, loc, iv, forOp.getStep());
        SmallVector<Value> yields;
        for (auto &[load, slice] : loads)
          yields.push_back(cloneAt(yb, forOp, slice, load, next));
        return yields;
      }));
  // The body now reads this iteration's tiles from the carried values.
  unsigned first = newFor.getNumRegionIterArgs() - loads.size();
  for (auto [i, entry] : llvm::enumerate(loads)) {
    LoadOp load = entry.first;
    load.getResult().replaceAllUsesWith(newFor.getRegionIterArg(first + i));
    load.erase();
  }
}

} // namespace

void mlir::tile::prefetchMmaLoads(Operation *func) {
  SmallVector<scf::ForOp> loops;
  func->walk([&](scf::ForOp forOp) { loops.push_back(forOp); });
  for (scf::ForOp forOp : loops)
    prefetchLoop(forOp);
}
