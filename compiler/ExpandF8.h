//===- ExpandF8.h - fp8 casts as integer code --------------------*- C++
//-*-===//
//
// float8_e4m3fn and float8_e5m2 have no LLVM IR type: LLVM's type converter
// keeps them as i8, and nothing upstream lowers arith.extf/truncf on them.
// These helpers write the conversions as integer arith on the bits, exactly
// (round to nearest even, saturating to the largest finite value as PTX's
// cvt.rn.satfinite does; NaN stays NaN). They work on scalars and vectors.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_COMPILER_EXPANDF8_H
#define TILE_COMPILER_EXPANDF8_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

#include <memory>

namespace mlir {
class Pass;
namespace tile {

/// f8E4M3FN or f8E5M2 (the fp8 types tile supports before sm_100).
bool isExpandedF8(Type type);

/// `bits` (i8, or a vector of i8) holding fp8 values of `f8Type`, as f32
/// values of the same shape (exact).
Value emitF8BitsToF32(OpBuilder &b, Location loc, Value bits, Type f8Type);

/// `src` (f32 or f64, scalar or vector) rounded to `f8Type`: the i8 bits,
/// same shape. Round to nearest even from the source precision directly (no
/// double rounding), out-of-range and infinite values to +-max finite, NaN
/// to 0x7f.
Value emitFloatToF8Bits(OpBuilder &b, Location loc, Value src, Type f8Type);

/// arith.extf/truncf from and to fp8 and arith.constant of fp8 as integer
/// code around arith.bitcast i8 <-> fp8 (which lowers to nothing).
void populateExpandF8Patterns(RewritePatternSet &patterns);

/// The pass `tile-expand-f8` applying those patterns.
std::unique_ptr<Pass> createExpandF8Pass();
void registerExpandF8Pass();

} // namespace tile
} // namespace mlir

#endif // TILE_COMPILER_EXPANDF8_H
