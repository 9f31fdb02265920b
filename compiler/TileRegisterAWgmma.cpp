//===- TileRegisterAWgmma.cpp - no branch in a register-A wgmma loop ------===//
//
// Part of tile-tiling (warpgroup-mma): a loop whose wgmmas take A from
// registers (attention: Q's fragments hoisted in front of the loop, P from
// the chained mma) must lower to a branch-free body. ptxas (CUDA 13.0,
// sm_90a) frees the registers of a loop-invariant register-A operand after
// the wgmma that reads it when a branch follows that wgmma in the body, and
// reuses them for the rest of the iteration: the next iteration's wgmma
// reads garbage for Q (only programs of two or more iterations were wrong;
// attention masking the diagonal under `if j >= n_full`). A branch before
// the first wgmma or none at all keeps them. So an scf.if whose branches
// only compute values (cheap elementwise and shape ops) becomes both
// branches and a select, and a loop that still has control flow in its
// body runs on mma.sync instead (whose operands ptxas keeps).
//
//===----------------------------------------------------------------------===//
#include "compiler/TileTiling.h"

#include "dialects/tile/TileDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tile;

/// Ops cheap enough to run whether or not the branch is taken, with no
/// effects and no undefined behaviour on any input (isPure: a division by a
/// value that may be zero is not).
static bool isCheapPureOp(Operation &op) {
  if (op.getNumRegions() || !isPure(&op))
    return false;
  return isa<arith::ArithDialect, math::MathDialect>(op.getDialect()) ||
         isa<SplatOp, BroadcastOp, ExpandDimsOp, IotaOp>(op);
}

static bool isSpeculatable(scf::IfOp ifOp) {
  for (Region &branch : ifOp->getRegions())
    for (Block &block : branch)
      for (Operation &op : block.without_terminator())
        if (!isCheapPureOp(op))
          return false;
  return true;
}

/// Both branches in front of `ifOp`, then one select per result.
static void speculate(scf::IfOp ifOp) {
  OpBuilder b(ifOp);
  Location loc = ifOp.getLoc();
  SmallVector<Value> thenValues = ifOp.thenYield().getOperands();
  SmallVector<Value> elseValues;
  if (!ifOp.getElseRegion().empty())
    elseValues = ifOp.elseYield().getOperands();
  for (Region *branch : {&ifOp.getThenRegion(), &ifOp.getElseRegion()}) {
    if (branch->empty())
      continue;
    Block &block = branch->front();
    for (Operation &op : llvm::make_early_inc_range(block.without_terminator()))
      op.moveBefore(ifOp);
  }
  Value cond = ifOp.getCondition();
  SmallVector<Value> results;
  for (auto [t, e] : llvm::zip(thenValues, elseValues)) {
    if (t == e) {
      results.push_back(t);
      continue;
    }
    Value c = cond;
    if (auto type = dyn_cast<RankedTensorType>(t.getType()))
      c = SplatOp::create(b, loc, type.clone(b.getI1Type()), cond);
    results.push_back(arith::SelectOp::create(b, loc, c, t, e));
  }
  ifOp->replaceAllUsesWith(results);
  ifOp->erase();
}

bool mlir::tile::flattenBranches(scf::ForOp loop) {
  SmallVector<scf::IfOp> ifs; // post-order: inner ifs first
  loop.getBody()->walk([&](scf::IfOp ifOp) { ifs.push_back(ifOp); });
  for (scf::IfOp ifOp : ifs)
    if (isSpeculatable(ifOp))
      speculate(ifOp);
  bool branchFree = true;
  loop.getBody()->walk([&](Operation *op) {
    if (op->getNumRegions() && isa<scf::SCFDialect>(op->getDialect()))
      branchFree = false;
  });
  return branchFree;
}
