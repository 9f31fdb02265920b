//===- TileToGpuElementwise.cpp - arith/math, constants, indices ----------===//
#include "compiler/gpu/TileToGpuCommon.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

#include <functional>

using namespace mlir;
using namespace mlir::tile;

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

/// One inline-asm instruction per element: approximate special functions,
/// as Triton emits them (2 ulp; much faster than libdevice).
Value perElementAsm(ConversionPatternRewriter &rewriter, Location loc,
                    Value vec, StringRef asmText,
                    const std::function<Value(Value)> &pre,
                    const std::function<Value(Value)> &post) {
  SmallVector<Value> out;
  for (Value e : unpackVector(rewriter, loc, vec)) {
    Value in = pre ? pre(e) : e;
    auto call = LLVM::InlineAsmOp::create(
        rewriter, loc, rewriter.getF32Type(), ValueRange{in}, asmText, "=f,f",
        /*has_side_effects=*/false, /*is_align_stack=*/false,
        LLVM::tailcallkind::TailCallKind::None,
        LLVM::AsmDialectAttr::get(rewriter.getContext(),
                                  LLVM::AsmDialect::AD_ATT),
        ArrayAttr());
    Value r = call.getResult(0);
    out.push_back(post ? post(r) : r);
  }
  return packVector(rewriter, loc, vec.getType(), out);
}

template <typename OpTy>
struct FastMathPattern : OpConversionPattern<OpTy> {
  FastMathPattern(TypeConverter &converter, MLIRContext *ctx, StringRef asmText,
                  double preScale, double postScale)
      : OpConversionPattern<OpTy>(converter, ctx, /*benefit=*/2),
        asmText(asmText), preScale(preScale), postScale(postScale) {}
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
    rewriter.replaceOp(op, perElementAsm(rewriter, loc, adaptor.getOperand(),
                                         asmText, pre, post));
    return success();
  }
  std::string asmText;
  double preScale, postScale;
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
  patterns.add<ElementwisePattern>(converter, ctx);
  patterns.add<ConstantPattern, SplatPattern, IotaPattern,
               ArrayQueryPattern<DimOp, true>,
               ArrayQueryPattern<StrideOp, false>,
               GridQueryPattern<BidOp, NVVM::BlockIdXOp, NVVM::BlockIdYOp,
                                NVVM::BlockIdZOp>,
               GridQueryPattern<NumBlocksOp, NVVM::GridDimXOp,
                                NVVM::GridDimYOp, NVVM::GridDimZOp>>(converter,
                                                                     ctx);
  const double log2e = 1.4426950408889634, ln2 = 0.6931471805599453;
  patterns.add<FastMathPattern<math::ExpOp>>(converter, ctx,
                                             "ex2.approx.f32 $0, $1;", log2e,
                                             1.0);
  patterns.add<FastMathPattern<math::Exp2Op>>(converter, ctx,
                                              "ex2.approx.f32 $0, $1;", 1.0,
                                              1.0);
  patterns.add<FastMathPattern<math::LogOp>>(converter, ctx,
                                             "lg2.approx.f32 $0, $1;", 1.0,
                                             ln2);
  patterns.add<FastMathPattern<math::Log2Op>>(converter, ctx,
                                              "lg2.approx.f32 $0, $1;", 1.0,
                                              1.0);
  patterns.add<FastMathPattern<math::RsqrtOp>>(converter, ctx,
                                               "rsqrt.approx.f32 $0, $1;", 1.0,
                                               1.0);
}
