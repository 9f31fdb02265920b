//===- ExpandF8.cpp - fp8 casts as integer code (tile-expand-f8) ----------===//
//
// arith.extf/truncf from and to f8E4M3FN/f8E5M2 written as integer arith on
// the bits, for targets without fp8 conversion instructions (the CPU) and
// for the conversions PTX has no instruction for (f64 -> fp8 on sm_90).
//
//===----------------------------------------------------------------------===//
#include "compiler/ExpandF8.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <cmath>

using namespace mlir;

namespace {

/// The encoding of an fp8 type: exponent and mantissa bits, bias, the bits
/// of the largest finite magnitude, whether it has infinities (e5m2).
struct F8Format {
  unsigned exp, mant;
  int64_t bias;
  uint64_t maxFinite;
  bool hasInf;
};

F8Format formatOf(Type f8Type) {
  if (isa<Float8E4M3FNType>(f8Type))
    return {4, 3, 7, 0x7E, false}; // 448; 0x7f is NaN, no infinity
  return {5, 2, 15, 0x7B, true};   // 57344; 0x7c is +inf
}

/// `like` (a scalar or vector type) with element type `elem`.
Type withElem(Type like, Type elem) {
  if (auto v = dyn_cast<VectorType>(like))
    return v.clone(elem);
  return elem;
}

/// Integer arith on values of one (scalar or vector) integer type.
struct IntBuilder {
  OpBuilder &b;
  Location loc;
  Type type;

  Value c(uint64_t v) const {
    Type elem = getElementTypeOrSelf(type);
    auto attr = IntegerAttr::get(elem, APInt(elem.getIntOrFloatBitWidth(), v));
    if (auto vec = dyn_cast<VectorType>(type))
      return arith::ConstantOp::create(b, loc,
                                       DenseElementsAttr::get(vec, attr));
    return arith::ConstantOp::create(b, loc, attr);
  }
  Value add(Value x, Value y) const {
    return arith::AddIOp::create(b, loc, x, y);
  }
  Value sub(Value x, Value y) const {
    return arith::SubIOp::create(b, loc, x, y);
  }
  Value band(Value x, Value y) const {
    return arith::AndIOp::create(b, loc, x, y);
  }
  Value bor(Value x, Value y) const {
    return arith::OrIOp::create(b, loc, x, y);
  }
  Value shl(Value x, Value y) const {
    return arith::ShLIOp::create(b, loc, x, y);
  }
  Value shr(Value x, Value y) const {
    return arith::ShRUIOp::create(b, loc, x, y);
  }
  Value cmp(arith::CmpIPredicate p, Value x, Value y) const {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value select(Value cond, Value x, Value y) const {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
};

} // namespace

bool mlir::tile::isExpandedF8(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

Value mlir::tile::emitF8BitsToF32(OpBuilder &b, Location loc, Value bits,
                                  Type f8Type) {
  using P = arith::CmpIPredicate;
  F8Format f = formatOf(f8Type);
  Type like = bits.getType();
  Type i32 = withElem(like, b.getI32Type()),
       f32 = withElem(like, b.getF32Type());
  IntBuilder ib{b, loc, i32};
  Value x = arith::ExtUIOp::create(b, loc, i32, bits);
  Value sign = ib.shl(ib.band(x, ib.c(0x80)), ib.c(24));
  Value e = ib.band(ib.shr(x, ib.c(f.mant)), ib.c((1u << f.exp) - 1));
  Value m = ib.band(x, ib.c((1u << f.mant) - 1));
  // Normal: rebias the exponent, widen the mantissa.
  Value normal = ib.bor(ib.shl(ib.add(e, ib.c(127 - f.bias)), ib.c(23)),
                        ib.shl(m, ib.c(23 - f.mant)));
  // Subnormal: m * 2^(1 - bias - mant), exact in f32.
  Value scale = arith::ConstantOp::create(
      b, loc, f32,
      isa<VectorType>(f32)
          ? TypedAttr(DenseElementsAttr::get(
                cast<VectorType>(f32),
                b.getF32FloatAttr(std::ldexp(1.0, 1 - f.bias - f.mant))))
          : TypedAttr(b.getF32FloatAttr(std::ldexp(1.0, 1 - f.bias - f.mant))));
  Value subnormal = arith::BitcastOp::create(
      b, loc, i32,
      arith::MulFOp::create(b, loc, arith::UIToFPOp::create(b, loc, f32, m),
                            scale));
  Value mag = ib.select(ib.cmp(P::eq, e, ib.c(0)), subnormal, normal);
  Value qnan = ib.c(0x7FC00000);
  if (f.hasInf) {
    Value special =
        ib.select(ib.cmp(P::eq, m, ib.c(0)), ib.c(0x7F800000), qnan);
    mag = ib.select(ib.cmp(P::eq, e, ib.c((1u << f.exp) - 1)), special, mag);
  } else {
    mag =
        ib.select(ib.cmp(P::eq, ib.band(x, ib.c(0x7F)), ib.c(0x7F)), qnan, mag);
  }
  return arith::BitcastOp::create(b, loc, f32, ib.bor(mag, sign));
}

Value mlir::tile::emitFloatToF8Bits(OpBuilder &b, Location loc, Value src,
                                    Type f8Type) {
  using P = arith::CmpIPredicate;
  F8Format f = formatOf(f8Type);
  Type like = src.getType();
  unsigned n = getElementTypeOrSelf(like).getIntOrFloatBitWidth();
  assert((n == 32 || n == 64) && "f32 or f64 source");
  const unsigned srcMant = n == 32 ? 23 : 52, srcExp = n == 32 ? 8 : 11;
  const int64_t srcBias = n == 32 ? 127 : 1023;
  Type iN = withElem(like, b.getIntegerType(n));
  Type i8 = withElem(like, b.getI8Type());
  IntBuilder ib{b, loc, iN};
  IntBuilder ib8{b, loc, i8};
  Value x = arith::BitcastOp::create(b, loc, iN, src);
  Value a = ib.band(x, ib.c(~(uint64_t(1) << (n - 1))));
  Value isNan =
      ib.cmp(P::ugt, a, ib.c(((uint64_t(1) << srcExp) - 1) << srcMant));
  Value ef = ib.shr(a, ib.c(srcMant));
  Value implicit = ib.select(ib.cmp(P::ne, ef, ib.c(0)),
                             ib.c(uint64_t(1) << srcMant), ib.c(0));
  Value sig = ib.bor(ib.band(a, ib.c((uint64_t(1) << srcMant) - 1)), implicit);
  // Source subnormals have exponent field 0 but scale 2^(1 - bias).
  Value efEff = arith::MaxUIOp::create(b, loc, ef, ib.c(1));
  // Bits to drop: the mantissa difference, plus the distance below the
  // smallest normal exponent of the fp8 type; past srcMant + 2 all is lost.
  Value below = arith::MaxSIOp::create(
      b, loc, ib.sub(ib.c(1 - f.bias + srcBias), efEff), ib.c(0));
  Value shift = arith::MinUIOp::create(
      b, loc, ib.add(ib.c(srcMant - f.mant), below), ib.c(srcMant + 2));
  Value one = ib.c(1);
  Value r = ib.shr(sig, shift);
  Value rem = ib.band(sig, ib.sub(ib.shl(one, shift), one));
  Value half = ib.shl(one, ib.sub(shift, one));
  Value odd = ib.cmp(P::ne, ib.band(r, one), ib.c(0));
  Value up = arith::OrIOp::create(
      b, loc, ib.cmp(P::ugt, rem, half),
      arith::AndIOp::create(b, loc, ib.cmp(P::eq, rem, half), odd));
  r = ib.add(r, arith::ExtUIOp::create(b, loc, iN, up));
  // (biased exponent - 1) << mant plus the rounded significand: a carry out
  // of the mantissa bumps the exponent; subnormals add to exponent 0.
  Value expPart = arith::MaxSIOp::create(
      b, loc, ib.sub(efEff, ib.c(srcBias - f.bias + 1)), ib.c(0));
  Value bits = ib.add(ib.shl(expPart, ib.c(f.mant)), r);
  bits = arith::MinUIOp::create(b, loc, bits, ib.c(f.maxFinite)); // satfinite
  Value sign = ib8.band(
      arith::TruncIOp::create(b, loc, i8, ib.shr(x, ib.c(n - 8))), ib8.c(0x80));
  Value out = ib8.bor(arith::TruncIOp::create(b, loc, i8, bits), sign);
  return ib8.select(isNan, ib8.c(0x7F), out);
}

namespace {

struct ExtFFromF8 : OpRewritePattern<arith::ExtFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ExtFOp op,
                                PatternRewriter &rewriter) const override {
    Type inType = op.getIn().getType(), inElem = getElementTypeOrSelf(inType);
    if (!tile::isExpandedF8(inElem))
      return failure();
    Location loc = op.getLoc();
    Value bits = arith::BitcastOp::create(
        rewriter, loc, withElem(inType, rewriter.getI8Type()), op.getIn());
    Value f32 = tile::emitF8BitsToF32(rewriter, loc, bits, inElem);
    Type outElem = getElementTypeOrSelf(op.getType());
    // Every fp8 value is exact in f16, bf16 and f64.
    if (outElem.getIntOrFloatBitWidth() > 32)
      f32 = arith::ExtFOp::create(rewriter, loc, op.getType(), f32);
    else if (!outElem.isF32())
      f32 = arith::TruncFOp::create(rewriter, loc, op.getType(), f32);
    rewriter.replaceOp(op, f32);
    return success();
  }
};

struct TruncFToF8 : OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Type outElem = getElementTypeOrSelf(op.getType());
    if (!tile::isExpandedF8(outElem))
      return failure();
    Location loc = op.getLoc();
    Value src = op.getIn();
    // f16 and bf16 widen to f32 exactly; f64 rounds from its own bits.
    if (getElementTypeOrSelf(src.getType()).getIntOrFloatBitWidth() < 32)
      src = arith::ExtFOp::create(
          rewriter, loc, withElem(src.getType(), rewriter.getF32Type()), src);
    Value bits = tile::emitFloatToF8Bits(rewriter, loc, src, outElem);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, op.getType(), bits);
    return success();
  }
};

/// An fp8 constant as its i8 bits: LLVM has no fp8 constants.
struct F8Constant : OpRewritePattern<arith::ConstantOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(arith::ConstantOp op,
                                PatternRewriter &rewriter) const override {
    Type type = op.getType();
    if (!tile::isExpandedF8(getElementTypeOrSelf(type)))
      return failure();
    TypedAttr bits;
    if (auto f = dyn_cast<FloatAttr>(op.getValue()))
      bits = rewriter.getIntegerAttr(rewriter.getI8Type(),
                                     f.getValue().bitcastToAPInt());
    else if (auto d = dyn_cast<DenseFPElementsAttr>(op.getValue()))
      bits = d.bitcast(rewriter.getI8Type());
    else
      return failure();
    Value c = arith::ConstantOp::create(rewriter, op.getLoc(), bits);
    rewriter.replaceOpWithNewOp<arith::BitcastOp>(op, type, c);
    return success();
  }
};

struct ExpandF8Pass : PassWrapper<ExpandF8Pass, OperationPass<>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ExpandF8Pass)
  StringRef getArgument() const final { return "tile-expand-f8"; }
  StringRef getDescription() const final {
    return "arith.extf/truncf/constant of f8E4M3FN and f8E5M2 as integer "
           "code on the bits (RNE, satfinite)";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect>();
  }
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    tile::populateExpandF8Patterns(patterns);
    // No folding: bitcast(constant i8) would fold back to an fp8 constant.
    GreedyRewriteConfig config;
    config.enableFolding(false);
    config.enableConstantCSE(false);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      signalPassFailure();
  }
};

} // namespace

void mlir::tile::populateExpandF8Patterns(RewritePatternSet &patterns) {
  patterns.add<ExtFFromF8, TruncFToF8, F8Constant>(patterns.getContext());
}

std::unique_ptr<Pass> mlir::tile::createExpandF8Pass() {
  return std::make_unique<ExpandF8Pass>();
}

void mlir::tile::registerExpandF8Pass() { PassRegistration<ExpandF8Pass>(); }
