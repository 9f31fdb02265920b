//===- TileReshapeLoopFolding.cpp - reshapes through loop-carried tiles ---===//
//
// A batched kernel keeps a (1, BM, BN) accumulator across its K loop while
// each tile.mma works on the (BM, BN) matrix: the frontend reshapes the
// carried value to 2-d at the top of the body and the product back to 3-d
// before the yield. Left so, the loop carries the 3-d shape, the reshapes
// become layout conversions through shared memory on every iteration, and
// the pipelining passes do not see an mma accumulator. This pattern carries
// the inner shape instead (as upstream's ForOpTensorCastFolder does for
// tensor.cast), reshaping once before and once after the loop.
//
//===----------------------------------------------------------------------===//
#include "dialects/tile/TileDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

struct CarryReshapedIterArg : OpRewritePattern<scf::ForOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(scf::ForOp forOp,
                                PatternRewriter &rewriter) const override {
    auto yield = cast<scf::YieldOp>(forOp.getBody()->getTerminator());
    for (auto [index, arg] : llvm::enumerate(forOp.getRegionIterArgs())) {
      if (!arg.hasOneUse())
        continue;
      auto entry = dyn_cast<ReshapeOp>(*arg.getUsers().begin());
      auto exit = yield.getOperand(index).getDefiningOp<ReshapeOp>();
      if (!entry || !exit || exit.getSrc().getType() != entry.getType())
        continue;
      // Only before layouts are assigned: a reshape with encodings is a
      // layout conversion the lowering chose, not a shape change.
      auto carried = cast<RankedTensorType>(arg.getType());
      auto inner = cast<RankedTensorType>(entry.getType());
      if (carried.getEncoding() || inner.getEncoding())
        continue;
      OpOperand &init = forOp.getInitArgsMutable()[index];
      rewriter.setInsertionPoint(forOp);
      Value innerInit =
          ReshapeOp::create(rewriter, forOp.getLoc(), inner, init.get());
      // The helper reshapes the new block argument back to the old type for
      // its users and the yielded value forward; ReshapeOp's folder then
      // cancels each reshape against its partner.
      SmallVector<Value> results = scf::replaceAndCastForOpIterArg(
          rewriter, forOp, init, innerInit,
          [](OpBuilder &b, Location loc, Type type, Value value) -> Value {
            return ReshapeOp::create(b, loc, type, value);
          });
      rewriter.replaceOp(forOp, results);
      return success();
    }
    return failure();
  }
};

} // namespace

void ReshapeOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                            MLIRContext *context) {
  results.add<CarryReshapedIterArg>(context);
}
