//===- TileToGpuViews.cpp - array views: slices and raw memory ------------===//
//
// An array is an unrealized cast of its parts (base pointer, i64 extents,
// i64 strides) that the memory patterns read through getArrayParts. A view
// is another such cast: a slice moves the base to its start along the axis
// and shrinks that extent; a raw view keeps the base with one unbounded,
// unit-stride extent. A selected array (a list argument indexed at run
// time) is a cast of per-part selects over the list's arrays.
//
//===----------------------------------------------------------------------===//
#include "compiler/gpu/TileToGpuCommon.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include <limits>

using namespace mlir;
using namespace mlir::tile;

namespace {

Value makeArray(OpBuilder &b, Location loc, Type type, const ArrayParts &p) {
  SmallVector<Value> operands{p.ptr};
  llvm::append_range(operands, p.extents);
  llvm::append_range(operands, p.strides);
  return UnrealizedConversionCastOp::create(b, loc, type, operands)
      .getResult(0);
}

struct ArraySlicePattern : OpConversionPattern<ArraySliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ArraySliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    FailureOr<ArrayParts> parts = getArrayParts(adaptor.getArray());
    if (failed(parts))
      return op.emitOpError("array is not a kernel argument or a view of one");
    unsigned axis = op.getAxis();
    Type i64 = rewriter.getI64Type();
    Value extent = parts->extents[axis];
    auto clamp = [&](Value v, Value lo) -> Value {
      v = arith::ExtSIOp::create(rewriter, loc, i64, v);
      v = arith::MaxSIOp::create(rewriter, loc, v, lo);
      return arith::MinSIOp::create(rewriter, loc, v, extent);
    };
    Value start = clamp(adaptor.getStart(), constI64(rewriter, loc, 0));
    Value stop = clamp(adaptor.getStop(), start);
    ArrayParts view = *parts;
    Type elem = op.getArray().getType().getElementType();
    Type mem = elem.isInteger(1) ? rewriter.getI8Type() : elem;
    Value offset =
        arith::MulIOp::create(rewriter, loc, start, parts->strides[axis]);
    view.ptr = LLVM::GEPOp::create(rewriter, loc, parts->ptr.getType(), mem,
                                   parts->ptr, ValueRange{offset});
    view.extents[axis] = arith::SubIOp::create(rewriter, loc, stop, start);
    rewriter.replaceOp(op, makeArray(rewriter, loc, op.getType(), view));
    return success();
  }
};

struct RawViewPattern : OpConversionPattern<RawViewOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RawViewOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    FailureOr<ArrayParts> parts = getArrayParts(adaptor.getArray());
    if (failed(parts))
      return op.emitOpError("array is not a kernel argument or a view of one");
    ArrayParts view;
    view.ptr = parts->ptr;
    view.extents.push_back(
        constI64(rewriter, loc, std::numeric_limits<int64_t>::max()));
    view.strides.push_back(constI64(rewriter, loc, 1));
    rewriter.replaceOp(op, makeArray(rewriter, loc, op.getType(), view));
    return success();
  }
};

/// `array_select`: each part (pointer, extents, strides) is a chain of
/// selects, element k taken when index >= k, which clamps the index.
struct ArraySelectPattern : OpConversionPattern<ArraySelectOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ArraySelectOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<ArrayParts> lists;
    for (Value array : adaptor.getArrays()) {
      FailureOr<ArrayParts> parts = getArrayParts(array);
      if (failed(parts))
        return op.emitOpError(
            "array is not a kernel argument or a view of one");
      lists.push_back(*parts);
    }
    Value index = adaptor.getIndex();
    ArrayParts chosen = lists.front();
    for (auto [k, parts] : llvm::enumerate(ArrayRef(lists).drop_front())) {
      Value bound = arith::ConstantOp::create(
          rewriter, loc, rewriter.getIntegerAttr(index.getType(), k + 1));
      Value take = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::sge, index, bound);
      auto pick = [&](Value from, Value kept) -> Value {
        return arith::SelectOp::create(rewriter, loc, take, from, kept);
      };
      chosen.ptr = pick(parts.ptr, chosen.ptr);
      for (unsigned d = 0; d < parts.extents.size(); ++d) {
        chosen.extents[d] = pick(parts.extents[d], chosen.extents[d]);
        chosen.strides[d] = pick(parts.strides[d], chosen.strides[d]);
      }
    }
    rewriter.replaceOp(op, makeArray(rewriter, loc, op.getType(), chosen));
    return success();
  }
};

} // namespace

void mlir::tile::populateTileToGpuViewPatterns(TypeConverter &converter,
                                               RewritePatternSet &patterns) {
  patterns.add<ArraySlicePattern, RawViewPattern, ArraySelectPattern>(
      converter, patterns.getContext());
}
