//===- TileFuse.cpp - producer-consumer fusion at tile level --------------===//
#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEFUSE
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
/// Whether `user` (nested somewhere below `def`'s block) runs at most once
/// per run of `def`: only branches lie between them. Folding `def` into a
/// user inside a loop (scf.for, scf.while) would recompute it per iteration.
bool runsAtMostOnce(Operation *def, Operation *user) {
  Region *home = def->getParentRegion();
  for (Region *r = user->getParentRegion(); r != home;) {
    Operation *op = r ? r->getParentOp() : nullptr;
    if (!op || !isa<scf::IfOp, scf::IndexSwitchOp>(op))
      return false;
    r = op->getParentRegion();
  }
  return true;
}

/// addf(mulf(a, b), c) -> fma(a, b, c) when the product has no other use, so
/// that the multiply is not computed twice.
struct ContractMulAdd : OpRewritePattern<arith::AddFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::AddFOp add,
                                PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      auto mul = add->getOperand(side).getDefiningOp<arith::MulFOp>();
      if (!mul || !mul->hasOneUse() || !runsAtMostOnce(mul, add))
        continue;
      Value other = add->getOperand(1 - side);
      rewriter.replaceOpWithNewOp<math::FmaOp>(add, mul.getLhs(), mul.getRhs(),
                                               other);
      return success();
    }
    return rewriter.notifyMatchFailure(add, "no single-use multiply operand");
  }
};

/// elementwise(broadcast(x), broadcast(y)) -> broadcast(elementwise(x, y))
/// when both sources have one type: the arithmetic then runs on the smaller
/// tile. Splats count as broadcasts of a scalar tile.
struct SinkBroadcast : RewritePattern {
  SinkBroadcast(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!op->hasTrait<OpTrait::Elementwise>() || op->getNumResults() != 1 ||
        op->getNumOperands() == 0 || !isMemoryEffectFree(op))
      return rewriter.notifyMatchFailure(op, "not pure elementwise");
    Type srcType;
    SmallVector<Value> srcs;
    for (Value operand : op->getOperands()) {
      auto bcast = operand.getDefiningOp<BroadcastOp>();
      if (!bcast)
        return rewriter.notifyMatchFailure(op, "operand is not a broadcast");
      if (srcType && bcast.getSrc().getType() != srcType)
        return rewriter.notifyMatchFailure(op, "broadcast sources differ");
      srcType = bcast.getSrc().getType();
      srcs.push_back(bcast.getSrc());
    }
    auto srcTensor = cast<RankedTensorType>(srcType);
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    Type smallType = srcTensor.clone(resultType.getElementType());
    OperationState state(op->getLoc(), op->getName(), srcs, {smallType},
                         op->getAttrs());
    Operation *small = rewriter.create(state);
    rewriter.replaceOpWithNewOp<BroadcastOp>(op, resultType,
                                             small->getResult(0));
    return success();
  }
};

static bool isZeroTile(Value value) {
  return matchPattern(value, m_AnyZeroFloat()) || matchPattern(value, m_Zero());
}

/// add(mma(a, b, 0), c) -> mma(a, b, c): the epilogue addition becomes the
/// accumulator, which the tensor cores add for free.
struct FuseMmaEpilogue : RewritePattern {
  FuseMmaEpilogue(MLIRContext *ctx)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/2, ctx) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!isa<arith::AddFOp, arith::AddIOp>(op))
      return rewriter.notifyMatchFailure(op, "not an addition");
    for (int side = 0; side < 2; ++side) {
      auto mma = op->getOperand(side).getDefiningOp<MmaOp>();
      if (!mma || !mma->hasOneUse() || !isZeroTile(mma.getAcc()) ||
          !runsAtMostOnce(mma, op))
        continue;
      rewriter.replaceOpWithNewOp<MmaOp>(
          op, mma.getA(), mma.getB(), op->getOperand(1 - side),
          mma.getAllowTf32(), mma.getFastAccumulation(),
          mma.getTilingAttr());
      return success();
    }
    return rewriter.notifyMatchFailure(op, "no single-use zero-acc mma");
  }
};

/// Merges `later` into `earlier` (same block, axis and shape; `later`'s
/// sources available at `earlier`): one reduction then walks the data once and
/// synchronizes once. Returns the merged op.
static ReduceOp mergeReductions(ReduceOp earlier, ReduceOp later) {
  OpBuilder builder(earlier);
  SmallVector<Value> srcs(earlier.getSrcs());
  llvm::append_range(srcs, later.getSrcs());
  auto merged = ReduceOp::create(builder, earlier.getLoc(), srcs,
                                 static_cast<int>(earlier.getAxis()));
  size_t n1 = earlier.getSrcs().size(), n2 = later.getSrcs().size();
  Block &body = merged.getCombiner().front();
  builder.setInsertionPointToEnd(&body);
  SmallVector<Value> yielded;
  // The merged block takes (acc1..., acc2..., new1..., new2...).
  auto cloneCombiner = [&](ReduceOp op, size_t offset, size_t n) {
    IRMapping map;
    Block &old = op.getCombiner().front();
    for (size_t i = 0; i < n; ++i) {
      map.map(old.getArgument(i), body.getArgument(offset + i));
      map.map(old.getArgument(n + i), body.getArgument(n1 + n2 + offset + i));
    }
    for (Operation &inner : old.without_terminator())
      builder.clone(inner, map);
    for (Value v : cast<YieldOp>(old.getTerminator()).getValues())
      yielded.push_back(map.lookupOrDefault(v));
  };
  cloneCombiner(earlier, 0, n1);
  cloneCombiner(later, n1, n2);
  YieldOp::create(builder, earlier.getLoc(), yielded);
  earlier->replaceAllUsesWith(merged.getResults().take_front(n1));
  later->replaceAllUsesWith(merged.getResults().drop_front(n1));
  earlier->erase();
  later->erase();
  return merged;
}

static bool canMerge(ReduceOp earlier, ReduceOp later) {
  if (earlier->getBlock() != later->getBlock() ||
      earlier.getAxis() != later.getAxis() ||
      earlier.getSrcs()[0].getType() != later.getSrcs()[0].getType())
    return false;
  // Each source of `later`, and each value its combiner captures (cuTile's
  // combiners may use scalars of the kernel), must already exist where
  // `earlier` runs.
  SetVector<Value> used(llvm::from_range, later.getSrcs());
  getUsedValuesDefinedAbove(later.getCombiner(), used);
  for (Value v : used) {
    Operation *def = v.getDefiningOp();
    if (def && def->getBlock() == earlier->getBlock() &&
        !def->isBeforeInBlock(earlier))
      return false;
  }
  return true;
}

struct TileFusePass : tile::impl::TileFuseBase<TileFusePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ContractMulAdd, SinkBroadcast, FuseMmaEpilogue>(&getContext());
    BroadcastOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    mergeSiblingReductions();
  }

  void mergeSiblingReductions() {
    getOperation()->walk([](Block *block) {
      SmallVector<ReduceOp> reductions(block->getOps<ReduceOp>());
      for (size_t i = 0; i < reductions.size(); ++i) {
        for (size_t j = i + 1; j < reductions.size();) {
          if (reductions[j] && canMerge(reductions[i], reductions[j])) {
            reductions[i] = mergeReductions(reductions[i], reductions[j]);
            reductions.erase(reductions.begin() + j);
          } else {
            ++j;
          }
        }
      }
    });
  }
};
} // namespace
