//===- TileFuse.cpp - producer-consumer fusion at tile level --------------===//
#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEFUSE
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
/// addf(mulf(a, b), c) -> fma(a, b, c) when the product has no other use, so
/// that the multiply is not computed twice.
struct ContractMulAdd : OpRewritePattern<arith::AddFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::AddFOp add,
                                PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      auto mul = add->getOperand(side).getDefiningOp<arith::MulFOp>();
      if (!mul || !mul->hasOneUse())
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

struct TileFusePass : tile::impl::TileFuseBase<TileFusePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ContractMulAdd, SinkBroadcast>(&getContext());
    BroadcastOp::getCanonicalizationPatterns(patterns, &getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
