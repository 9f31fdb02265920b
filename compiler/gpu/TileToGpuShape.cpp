//===- TileToGpuShape.cpp - broadcast, expand_dims, reshape, permute ------===//
//
// Shape ops move no data when the layouts line up (what tile-map-threads
// aims for): the result's registers are then a selection of the source's.
// Otherwise the tile goes through shared memory, written in the source's
// layout and read in the result's, with strides that do the reshaping
// (stride 0 along broadcast dimensions, permuted strides for permute).
//
//===----------------------------------------------------------------------===//
#include "compiler/gpu/TileToGpuCommon.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// Writes `src` (layout `in`) row-major to shared memory, reads the result
/// (layout `out`) with `readStrides`.
Value throughShared(ConversionPatternRewriter &rewriter, Location loc,
                    Value src, const LinearLayout &in, const LinearLayout &out,
                    ArrayRef<int64_t> readStrides, Type vecType,
                    GpuLoweringState &state) {
  Type elemType = cast<VectorType>(vecType).getElementType();
  int64_t numElems = 1;
  for (int64_t s : in.shape)
    numElems *= s;
  state.needShared(rewriter, numElems * storageBytes(elemType));
  Value base = sharedBase(rewriter, loc);
  barrier(rewriter, loc);
  storeShared(rewriter, loc, base, unpackVector(rewriter, loc, src), elemType,
              in, rowMajorStrides(in.shape));
  barrier(rewriter, loc);
  return packVector(
      rewriter, loc, vecType,
      loadShared(rewriter, loc, base, elemType, out, readStrides));
}

template <typename OpTy> struct ShapePattern : StatefulPattern<OpTy> {
  using StatefulPattern<OpTy>::StatefulPattern;
  using StatefulPattern<OpTy>::state;

  struct Layouts {
    LinearLayout in, out;
    Type vecType;
  };
  FailureOr<Layouts> getLayouts(OpTy op) const {
    auto inType = cast<RankedTensorType>(op.getSrc().getType());
    auto outType = cast<RankedTensorType>(op.getType());
    FailureOr<LinearLayout> in = toLinearLayout(inType);
    FailureOr<LinearLayout> out = toLinearLayout(outType);
    if (failed(in) || failed(out))
      return failure();
    return Layouts{*in, *out, this->getTypeConverter()->convertType(outType)};
  }

  // The two ways every shape op ends, shared so that each pattern only says
  // which one applies (and with which source layout or read strides).

  /// Replaces `op` by `src`, whose registers hold layout `from`, moved to the
  /// result's layout in registers (lanes and warps must already agree).
  LogicalResult replaceInRegisters(OpTy op, Value src, const LinearLayout &from,
                                   const Layouts &l,
                                   ConversionPatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    Type elemType = cast<VectorType>(l.vecType).getElementType();
    SmallVector<Value> elems =
        convertLayout(rewriter, loc, unpackVector(rewriter, loc, src),
                      elemType, from, l.out, state);
    rewriter.replaceOp(op, packVector(rewriter, loc, l.vecType, elems));
    return success();
  }

  /// Replaces `op` by `src` sent through shared memory and read back in the
  /// result's layout with `readStrides`.
  LogicalResult replaceThroughShared(OpTy op, Value src, const Layouts &l,
                                     ArrayRef<int64_t> readStrides,
                                     ConversionPatternRewriter &rewriter) const {
    rewriter.replaceOp(op, throughShared(rewriter, op.getLoc(), src, l.in,
                                         l.out, readStrides, l.vecType, state));
    return success();
  }
};

struct BroadcastPattern : ShapePattern<BroadcastOp> {
  using ShapePattern::ShapePattern;
  LogicalResult
  matchAndRewrite(BroadcastOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<Layouts> l = getLayouts(op);
    if (failed(l))
      return failure();
    if (l->out.restrictedTo(l->in.shape) == l->in) {
      // Register r of the result is the source register made of r's bits
      // whose bases survive the restriction.
      SmallVector<int64_t> mask;
      for (int64_t r = 0; r < l->out.getNumRegs(); ++r) {
        int64_t src = 0, bit = 0;
        for (auto [i, basis] : llvm::enumerate(l->out.regs)) {
          bool kept = false;
          for (unsigned d = 0; d < basis.size(); ++d)
            kept |= basis[d] != 0 && basis[d] < l->in.shape[d];
          if (!kept)
            continue;
          if (r & (int64_t(1) << i))
            src |= int64_t(1) << bit;
          ++bit;
        }
        mask.push_back(src);
      }
      rewriter.replaceOpWithNewOp<vector::ShuffleOp>(op, adaptor.getSrc(),
                                                     adaptor.getSrc(), mask);
      return success();
    }
    SmallVector<int64_t> strides = rowMajorStrides(l->in.shape);
    for (unsigned d = 0; d < strides.size(); ++d)
      if (l->in.shape[d] == 1)
        strides[d] = 0;
    return replaceThroughShared(op, adaptor.getSrc(), *l, strides, rewriter);
  }
};

struct ExpandDimsPattern : ShapePattern<ExpandDimsOp> {
  using ShapePattern::ShapePattern;
  LogicalResult
  matchAndRewrite(ExpandDimsOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<Layouts> l = getLayouts(op);
    if (failed(l))
      return failure();
    unsigned axis = op.getAxis();
    if (l->out.sliced(axis) == l->in) {
      rewriter.replaceOp(op, adaptor.getSrc());
      return success();
    }
    SmallVector<int64_t> strides = rowMajorStrides(l->in.shape);
    strides.insert(strides.begin() + axis, 0);
    return replaceThroughShared(op, adaptor.getSrc(), *l, strides, rewriter);
  }
};

/// `layout` with its bases carried through the row-major reshape to `shape`
/// (none when a basis is not a power of two of the flat index).
std::optional<LinearLayout> reshaped(const LinearLayout &layout,
                                     ArrayRef<int64_t> shape) {
  SmallVector<int64_t> inStrides = rowMajorStrides(layout.shape);
  SmallVector<int64_t> outStrides = rowMajorStrides(shape);
  auto move = [&](const LinearLayout::Basis &basis)
      -> std::optional<LinearLayout::Basis> {
    int64_t flat = 0;
    for (auto [c, st] : llvm::zip(basis, inStrides))
      flat += c * st;
    LinearLayout::Basis out;
    for (auto [extent, st] : llvm::zip(shape, outStrides))
      out.push_back(flat / st % extent);
    int64_t back = 0;
    for (auto [c, st] : llvm::zip(out, outStrides))
      back += c * st;
    if (back != flat)
      return std::nullopt;
    return out;
  };
  LinearLayout result;
  result.shape.assign(shape.begin(), shape.end());
  for (auto [from, to] : {std::pair(&layout.regs, &result.regs),
                          std::pair(&layout.lanes, &result.lanes),
                          std::pair(&layout.warps, &result.warps)})
    for (const LinearLayout::Basis &basis : *from) {
      std::optional<LinearLayout::Basis> b = move(basis);
      if (!b)
        return std::nullopt;
      to->push_back(*b);
    }
  return result;
}

struct ReshapePattern : ShapePattern<ReshapeOp> {
  using ShapePattern::ShapePattern;
  LogicalResult
  matchAndRewrite(ReshapeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<Layouts> l = getLayouts(op);
    if (failed(l))
      return failure();
    // Row-major reshape of a power-of-two tile maps bases to bases: when the
    // source's bases land where the result's are, no data moves (a unit dim
    // dropped or added, as for a (1, N, D) load used as (N, D)).
    if (std::optional<LinearLayout> moved = reshaped(l->in, l->out.shape);
        moved && moved->lanes == l->out.lanes && moved->warps == l->out.warps) {
      return replaceInRegisters(op, adaptor.getSrc(), *moved, *l, rewriter);
    }
    return replaceThroughShared(op, adaptor.getSrc(), *l,
                                rowMajorStrides(l->out.shape), rewriter);
  }
};

struct PermutePattern : ShapePattern<PermuteOp> {
  using ShapePattern::ShapePattern;
  LogicalResult
  matchAndRewrite(PermuteOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<Layouts> l = getLayouts(op);
    if (failed(l))
      return failure();
    ArrayRef<int64_t> perm = op.getPerm();
    LinearLayout permuted = l->in.permuted(perm);
    if (permuted.lanes == l->out.lanes && permuted.warps == l->out.warps)
      return replaceInRegisters(op, adaptor.getSrc(), permuted, *l, rewriter);
    SmallVector<int64_t> inStrides = rowMajorStrides(l->in.shape), strides;
    for (int64_t p : perm)
      strides.push_back(inStrides[p]);
    return replaceThroughShared(op, adaptor.getSrc(), *l, strides, rewriter);
  }
};

struct ConvertLayoutPattern : ShapePattern<ConvertLayoutOp> {
  using ShapePattern::ShapePattern;
  LogicalResult
  matchAndRewrite(ConvertLayoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<Layouts> l = getLayouts(op);
    if (failed(l))
      return failure();
    return replaceInRegisters(op, adaptor.getSrc(), l->in, *l, rewriter);
  }
};

/// tensor.extract of one element: every thread holds a rank-0 tile; other
/// tiles go through shared memory so that every thread reads the element.
struct ExtractPattern : StatefulPattern<tensor::ExtractOp> {
  using StatefulPattern::StatefulPattern;
  LogicalResult
  matchAndRewrite(tensor::ExtractOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getTensor().getType());
    FailureOr<LinearLayout> layout = toLinearLayout(type);
    if (failed(layout))
      return failure();
    Location loc = op.getLoc();
    if (type.getRank() == 0) {
      rewriter.replaceOpWithNewOp<vector::ExtractOp>(op, adaptor.getTensor(),
                                                     ArrayRef<int64_t>{0});
      return success();
    }
    Type elemType = type.getElementType();
    state.needShared(rewriter, type.getNumElements() * storageBytes(elemType));
    SmallVector<int64_t> strides = rowMajorStrides(type.getShape());
    Value base = sharedBase(rewriter, loc);
    barrier(rewriter, loc);
    storeShared(rewriter, loc, base,
                unpackVector(rewriter, loc, adaptor.getTensor()), elemType,
                *layout, strides);
    barrier(rewriter, loc);
    Value offset = constI32(rewriter, loc, 0);
    for (auto [d, idx] : llvm::enumerate(adaptor.getIndices())) {
      Value i =
          arith::IndexCastOp::create(rewriter, loc, rewriter.getI32Type(), idx);
      offset = arith::AddIOp::create(
          rewriter, loc, offset,
          arith::MulIOp::create(rewriter, loc, i,
                                constI32(rewriter, loc, strides[d])));
    }
    Type mem = elemType.isInteger(1) ? rewriter.getI8Type() : elemType;
    Value addr = LLVM::GEPOp::create(rewriter, loc, base.getType(), mem, base,
                                     ValueRange{offset});
    Value v = LLVM::LoadOp::create(rewriter, loc, mem, addr);
    if (mem != elemType)
      v = arith::TruncIOp::create(rewriter, loc, elemType, v);
    rewriter.replaceOp(op, v);
    return success();
  }
};

} // namespace

void mlir::tile::populateTileToGpuShapePatterns(TypeConverter &converter,
                                                RewritePatternSet &patterns,
                                                GpuLoweringState &state) {
  patterns.add<BroadcastPattern, ExpandDimsPattern, ReshapePattern,
               PermutePattern, ConvertLayoutPattern, ExtractPattern>(
      converter, patterns.getContext(), state);
}
