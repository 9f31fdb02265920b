//===- HostComputePatterns.cpp - tile compute and shape ops to linalg -----===//
#include "compiler/cpu/HostPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::host;

namespace {

Value emptyLike(OpBuilder &b, Location loc, Type type) {
  auto tensor = cast<RankedTensorType>(type);
  return tensor::EmptyOp::create(b, loc, tensor.getShape(),
                                 tensor.getElementType());
}

SmallVector<utils::IteratorType> parallel(unsigned rank) {
  return SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel);
}

/// mma -> linalg.matmul / batch_matmul: the named ops extend narrower inputs
/// to the accumulator's type (signed for integers) before multiplying.
struct MmaLowering : OpConversionPattern<MmaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(MmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> inputs{adaptor.getA(), adaptor.getB()};
    Value acc = adaptor.getAcc();
    Operation *mm;
    if (cast<RankedTensorType>(acc.getType()).getRank() == 2)
      mm = linalg::MatmulOp::create(rewriter, loc, TypeRange{acc.getType()},
                                    inputs, ValueRange{acc});
    else
      mm = linalg::BatchMatmulOp::create(
          rewriter, loc, TypeRange{acc.getType()}, inputs, ValueRange{acc});
    rewriter.replaceOp(op, mm->getResults());
    return success();
  }
};

/// Offsets, sizes and strides of a slab of a `shape` tensor: `size`
/// positions from `pos` along `axis`, all of every other dimension. Reduce
/// and scan cut their sources (and scan its results) into such slabs.
struct AxisSlab {
  SmallVector<OpFoldResult> offsets, sizes, strides;
};

AxisSlab axisSlab(OpBuilder &b, ArrayRef<int64_t> shape, int64_t axis,
                  OpFoldResult pos, int64_t size) {
  AxisSlab slab{SmallVector<OpFoldResult>(shape.size(), b.getIndexAttr(0)),
                staticSizes(b, shape), unitStrides(b, shape.size())};
  slab.offsets[axis] = pos;
  slab.sizes[axis] = b.getIndexAttr(size);
  return slab;
}

/// The slice of `src` at `pos` along `axis`, with that axis dropped.
Value sliceAt(OpBuilder &b, Location loc, Value src, int64_t axis,
              OpFoldResult pos) {
  auto type = cast<RankedTensorType>(src.getType());
  AxisSlab slab = axisSlab(b, type.getShape(), axis, pos, 1);
  SmallVector<int64_t> shape(type.getShape());
  shape.erase(shape.begin() + axis);
  auto sliceType = RankedTensorType::get(shape, type.getElementType());
  return tensor::ExtractSliceOp::create(b, loc, sliceType, src, slab.offsets,
                                        slab.sizes, slab.strides);
}

/// reduce -> linalg.reduce over all but the first slice, which seeds the
/// accumulator, so that combiners without a neutral element work.
struct ReduceLowering : OpConversionPattern<ReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t axis = op.getAxis();
    ValueRange srcs = adaptor.getSrcs();
    auto srcType = cast<RankedTensorType>(srcs[0].getType());
    int64_t n = srcType.getDimSize(axis);
    SmallVector<Value> inits, rests;
    for (Value src : srcs)
      inits.push_back(sliceAt(rewriter, loc, src, axis,
                              rewriter.getIndexAttr(0)));
    if (n == 1) {
      rewriter.replaceOp(op, inits);
      return success();
    }
    AxisSlab slab = axisSlab(rewriter, srcType.getShape(), axis,
                             rewriter.getIndexAttr(1), n - 1);
    for (Value src : srcs)
      rests.push_back(tensor::ExtractSliceOp::create(
          rewriter, loc, src, slab.offsets, slab.sizes, slab.strides));
    unsigned num = srcs.size();
    auto reduce = linalg::ReduceOp::create(
        rewriter, loc, rests, inits, {axis},
        [&](OpBuilder &b, Location loc, ValueRange args) {
          SmallVector<Value> combined =
              cloneCombiner(b, op.getCombiner(), args.drop_front(num),
                            args.take_front(num));
          linalg::YieldOp::create(b, loc, combined);
        });
    rewriter.replaceOp(op, reduce.getResults());
    return success();
  }
};

/// scan -> a loop along the axis combining each slice with the previous
/// result slice (a linalg.generic applying the combiner lane by lane).
struct ScanLowering : OpConversionPattern<ScanOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScanOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    int64_t axis = op.getAxis();
    bool reverse = op.getReverse();
    SmallVector<Value> srcs(adaptor.getSrcs());
    auto srcType = cast<RankedTensorType>(srcs[0].getType());
    int64_t n = srcType.getDimSize(axis);
    if (n == 1) {
      rewriter.replaceOp(op, srcs);
      return success();
    }
    unsigned num = srcs.size(), rank = srcType.getRank();
    Region &combiner = op.getCombiner();
    auto loop = scf::ForOp::create(
        rewriter, loc, indexConst(rewriter, loc, 1),
        indexConst(rewriter, loc, n), indexConst(rewriter, loc, 1), srcs,
        [&](OpBuilder &b, Location loc, Value k, ValueRange results) {
          Value one = indexConst(b, loc, 1);
          Value pos = k, prev;
          if (reverse) {
            pos = arith::SubIOp::create(b, loc, indexConst(b, loc, n - 1), k);
            prev = arith::AddIOp::create(b, loc, pos, one);
          } else {
            prev = arith::SubIOp::create(b, loc, pos, one);
          }
          SmallVector<Value> ins, outs;
          for (Value r : results)
            ins.push_back(sliceAt(b, loc, r, axis, prev));
          for (Value s : srcs)
            ins.push_back(sliceAt(b, loc, s, axis, pos));
          for (unsigned i = 0; i < num; ++i)
            outs.push_back(emptyLike(b, loc, ins[i].getType()));
          unsigned sliceRank = rank - 1;
          SmallVector<AffineMap> maps(
              3 * num, b.getMultiDimIdentityMap(sliceRank));
          auto gen = linalg::GenericOp::create(
              b, loc, TypeRange(ValueRange(outs)), ins, outs, maps,
              parallel(sliceRank),
              [&](OpBuilder &b, Location loc, ValueRange args) {
                SmallVector<Value> combined =
                    cloneCombiner(b, combiner, args.take_front(num),
                                  args.slice(num, num));
                linalg::YieldOp::create(b, loc, combined);
              });
          SmallVector<Value> updated;
          AxisSlab slab = axisSlab(b, srcType.getShape(), axis, pos, 1);
          for (auto [r, slice] : llvm::zip(results, gen.getResults()))
            updated.push_back(tensor::InsertSliceOp::create(
                b, loc, slice, r, slab.offsets, slab.sizes, slab.strides));
          scf::YieldOp::create(b, loc, updated);
        });
    rewriter.replaceOp(op, loop.getResults());
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

/// broadcast -> linalg.generic reading broadcast dimensions at index 0.
struct BroadcastLowering : OpConversionPattern<BroadcastOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(BroadcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value src = adaptor.getSrc();
    auto srcType = cast<RankedTensorType>(src.getType());
    auto dstType = cast<RankedTensorType>(op.getType());
    if (srcType == dstType) {
      rewriter.replaceOp(op, src);
      return success();
    }
    unsigned rank = dstType.getRank();
    SmallVector<AffineExpr> exprs;
    for (unsigned d = 0; d < rank; ++d)
      exprs.push_back(srcType.getDimSize(d) == 1 && dstType.getDimSize(d) != 1
                          ? rewriter.getAffineConstantExpr(0)
                          : rewriter.getAffineDimExpr(d));
    SmallVector<AffineMap> maps{
        AffineMap::get(rank, 0, exprs, rewriter.getContext()),
        rewriter.getMultiDimIdentityMap(rank)};
    Location loc = op.getLoc();
    auto gen = linalg::GenericOp::create(
        rewriter, loc, TypeRange{dstType}, ValueRange{src},
        ValueRange{emptyLike(rewriter, loc, dstType)}, maps, parallel(rank),
        [](OpBuilder &b, Location loc, ValueRange args) {
          linalg::YieldOp::create(b, loc, args[0]);
        });
    rewriter.replaceOp(op, gen.getResults());
    return success();
  }
};

/// expand_dims -> tensor.expand_shape, the new unit dimension grouped with
/// its neighbour.
struct ExpandDimsLowering : OpConversionPattern<ExpandDimsOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ExpandDimsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value src = adaptor.getSrc();
    int64_t rank = cast<RankedTensorType>(src.getType()).getRank();
    int64_t axis = op.getAxis();
    SmallVector<ReassociationIndices> groups;
    for (int64_t j = 0; j < rank; ++j)
      groups.push_back({j < axis ? j : j + 1});
    if (rank > 0) {
      if (axis < rank)
        groups[axis].insert(groups[axis].begin(), axis);
      else
        groups[rank - 1].push_back(rank);
    }
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(op, op.getType(), src,
                                                       groups);
    return success();
  }
};

/// reshape (row-major) -> collapse to 1-d, then expand to the new shape.
struct ReshapeLowering : OpConversionPattern<ReshapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value src = adaptor.getSrc();
    auto srcType = cast<RankedTensorType>(src.getType());
    auto dstType = cast<RankedTensorType>(op.getType());
    auto all = [](int64_t rank) {
      SmallVector<ReassociationIndices> groups;
      if (rank > 0)
        groups.push_back(llvm::to_vector(llvm::seq<int64_t>(0, rank)));
      return groups;
    };
    // A rank-0 side (one element) reshapes to all-ones in one step.
    if (srcType.getRank() == 0 || dstType.getRank() == 0) {
      if (srcType.getRank() == 0)
        rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
            op, dstType, src, SmallVector<ReassociationIndices>{});
      else
        rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
            op, dstType, src, SmallVector<ReassociationIndices>{});
      return success();
    }
    Value flat = src;
    if (srcType.getRank() != 1)
      flat = tensor::CollapseShapeOp::create(rewriter, loc, src,
                                             all(srcType.getRank()));
    Value result = flat;
    if (dstType.getRank() != 1)
      result = tensor::ExpandShapeOp::create(rewriter, loc, dstType, flat,
                                             all(dstType.getRank()));
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct PermuteLowering : OpConversionPattern<PermuteOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PermuteOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto transpose = linalg::TransposeOp::create(
        rewriter, loc, adaptor.getSrc(), emptyLike(rewriter, loc, op.getType()),
        op.getPerm());
    rewriter.replaceOp(op, transpose->getResults());
    return success();
  }
};

struct IotaLowering : OpConversionPattern<IotaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(IotaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    auto gen = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{},
        ValueRange{emptyLike(rewriter, loc, type)},
        SmallVector<AffineMap>{rewriter.getMultiDimIdentityMap(1)},
        parallel(1), [&](OpBuilder &b, Location loc, ValueRange) {
          Value i = linalg::IndexOp::create(b, loc, 0);
          linalg::YieldOp::create(
              b, loc,
              arith::IndexCastOp::create(b, loc, type.getElementType(), i)
                  .getResult());
        });
    rewriter.replaceOp(op, gen.getResults());
    return success();
  }
};

struct SplatLowering : OpConversionPattern<SplatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SplatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto fill = linalg::FillOp::create(
        rewriter, loc, ValueRange{adaptor.getSrc()},
        ValueRange{emptyLike(rewriter, loc, op.getType())});
    rewriter.replaceOp(op, fill.getResults());
    return success();
  }
};

/// Layouts only exist for the GPU: on the host a conversion is the identity.
struct ConvertLayoutLowering : OpConversionPattern<ConvertLayoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ConvertLayoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (adaptor.getSrc().getType() != op.getType())
      return rewriter.notifyMatchFailure(op, "the layouts are not erased");
    rewriter.replaceOp(op, adaptor.getSrc());
    return success();
  }
};

} // namespace

void host::populateComputePatterns(TypeConverter &converter,
                                   RewritePatternSet &patterns) {
  patterns.add<MmaLowering, ReduceLowering, ScanLowering, BroadcastLowering,
               ExpandDimsLowering, ReshapeLowering, PermuteLowering,
               IotaLowering, SplatLowering, ConvertLayoutLowering>(
      converter, patterns.getContext());
}
