//===- TileToGpuElementwise.cpp - arith/math, constants, indices ----------===//
#include "compiler/ExpandF8.h"
#include "compiler/gpu/TileToGpuCommon.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

#include <functional>

using namespace mlir;
using namespace mlir::tile;

std::pair<Value, Value>
mlir::tile::roundedQuotientOperands(arith::TruncFOp op) {
  // An f32 value widened, or an f64 constant every f32 holds exactly (a
  // widened constant folds).
  auto narrowed = [](Value v) -> Value {
    if (auto ext = v.getDefiningOp<arith::ExtFOp>())
      return getElementTypeOrSelf(ext.getIn()).isF32() ? ext.getIn() : Value();
    Attribute constant;
    if (!matchPattern(v, m_Constant(&constant)))
      return Value();
    auto exactInF32 = [](APFloat value) {
      bool lost = false;
      value.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
      return !lost;
    };
    if (auto dense = dyn_cast<DenseFPElementsAttr>(constant))
      return llvm::all_of(dense.getValues<APFloat>(), exactInF32) ? v : Value();
    auto scalar = dyn_cast<FloatAttr>(constant);
    return scalar && exactInF32(scalar.getValue()) ? v : Value();
  };
  auto quotient = op.getIn().getDefiningOp<arith::DivFOp>();
  if (!quotient || !getElementTypeOrSelf(op.getType()).isF32() ||
      !getElementTypeOrSelf(quotient.getType()).isF64())
    return {};
  Value x = narrowed(quotient.getLhs()), y = narrowed(quotient.getRhs());
  if (!x || !y)
    return {};
  return {x, y};
}

namespace {

bool hasTensors(Operation *op) {
  auto isTensor = [](Type t) { return isa<RankedTensorType>(t); };
  return llvm::any_of(op->getOperandTypes(), isTensor) ||
         llvm::any_of(op->getResultTypes(), isTensor);
}

/// Any arith/math op on tensors: the same op on the per-thread vectors.
struct ElementwisePattern : ConversionPattern {
  ElementwisePattern(TypeConverter &converter, MLIRContext *ctx)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1, ctx) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()) ||
        isa<arith::ConstantOp>(op) || !hasTensors(op) ||
        op->getNumRegions() != 0)
      return rewriter.notifyMatchFailure(op, "not an elementwise tensor op");
    SmallVector<Type> resultTypes;
    if (failed(typeConverter->convertTypes(op->getResultTypes(), resultTypes)))
      return failure();
    OperationState state(op->getLoc(), op->getName(), operands, resultTypes,
                         op->getAttrs());
    Operation *newOp = rewriter.create(state);
    rewriter.replaceOp(op, newOp->getResults());
    return success();
  }
};

struct ConstantPattern : OpConversionPattern<arith::ConstantOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(arith::ConstantOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto dense = dyn_cast<DenseElementsAttr>(op.getValue());
    if (!dense || !isa<RankedTensorType>(op.getType()))
      return failure();
    if (!dense.isSplat())
      return rewriter.notifyMatchFailure(op, "non-splat constant tiles are "
                                             "not supported on the GPU yet");
    auto type = cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        op, type,
        DenseElementsAttr::get(type, dense.getSplatValue<Attribute>()));
    return success();
  }
};

/// One call of the NVVM intrinsic `intrinsic` (f32 -> f32) per element: the
/// approximate special functions (ex2/lg2/rsqrt.approx.f32, 2 ulp; much
/// faster than libdevice). The intrinsics are pure, so LLVM may CSE and hoist
/// them, but it does not fold them.
Value perElementIntrinsic(ConversionPatternRewriter &rewriter, Location loc,
                          Value vec, StringRef intrinsic,
                          const std::function<Value(Value)> &pre,
                          const std::function<Value(Value)> &post) {
  SmallVector<Value> out;
  for (Value e : unpackVector(rewriter, loc, vec)) {
    Value in = pre ? pre(e) : e;
    Value r = LLVM::CallIntrinsicOp::create(
                  rewriter, loc, rewriter.getF32Type(),
                  rewriter.getStringAttr(intrinsic), ValueRange{in})
                  .getResult(0);
    out.push_back(post ? post(r) : r);
  }
  return packVector(rewriter, loc, vec.getType(), out);
}

template <typename OpTy>
struct FastMathPattern : OpConversionPattern<OpTy> {
  FastMathPattern(TypeConverter &converter, MLIRContext *ctx,
                  StringRef intrinsic, double preScale, double postScale)
      : OpConversionPattern<OpTy>(converter, ctx, /*benefit=*/2),
        intrinsic(intrinsic), preScale(preScale), postScale(postScale) {}
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    if (!type || !type.getElementType().isF32())
      return failure();
    Location loc = op.getLoc();
    auto scale = [&](double s) -> std::function<Value(Value)> {
      if (s == 1.0)
        return nullptr;
      return [&rewriter, loc, s](Value v) -> Value {
        Value c = arith::ConstantOp::create(rewriter, loc,
                                            rewriter.getF32FloatAttr(s));
        return arith::MulFOp::create(rewriter, loc, v, c);
      };
    };
    auto pre = scale(preScale), post = scale(postScale);
    rewriter.replaceOp(op,
                       perElementIntrinsic(rewriter, loc, adaptor.getOperand(),
                                           intrinsic, pre, post));
    return success();
  }
  std::string intrinsic;
  double preScale, postScale;
};

/// f32(f64(x) / f64(y)) of f32 x and y, the f32 quotient correctly rounded
/// (rounding twice is exact for a division: 53 >= 2 * 24 + 2 bits), is how
/// the frontend asks for an IEEE f32 division (float `//`, npy_divmod's
/// quotient). LLVM narrows it to an f32 fdiv, which NVPTX emits as div.full
/// (2 ulp) under nvptx-prec-divf32=1, so it becomes div.rn.f32 here, a
/// fraction of an f64 division's cost (the f64 one is dead: DCE drops it).
struct RoundedQuotientPattern : OpConversionPattern<arith::TruncFOp> {
  RoundedQuotientPattern(TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx, /*benefit=*/2) {}
  LogicalResult
  matchAndRewrite(arith::TruncFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto [numerator, denominator] = roundedQuotientOperands(op);
    if (!numerator)
      return failure();
    Value x = rewriter.getRemappedValue(numerator);
    Value y = rewriter.getRemappedValue(denominator);
    if (!x || !y)
      return failure();
    Location loc = op.getLoc();
    Type f32 = rewriter.getF32Type();
    auto divide = [&](Value a, Value b) -> Value {
      // An f64 constant operand holds an f32 exactly: this folds.
      auto narrow = [&](Value v) -> Value {
        return v.getType().isF64()
                   ? arith::TruncFOp::create(rewriter, loc, f32, v)
                   : v;
      };
      return LLVM::CallIntrinsicOp::create(
                 rewriter, loc, f32,
                 rewriter.getStringAttr("llvm.nvvm.div.rn.f"),
                 ValueRange{narrow(a), narrow(b)})
          .getResult(0);
    };
    Type resultType = getTypeConverter()->convertType(op.getType());
    if (!isa<VectorType>(resultType)) {
      rewriter.replaceOp(op, divide(x, y));
    } else {
      SmallVector<Value> out;
      for (auto [a, b] : llvm::zip_equal(unpackVector(rewriter, loc, x),
                                         unpackVector(rewriter, loc, y)))
        out.push_back(divide(a, b));
      rewriter.replaceOp(op, packVector(rewriter, loc, resultType, out));
    }
    return success();
  }
};

/// Per-thread fp8 registers as i8 scalars (the bits).
SmallVector<Value> f8Bits(OpBuilder &b, Location loc, Value vec) {
  SmallVector<Value> bits;
  for (Value e : unpackVector(b, loc, vec))
    bits.push_back(arith::BitcastOp::create(b, loc, b.getI8Type(), e));
  return bits;
}

/// The value a float32 flush of subnormals to zero (tile.flush_subnormals:
/// select(|x| < 2^-126, copysign(0, x), x)) flushes, or null.
Value flushedValue(Value v) {
  auto select = v.getDefiningOp<arith::SelectOp>();
  if (!select)
    return Value();
  Value x = select.getFalseValue();
  auto compare = select.getCondition().getDefiningOp<arith::CmpFOp>();
  auto zero = select.getTrueValue().getDefiningOp<math::CopySignOp>();
  auto magnitude =
      compare ? compare.getLhs().getDefiningOp<math::AbsFOp>() : nullptr;
  APFloat bound(0.0f);
  if (!compare || compare.getPredicate() != arith::CmpFPredicate::OLT ||
      !magnitude || magnitude.getOperand() != x ||
      !matchPattern(compare.getRhs(), m_ConstantFloat(&bound)) ||
      bound != APFloat::getSmallestNormalized(bound.getSemantics()) || !zero ||
      zero.getRhs() != x || !matchPattern(zero.getLhs(), m_PosZeroFloat()))
    return Value();
  return x;
}

/// exp2 and rsqrt with flush_to_zero=True, in float32: a flush of the
/// function's result (of a flushed x, or not) is one `.approx.ftz`
/// instruction, which flushes subnormal inputs and results itself. Without
/// ftz ptxas wraps each ex2 in a compare and two predicated multiplies for
/// subnormal results: three more instructions per element of attention's
/// softmax (cuTile's samples write exp2(qk, flush_to_zero=True)).
template <typename OpTy>
struct FlushedApproxPattern : OpConversionPattern<arith::SelectOp> {
  FlushedApproxPattern(TypeConverter &converter, MLIRContext *ctx,
                       StringRef ftzIntrinsic)
      : OpConversionPattern(converter, ctx, /*benefit=*/3),
        ftzIntrinsic(ftzIntrinsic) {}
  LogicalResult
  matchAndRewrite(arith::SelectOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = dyn_cast<RankedTensorType>(op.getType());
    Value flushed = flushedValue(op.getResult());
    auto fn = flushed ? flushed.getDefiningOp<OpTy>() : nullptr;
    if (!type || !type.getElementType().isF32() || !fn)
      return failure();
    Value input = fn.getOperand();
    if (Value unflushed = flushedValue(input))
      input = unflushed;
    Value converted = rewriter.getRemappedValue(input);
    if (!converted)
      return failure();
    rewriter.replaceOp(op, perElementIntrinsic(rewriter, op.getLoc(), converted,
                                               ftzIntrinsic, nullptr, nullptr));
    return success();
  }
  std::string ftzIntrinsic;
};

/// fp8 -> f16/bf16/f32/f64: PTX cvt.rn.f16x2.{e4m3,e5m2}x2 on pairs of
/// registers (sm_89+), exact; the f16 results widen or narrow exactly.
struct ExtFFromF8Pattern : OpConversionPattern<arith::ExtFOp> {
  ExtFFromF8Pattern(TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx, /*benefit=*/2) {}
  LogicalResult
  matchAndRewrite(arith::ExtFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto inType = dyn_cast<RankedTensorType>(op.getIn().getType());
    if (!inType || !isExpandedF8(inType.getElementType()))
      return failure();
    Location loc = op.getLoc();
    auto outType =
        cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    Type outElem = outType.getElementType();
    Type f16 = rewriter.getF16Type(), i8 = rewriter.getI8Type();
    SmallVector<Value> bits = f8Bits(rewriter, loc, adaptor.getIn());
    SmallVector<Value> out;
    for (size_t i = 0; i < bits.size(); i += 2) {
      Value hi = i + 1 < bits.size()
                     ? bits[i + 1]
                     : arith::ConstantOp::create(rewriter, loc,
                                                 rewriter.getI8IntegerAttr(0));
      Value pair = packVector(rewriter, loc, VectorType::get({2}, i8),
                              ValueRange{bits[i], hi});
      Value halves = NVVM::ConvertF8x2ToF16x2Op::create(
          rewriter, loc, VectorType::get({2}, f16), pair,
          rewriter.getBoolAttr(false), TypeAttr::get(inType.getElementType()));
      for (int64_t k = 0; k < 2 && i + k < bits.size(); ++k) {
        Value h = vector::ExtractOp::create(rewriter, loc, halves, ArrayRef{k});
        if (outElem.isF32() || outElem.isF64())
          h = arith::ExtFOp::create(rewriter, loc, outElem, h);
        else if (outElem.isBF16())
          h = arith::TruncFOp::create(
              rewriter, loc, outElem,
              arith::ExtFOp::create(rewriter, loc, rewriter.getF32Type(), h));
        out.push_back(h);
      }
    }
    rewriter.replaceOp(op, packVector(rewriter, loc, outType, out));
    return success();
  }
};

/// f16/bf16/f32 -> fp8: PTX cvt.rn.satfinite.{e4m3,e5m2}x2.f32 on pairs
/// (sm_89+; the halves widen to f32 exactly). f64 rounds from its own bits
/// in integer code (through f32 would round twice).
struct TruncFToF8Pattern : OpConversionPattern<arith::TruncFOp> {
  TruncFToF8Pattern(TypeConverter &converter, MLIRContext *ctx)
      : OpConversionPattern(converter, ctx, /*benefit=*/2) {}
  LogicalResult
  matchAndRewrite(arith::TruncFOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto outTensor = dyn_cast<RankedTensorType>(op.getType());
    if (!outTensor || !isExpandedF8(outTensor.getElementType()))
      return failure();
    Type f8 = outTensor.getElementType();
    Location loc = op.getLoc();
    auto outType = cast<VectorType>(getTypeConverter()->convertType(outTensor));
    Value in = adaptor.getIn();
    auto inType = cast<VectorType>(in.getType());
    Type f32 = rewriter.getF32Type(), i8 = rewriter.getI8Type();
    if (inType.getElementType().isF64()) {
      Value bits = emitFloatToF8Bits(rewriter, loc, in, f8);
      rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, outType, bits);
      return success();
    }
    if (!inType.getElementType().isF32())
      in = arith::ExtFOp::create(rewriter, loc, inType.clone(f32), in);
    // Each pair is a 16-bit lane of the result (the first element the
    // conversion's second operand, the low byte): LLVM then keeps each
    // conversion's two bytes together instead of splitting and repacking
    // them (4 instructions a pair in P's loop of fp8 attention). An odd
    // last element pairs with itself and its copy is dropped.
    SmallVector<Value> elems = unpackVector(rewriter, loc, in), pairs;
    int64_t count = elems.size();
    for (int64_t i = 0; i < count; i += 2)
      pairs.push_back(NVVM::ConvertF32x2ToF8x2Op::create(
          rewriter, loc, rewriter.getI16Type(),
          elems[std::min(i + 1, count - 1)], elems[i], NVVM::FPRoundingMode::RN,
          NVVM::SaturationMode::SATFINITE,
          /*relu=*/false, f8));
    int64_t lanes = pairs.size();
    Value bytes = vector::BitCastOp::create(
        rewriter, loc, VectorType::get({2 * lanes}, i8),
        packVector(rewriter, loc,
                   VectorType::get({lanes}, rewriter.getI16Type()), pairs));
    if (2 * lanes != count)
      bytes = vector::ExtractStridedSliceOp::create(
          rewriter, loc, bytes, ArrayRef<int64_t>{0}, ArrayRef<int64_t>{count},
          ArrayRef<int64_t>{1});
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, outType, bytes);
    return success();
  }
};

struct SplatPattern : OpConversionPattern<SplatOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(SplatOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    rewriter.replaceOpWithNewOp<vector::BroadcastOp>(op, type,
                                                     adaptor.getSrc());
    return success();
  }
};

struct IotaPattern : OpConversionPattern<IotaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(IotaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto tensorType = cast<RankedTensorType>(op.getType());
    FailureOr<LinearLayout> layout = toLinearLayout(tensorType);
    if (failed(layout))
      return failure();
    Location loc = op.getLoc();
    Type elemType = tensorType.getElementType();
    auto type = VectorType::get({layout->getNumRegs()}, elemType);
    Value base = threadCoords(rewriter, loc, *layout)[0];
    if (elemType != base.getType())
      base = arith::ExtSIOp::create(rewriter, loc, elemType, base);
    SmallVector<Attribute> regs;
    for (int64_t r = 0; r < layout->getNumRegs(); ++r)
      regs.push_back(IntegerAttr::get(elemType, layout->regCoord(r)[0]));
    Value offsets = arith::ConstantOp::create(
        rewriter, loc, type, DenseElementsAttr::get(type, regs));
    Value splat = vector::BroadcastOp::create(rewriter, loc, type, base);
    rewriter.replaceOpWithNewOp<arith::AddIOp>(op, splat, offsets);
    return success();
  }
};

template <typename OpTy, typename X, typename Y, typename Z>
struct GridQueryPattern : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type i32 = rewriter.getI32Type();
    Value v;
    switch (op.getAxis()) {
    case 0:
      v = X::create(rewriter, op.getLoc(), i32);
      break;
    case 1:
      v = Y::create(rewriter, op.getLoc(), i32);
      break;
    default:
      v = Z::create(rewriter, op.getLoc(), i32);
      break;
    }
    rewriter.replaceOp(op, v);
    return success();
  }
};

template <typename OpTy, bool Extent>
struct ArrayQueryPattern : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(OpTy op, typename OpTy::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<ArrayParts> parts = getArrayParts(adaptor.getArray());
    if (failed(parts))
      return rewriter.notifyMatchFailure(op, "array is not a kernel argument");
    Value v = Extent ? parts->extents[op.getDim()] : parts->strides[op.getDim()];
    rewriter.replaceOpWithNewOp<arith::TruncIOp>(op, rewriter.getI32Type(), v);
    return success();
  }
};

} // namespace

void mlir::tile::populateTileToGpuElementwisePatterns(
    TypeConverter &converter, RewritePatternSet &patterns,
    GpuLoweringState &state) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<ElementwisePattern, ExtFFromF8Pattern, TruncFToF8Pattern,
               RoundedQuotientPattern>(converter, ctx);
  patterns.add<ConstantPattern, SplatPattern, IotaPattern,
               ArrayQueryPattern<DimOp, true>,
               ArrayQueryPattern<StrideOp, false>,
               GridQueryPattern<BidOp, NVVM::BlockIdXOp, NVVM::BlockIdYOp,
                                NVVM::BlockIdZOp>,
               GridQueryPattern<NumBlocksOp, NVVM::GridDimXOp,
                                NVVM::GridDimYOp, NVVM::GridDimZOp>>(converter,
                                                                     ctx);
  const double log2e = 1.4426950408889634, ln2 = 0.6931471805599453;
  patterns.add<FlushedApproxPattern<math::Exp2Op>>(
      converter, ctx, "llvm.nvvm.ex2.approx.ftz.f32");
  patterns.add<FlushedApproxPattern<math::RsqrtOp>>(
      converter, ctx, "llvm.nvvm.rsqrt.approx.ftz.f");
  patterns.add<FastMathPattern<math::ExpOp>>(
      converter, ctx, "llvm.nvvm.ex2.approx.f32", log2e, 1.0);
  patterns.add<FastMathPattern<math::Exp2Op>>(
      converter, ctx, "llvm.nvvm.ex2.approx.f32", 1.0, 1.0);
  patterns.add<FastMathPattern<math::LogOp>>(
      converter, ctx, "llvm.nvvm.lg2.approx.f", 1.0, ln2);
  patterns.add<FastMathPattern<math::Log2Op>>(
      converter, ctx, "llvm.nvvm.lg2.approx.f", 1.0, 1.0);
  patterns.add<FastMathPattern<math::RsqrtOp>>(
      converter, ctx, "llvm.nvvm.rsqrt.approx.f", 1.0, 1.0);
}
