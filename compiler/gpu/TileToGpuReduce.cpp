//===- TileToGpuReduce.cpp - reductions and scans -------------------------===//
//
// A reduction along `axis` combines, in order: the registers of a thread
// that differ only along `axis`, then lanes (butterfly shuffles: every lane
// ends with the result), then warps (partials through shared memory). The
// result's layout is the source's sliced along `axis`, so each step is read
// off the source's linear layout.
//
//===----------------------------------------------------------------------===//
#include "compiler/gpu/TileToGpuCommon.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

struct ReducePattern : StatefulPattern<ReduceOp> {
  using StatefulPattern::StatefulPattern;

  LogicalResult
  matchAndRewrite(ReduceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    unsigned axis = op.getAxis();
    auto srcType = cast<RankedTensorType>(op.getSrcs()[0].getType());
    FailureOr<LinearLayout> in = toLinearLayout(srcType);
    if (failed(in))
      return failure();
    LinearLayout out = in->sliced(axis);
    for (Value r : op.getResults()) {
      FailureOr<LinearLayout> want =
          toLinearLayout(cast<RankedTensorType>(r.getType()));
      if (failed(want) || *want != out)
        return op.emitOpError("result layout is not the source's slice");
    }
    size_t n = op.getSrcs().size();
    SmallVector<SmallVector<Value>> srcs;
    for (Value v : adaptor.getSrcs())
      srcs.push_back(unpackVector(rewriter, loc, v));

    // 1. In-thread: register r folds into the output register made of its
    // bits that do not move along `axis`.
    SmallVector<SmallVector<Value>> acc(out.getNumRegs());
    for (int64_t r = 0; r < in->getNumRegs(); ++r) {
      int64_t o = 0, bit = 0;
      for (auto [i, basis] : llvm::enumerate(in->regs)) {
        if (basis[axis] != 0)
          continue;
        if (r & (int64_t(1) << i))
          o |= int64_t(1) << bit;
        ++bit;
      }
      SmallVector<Value> next;
      for (size_t k = 0; k < n; ++k)
        next.push_back(srcs[k][r]);
      acc[o] = acc[o].empty()
                   ? next
                   : applyCombiner(rewriter, loc, op.getCombiner(), acc[o], next);
    }
    // 2. Across lanes.
    for (auto [bit, basis] : llvm::enumerate(in->lanes)) {
      if (basis[axis] == 0)
        continue;
      for (auto &a : acc) {
        SmallVector<Value> other;
        for (Value v : a)
          other.push_back(shuffleXor(rewriter, loc, v, 1u << bit));
        a = applyCombiner(rewriter, loc, op.getCombiner(), a, other);
      }
    }
    // 3. Across warps, through shared memory: slot (element, warp along
    // axis) holds one warp's partial.
    SmallVector<unsigned> axisWarpBits;
    for (auto [bit, basis] : llvm::enumerate(in->warps))
      if (basis[axis] != 0)
        axisWarpBits.push_back(bit);
    if (!axisWarpBits.empty())
      reduceAcrossWarps(rewriter, op, out, axisWarpBits, acc);

    for (size_t k = 0; k < n; ++k) {
      SmallVector<Value> elems;
      for (auto &a : acc)
        elems.push_back(a[k]);
      Type vecType = getTypeConverter()->convertType(op.getResult(k).getType());
      srcs[k] = {packVector(rewriter, loc, vecType, elems)};
    }
    SmallVector<Value> results;
    for (auto &s : srcs)
      results.push_back(s[0]);
    rewriter.replaceOp(op, results);
    return success();
  }

  void reduceAcrossWarps(ConversionPatternRewriter &rewriter, ReduceOp op,
                         const LinearLayout &out,
                         ArrayRef<unsigned> axisWarpBits,
                         SmallVector<SmallVector<Value>> &acc) const {
    Location loc = op.getLoc();
    int64_t numElems = 1;
    for (int64_t s : out.shape)
      numElems *= s;
    int64_t slots = int64_t(1) << axisWarpBits.size();
    SmallVector<int64_t> strides = rowMajorStrides(out.shape);
    // The warp index along the axis, from the warp id's axis bits.
    Value warp = warpId(rewriter, loc);
    Value axisWarp = constI32(rewriter, loc, 0);
    for (auto [i, bit] : llvm::enumerate(axisWarpBits)) {
      Value b = arith::AndIOp::create(
          rewriter, loc,
          arith::ShRUIOp::create(rewriter, loc, warp, constI32(rewriter, loc, bit)),
          constI32(rewriter, loc, 1));
      axisWarp = arith::OrIOp::create(
          rewriter, loc, axisWarp,
          arith::ShLIOp::create(rewriter, loc, b, constI32(rewriter, loc, i)));
    }
    SmallVector<Value> threadCoord = threadCoords(rewriter, loc, out);
    Value threadElem = constI32(rewriter, loc, 0);
    for (unsigned d = 0; d < out.getRank(); ++d)
      threadElem = arith::AddIOp::create(
          rewriter, loc, threadElem,
          arith::MulIOp::create(rewriter, loc, threadCoord[d],
                                constI32(rewriter, loc, strides[d])));
    Value base = sharedBase(rewriter, loc);
    size_t n = acc.front().size();
    int64_t regionBytes = 0;
    SmallVector<int64_t> regionOffsets;
    for (size_t k = 0; k < n; ++k) {
      regionOffsets.push_back(regionBytes);
      int64_t bytes = numElems * slots * storageBytes(acc.front()[k].getType());
      regionBytes += (bytes + 15) / 16 * 16;
    }
    state.needShared(rewriter, regionBytes);
    auto slotAddress = [&](size_t k, int64_t reg, Value slot) -> Value {
      SmallVector<int64_t, 4> rc = out.regCoord(reg);
      int64_t constElem = 0;
      for (unsigned d = 0; d < out.getRank(); ++d)
        constElem += rc[d] * strides[d];
      Value elem = arith::AddIOp::create(rewriter, loc, threadElem,
                                         constI32(rewriter, loc, constElem));
      Value index = arith::AddIOp::create(
          rewriter, loc,
          arith::MulIOp::create(rewriter, loc, elem,
                                constI32(rewriter, loc, slots)),
          slot);
      Type t = acc.front()[k].getType();
      Type mem = t.isInteger(1) ? rewriter.getI8Type() : t;
      Value region = LLVM::GEPOp::create(
          rewriter, loc, base.getType(), rewriter.getI8Type(), base,
          ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(regionOffsets[k])});
      return LLVM::GEPOp::create(rewriter, loc, base.getType(), mem, region,
                                 ValueRange{index});
    };
    barrier(rewriter, loc);
    for (size_t k = 0; k < n; ++k)
      for (int64_t r = 0; r < out.getNumRegs(); ++r) {
        Value v = acc[r][k];
        if (v.getType().isInteger(1))
          v = arith::ExtUIOp::create(rewriter, loc, rewriter.getI8Type(), v);
        LLVM::StoreOp::create(rewriter, loc, v, slotAddress(k, r, axisWarp));
      }
    barrier(rewriter, loc);
    for (int64_t r = 0; r < out.getNumRegs(); ++r) {
      SmallVector<Value> total;
      for (int64_t s = 0; s < slots; ++s) {
        SmallVector<Value> part;
        for (size_t k = 0; k < n; ++k) {
          Type t = acc[r][k].getType();
          Type mem = t.isInteger(1) ? rewriter.getI8Type() : t;
          Value v = LLVM::LoadOp::create(
              rewriter, loc, mem,
              slotAddress(k, r, constI32(rewriter, loc, s)));
          if (mem != t)
            v = arith::TruncIOp::create(rewriter, loc, t, v);
          part.push_back(v);
        }
        total = total.empty() ? part
                              : applyCombiner(rewriter, loc, op.getCombiner(),
                                              total, part);
      }
      acc[r] = total;
    }
  }
};

/// Scans through shared memory: the tile is written out, each line along
/// `axis` is scanned sequentially by one thread, and read back.
struct ScanPattern : StatefulPattern<ScanOp> {
  using StatefulPattern::StatefulPattern;

  LogicalResult
  matchAndRewrite(ScanOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    unsigned axis = op.getAxis();
    auto type = cast<RankedTensorType>(op.getSrcs()[0].getType());
    FailureOr<LinearLayout> layout = toLinearLayout(type);
    if (failed(layout))
      return failure();
    ArrayRef<int64_t> shape = type.getShape();
    SmallVector<int64_t> strides = rowMajorStrides(shape);
    int64_t numElems = type.getNumElements();
    int64_t len = shape[axis];
    int64_t numLines = numElems / len;
    Value base = sharedBase(rewriter, loc);
    SmallVector<Value> regions;
    SmallVector<Type> elemTypes;
    int64_t bytes = 0;
    for (Value src : op.getSrcs()) {
      Type t = cast<RankedTensorType>(src.getType()).getElementType();
      elemTypes.push_back(t);
      regions.push_back(LLVM::GEPOp::create(
          rewriter, loc, base.getType(), rewriter.getI8Type(), base,
          ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(bytes)}));
      bytes += (numElems * storageBytes(t) + 15) / 16 * 16;
    }
    state.needShared(rewriter, bytes);
    barrier(rewriter, loc);
    for (auto [k, src] : llvm::enumerate(adaptor.getSrcs()))
      storeShared(rewriter, loc, regions[k],
                  unpackVector(rewriter, loc, src), elemTypes[k], *layout,
                  strides);
    barrier(rewriter, loc);

    // for (line = tid; line < numLines; line += threads): scan the line.
    Value tid = threadIdX(rewriter, loc);
    Value threads = constI32(rewriter, loc, state.numWarps * 32);
    auto lines = scf::ForOp::create(rewriter, loc, tid,
                                    constI32(rewriter, loc, numLines), threads);
    {
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPointToStart(lines.getBody());
      Value line = lines.getInductionVar();
      // Row-major decomposition of `line` over the dimensions but `axis`.
      Value offset = constI32(rewriter, loc, 0), rest = line;
      for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
        if (static_cast<unsigned>(d) == axis)
          continue;
        Value ext = constI32(rewriter, loc, shape[d]);
        Value c = arith::RemUIOp::create(rewriter, loc, rest, ext);
        rest = arith::DivUIOp::create(rewriter, loc, rest, ext);
        offset = arith::AddIOp::create(
            rewriter, loc, offset,
            arith::MulIOp::create(rewriter, loc, c,
                                  constI32(rewriter, loc, strides[d])));
      }
      auto addrOf = [&](OpBuilder &b, size_t k, Value i) -> Value {
        Value pos = arith::AddIOp::create(
            b, loc, offset,
            arith::MulIOp::create(b, loc, i, constI32(b, loc, strides[axis])));
        Type mem = elemTypes[k].isInteger(1) ? b.getI8Type() : elemTypes[k];
        return LLVM::GEPOp::create(b, loc, base.getType(), mem, regions[k],
                                   ValueRange{pos});
      };
      auto load = [&](OpBuilder &b, size_t k, Value i) -> Value {
        Type t = elemTypes[k];
        Type mem = t.isInteger(1) ? b.getI8Type() : t;
        Value v = LLVM::LoadOp::create(b, loc, mem, addrOf(b, k, i));
        return mem == t ? v : arith::TruncIOp::create(b, loc, t, v).getResult();
      };
      auto store = [&](OpBuilder &b, size_t k, Value i, Value v) {
        if (v.getType().isInteger(1))
          v = arith::ExtUIOp::create(b, loc, b.getI8Type(), v);
        LLVM::StoreOp::create(b, loc, v, addrOf(b, k, i));
      };
      bool reverse = op.getReverse();
      auto position = [&](OpBuilder &b, Value i) -> Value {
        return reverse ? arith::SubIOp::create(b, loc, constI32(b, loc, len - 1),
                                               i)
                             .getResult()
                       : i;
      };
      SmallVector<Value> first;
      Value zero = constI32(rewriter, loc, 0);
      for (size_t k = 0; k < elemTypes.size(); ++k)
        first.push_back(load(rewriter, k, position(rewriter, zero)));
      auto steps = scf::ForOp::create(
          rewriter, loc, constI32(rewriter, loc, 1), constI32(rewriter, loc, len),
          constI32(rewriter, loc, 1), first,
          [&](OpBuilder &b, Location l, Value i, ValueRange carried) {
            Value p = position(b, i);
            SmallVector<Value> next;
            for (size_t k = 0; k < elemTypes.size(); ++k)
              next.push_back(load(b, k, p));
            SmallVector<Value> combined =
                applyCombiner(b, l, op.getCombiner(), carried, next);
            for (size_t k = 0; k < elemTypes.size(); ++k)
              store(b, k, p, combined[k]);
            scf::YieldOp::create(b, l, combined);
          });
      (void)steps;
    }
    barrier(rewriter, loc);
    SmallVector<Value> results;
    for (auto [k, r] : llvm::enumerate(op.getResults())) {
      Type vecType = getTypeConverter()->convertType(r.getType());
      results.push_back(packVector(
          rewriter, loc, vecType,
          loadShared(rewriter, loc, regions[k], elemTypes[k], *layout,
                     strides)));
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mlir::tile::populateTileToGpuReducePatterns(TypeConverter &converter,
                                                 RewritePatternSet &patterns,
                                                 GpuLoweringState &state) {
  patterns.add<ReducePattern, ScanPattern>(converter, patterns.getContext(),
                                           state);
}
