//===- TileHostMatmul.cpp - register-blocked matmul micro-kernels ---------===//
//
// Loops from convert-linalg-to-loops keep the k reduction innermost, which
// LLVM cannot vectorize without reassociating floating-point sums. Instead,
// each MR x NR block of the accumulator lives in vector registers across the
// whole k loop: per k, NR/VL vectors of a row of b, MR broadcast elements of
// a column of a, and MR * NR/VL fused multiply-adds.
//
//===----------------------------------------------------------------------===//
#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/TargetParser/Host.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEHOSTMATMUL
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

struct MicroKernel {
  unsigned rows;       // MR
  unsigned vectorBits; // register width
};

bool hasUnitInnerStride(MemRefType type) {
  auto [strides, offset] = type.getStridesAndOffset();
  return !strides.empty() && strides.back() == 1;
}

/// Extends `v` (a scalar or vector of the input type) to the accumulator's
/// element type, as linalg.matmul's `cast` says.
Value extend(OpBuilder &b, Location loc, Value v, Type accElem,
             bool isUnsigned) {
  Type elem = getElementTypeOrSelf(v.getType());
  if (elem == accElem)
    return v;
  Type type = accElem;
  if (auto vec = dyn_cast<VectorType>(v.getType()))
    type = vec.clone(accElem);
  if (isa<FloatType>(accElem))
    return arith::ExtFOp::create(b, loc, type, v);
  if (isUnsigned)
    return arith::ExtUIOp::create(b, loc, type, v);
  return arith::ExtSIOp::create(b, loc, type, v);
}

/// Rewrites one matmul (2-d, or batched with `batched`) on buffers.
LogicalResult rewriteMatmul(RewriterBase &rewriter, linalg::LinalgOp op,
                            bool batched, bool isUnsigned,
                            const MicroKernel &mk) {
  Value a = op.getDpsInputs()[0], b = op.getDpsInputs()[1];
  Value c = op.getDpsInits()[0];
  auto aType = dyn_cast<MemRefType>(a.getType());
  auto bType = dyn_cast<MemRefType>(b.getType());
  auto cType = dyn_cast<MemRefType>(c.getType());
  if (!aType || !bType || !cType || !aType.hasStaticShape() ||
      !bType.hasStaticShape() || !cType.hasStaticShape())
    return failure();
  if (!hasUnitInnerStride(bType) || !hasUnitInnerStride(cType))
    return failure();
  Type inElem = aType.getElementType(), accElem = cType.getElementType();
  if (bType.getElementType() != inElem || !accElem.isIntOrFloat() ||
      isa<FloatType>(inElem) != isa<FloatType>(accElem))
    return failure();

  unsigned o = batched ? 1 : 0;
  int64_t batch = batched ? cType.getDimSize(0) : 1;
  int64_t m = cType.getDimSize(o), n = cType.getDimSize(o + 1);
  int64_t k = aType.getDimSize(o + 1);
  int64_t lanes = std::max<int64_t>(
      1, mk.vectorBits / accElem.getIntOrFloatBitWidth());
  int64_t vl = std::min(lanes, n);
  int64_t nv = std::min<int64_t>(2, n / vl); // vectors per accumulator row
  int64_t mr = std::min<int64_t>(mk.rows, m);
  if (n % (vl * nv) != 0 || m % mr != 0 || k == 0)
    return failure();
  int64_t nr = vl * nv;
  auto accVec = VectorType::get({vl}, accElem);
  auto inVec = VectorType::get({vl}, inElem);
  bool isFloat = isa<FloatType>(accElem);

  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  // Index constants, created once before the loops.
  DenseMap<int64_t, Value> constants;
  auto idx = [&](int64_t v) -> Value {
    Value &c = constants[v];
    if (!c) {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(op);
      c = arith::ConstantIndexOp::create(rewriter, loc, v);
    }
    return c;
  };
  auto loop = [&](OpBuilder &bld, int64_t upper, int64_t step,
                  function_ref<void(OpBuilder &, Value)> body) {
    scf::ForOp::create(bld, loc, idx(0), idx(upper), idx(step), ValueRange{},
                       [&](OpBuilder &inner, Location, Value iv, ValueRange) {
                         body(inner, iv);
                         scf::YieldOp::create(inner, loc);
                       });
  };

  auto tiles = [&](OpBuilder &bb, ValueRange prefix) {
    auto at = [&](ValueRange rest) {
      SmallVector<Value> indices(prefix);
      indices.append(rest.begin(), rest.end());
      return indices;
    };
    loop(bb, m, mr, [&](OpBuilder &ib, Value i0) {
      loop(ib, n, nr, [&](OpBuilder &jb, Value j0) {
        SmallVector<Value> rowsIdx{i0}, colsIdx{j0}, accs;
        for (int64_t r = 1; r < mr; ++r)
          rowsIdx.push_back(arith::AddIOp::create(jb, loc, i0, idx(r)));
        for (int64_t v = 1; v < nv; ++v)
          colsIdx.push_back(arith::AddIOp::create(jb, loc, j0, idx(v * vl)));
        for (int64_t r = 0; r < mr; ++r)
          for (int64_t v = 0; v < nv; ++v)
            accs.push_back(vector::LoadOp::create(
                jb, loc, accVec, c, at({rowsIdx[r], colsIdx[v]})));
        auto kLoop = scf::ForOp::create(
            jb, loc, idx(0), idx(k), idx(1), accs,
            [&](OpBuilder &kb, Location, Value kk, ValueRange iter) {
              SmallVector<Value> bRow, next;
              for (int64_t v = 0; v < nv; ++v)
                bRow.push_back(extend(
                    kb, loc,
                    vector::LoadOp::create(kb, loc, inVec, b,
                                           at({kk, colsIdx[v]})),
                    accElem, isUnsigned));
              for (int64_t r = 0; r < mr; ++r) {
                Value aElem = extend(
                    kb, loc,
                    memref::LoadOp::create(kb, loc, a, at({rowsIdx[r], kk})),
                    accElem, isUnsigned);
                Value aVec =
                    vector::BroadcastOp::create(kb, loc, accVec, aElem);
                for (int64_t v = 0; v < nv; ++v) {
                  Value acc = iter[r * nv + v];
                  if (isFloat) {
                    next.push_back(
                        vector::FMAOp::create(kb, loc, aVec, bRow[v], acc));
                  } else {
                    Value prod =
                        arith::MulIOp::create(kb, loc, aVec, bRow[v]);
                    next.push_back(arith::AddIOp::create(kb, loc, acc, prod));
                  }
                }
              }
              scf::YieldOp::create(kb, loc, next);
            });
        for (int64_t r = 0; r < mr; ++r)
          for (int64_t v = 0; v < nv; ++v)
            vector::StoreOp::create(jb, loc, kLoop.getResult(r * nv + v), c,
                                    at({rowsIdx[r], colsIdx[v]}));
      });
    });
  };
  if (batched)
    loop(rewriter, batch, 1,
         [&](OpBuilder &bb, Value bi) { tiles(bb, ValueRange{bi}); });
  else
    tiles(rewriter, ValueRange{});
  rewriter.eraseOp(op);
  return success();
}

struct TileHostMatmulPass
    : tile::impl::TileHostMatmulBase<TileHostMatmulPass> {
  using TileHostMatmulBase::TileHostMatmulBase;

  void runOnOperation() override {
    MicroKernel mk;
    mk.vectorBits = vectorBits;
    if (mk.vectorBits == 0) {
      llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
      mk.vectorBits = features.lookup("avx512f") ? 512 : 256;
    }
    mk.rows = rows ? unsigned(rows) : (mk.vectorBits >= 512 ? 8 : 4);

    SmallVector<linalg::LinalgOp> matmuls;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) &&
          op.hasPureBufferSemantics())
        matmuls.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : matmuls) {
      bool batched = isa<linalg::BatchMatmulOp>(op);
      bool userMaps, isUnsigned;
      if (auto mm = dyn_cast<linalg::MatmulOp>(op.getOperation())) {
        userMaps = mm.hasUserDefinedMaps();
        isUnsigned = mm.getCast() == linalg::TypeFn::cast_unsigned;
      } else {
        auto bmm = cast<linalg::BatchMatmulOp>(op.getOperation());
        userMaps = bmm.hasUserDefinedMaps();
        isUnsigned = bmm.getCast() == linalg::TypeFn::cast_unsigned;
      }
      if (userMaps)
        continue;
      (void)rewriteMatmul(rewriter, op, batched, isUnsigned, mk);
    }
  }
};

} // namespace
