//===- TileToGpuAsync.cpp - tilegpu ops to nvvm ---------------------------===//
//
// Patterns of convert-tile-to-gpu for what tile-pipeline-mma wrote: shared
// buffers become addresses in the shared window at their allocated
// offsets, tilegpu.slot a byte offset into a ring, async copies cp.async
// (16 bytes, zero-filled out of bounds) into the buffer's layout, groups
// and waits cp.async.commit_group / wait_group, tilegpu.mma wgmma (both
// operands shared: TileToGpuWgmma.cpp) or ldmatrix + mma.sync
// (TileToGpuMma.cpp), and tilegpu.wait_mma a wgmma.wait_group that passes
// the accumulators through; tilegpu.stage_layout writes a tile into a
// buffer in one layout and reads it back in another.
//
//===----------------------------------------------------------------------===//
#include "compiler/gpu/TileToGpuCommon.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// `offset` bytes into the shared window; the offset comes from
/// tile-allocate-shared.
template <typename AllocOp> struct AllocPattern : OpConversionPattern<AllocOp> {
  using OpConversionPattern<AllocOp>::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AllocOp op, typename AllocOp::Adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<int64_t> offset = op.getOffset();
    if (!offset)
      return op.emitOpError("has no offset; run tile-allocate-shared first");
    Value window = sharedWindow(rewriter, op.getLoc());
    rewriter.replaceOpWithNewOp<LLVM::GEPOp>(
        op, window.getType(), rewriter.getI8Type(), window,
        ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(*offset)});
    return success();
  }
};

struct SlotPattern : OpConversionPattern<tilegpu::SlotOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tilegpu::SlotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value bytes = arith::MulIOp::create(
        rewriter, loc, adaptor.getIndex(),
        constI32(rewriter, loc, op.getType().getSlotBytes()));
    rewriter.replaceOpWithNewOp<LLVM::GEPOp>(
        op, adaptor.getRing().getType(), rewriter.getI8Type(),
        adaptor.getRing(), ValueRange{bytes});
    return success();
  }
};

/// Through the buffer's padded rows: writes in the value's layout, reads in
/// the result's, between block barriers.
struct StageLayoutPattern : OpConversionPattern<tilegpu::StageLayoutOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tilegpu::StageLayoutOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto fromType = cast<RankedTensorType>(op.getValue().getType());
    auto toType = cast<RankedTensorType>(op.getType());
    FailureOr<LinearLayout> from = toLinearLayout(fromType);
    FailureOr<LinearLayout> to = toLinearLayout(toType);
    if (failed(from) || failed(to))
      return op.emitOpError("value has no layout; run tile-map-threads");
    tilegpu::SharedBufferType buffer = op.getBuffer().getType();
    SmallVector<int64_t> strides{buffer.getRowPitch(), 1};
    Type elemType = fromType.getElementType();
    Value base = adaptor.getBuffer();
    barrier(rewriter, loc);
    storeShared(rewriter, loc, base,
                unpackVector(rewriter, loc, adaptor.getValue()), elemType,
                *from, strides);
    barrier(rewriter, loc);
    SmallVector<Value> elems =
        loadShared(rewriter, loc, base, elemType, *to, strides);
    barrier(rewriter, loc);
    rewriter.replaceOp(op, packVector(rewriter, loc,
                                      getTypeConverter()->convertType(toType),
                                      elems));
    return success();
  }
};

/// Each thread's elements of the result from the buffer's rows.
struct ReadSharedPattern : OpConversionPattern<tilegpu::ReadSharedOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tilegpu::ReadSharedOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    FailureOr<LinearLayout> layout = toLinearLayout(type);
    if (failed(layout))
      return op.emitOpError("result has no layout; run tile-map-threads");
    SmallVector<Value> elems = loadShared(
        rewriter, op.getLoc(), adaptor.getBuffer(), type.getElementType(),
        *layout, {op.getBuffer().getType().getRowPitch(), 1});
    rewriter.replaceOp(op, packVector(rewriter, op.getLoc(),
                                      getTypeConverter()->convertType(type),
                                      elems));
    return success();
  }
};

/// Each thread's elements into the swizzled panels of the buffer (the
/// chunk of row r, column c at c / 8 ^ r % 8 for 128-byte rows), as many
/// contiguous ones per store as stay within a 16-byte chunk; then the
/// fence that makes generic-proxy writes visible to wgmma, and a barrier
/// (a named one of the role inside a warp-specialized region) unless the
/// op is `unsynchronized`.
struct StageOperandPattern : OpConversionPattern<tilegpu::StageOperandOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tilegpu::StageOperandOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getValue().getType());
    FailureOr<LinearLayout> layout = toLinearLayout(type);
    if (failed(layout))
      return op.emitOpError("value has no layout; run tile-map-threads");
    tilegpu::SharedBufferType buffer = op.getBuffer().getType();
    Type elemType = type.getElementType();
    int64_t v = std::min<int64_t>(getContiguity(*layout, 1),
                                  16 / storageBytes(elemType));
    // Staged every iteration: addresses derived here, not held across the
    // loop.
    storeSwizzled(rewriter, loc, adaptor.getBuffer(),
                  unpackVector(rewriter, loc, adaptor.getValue()), elemType,
                  *layout, v, buffer.getRows(), buffer.getSwizzle(),
                  /*place=*/nullptr, /*inPlace=*/true);
    NVVM::FenceProxyOp::create(
        rewriter, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(rewriter.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    if (!op.getUnsynchronized())
      barrier(rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }
};

/// 16-byte cp.async (zero-filled out of bounds) of each run of the block
/// into the buffer, laid out as its type says (swizzled panels or padded
/// rows): the thread copies the runs a tile.load of the block would give it.
struct AsyncCopyPattern : OpConversionPattern<tilegpu::AsyncCopyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tilegpu::AsyncCopyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getBlock());
    tilegpu::SharedBufferType dstType = op.getDst().getType();
    FailureOr<LinearLayout> layout = toLinearLayout(type);
    if (failed(layout))
      return op.emitOpError("block has no layout; run tile-map-threads");
    int64_t swizzle = dstType.getSwizzle();
    int64_t stride = dstType.getRowPitch();
    Value base = adaptor.getDst();
    // The block's last two dimensions (others are 1) make the buffer's rows.
    unsigned r0 = type.getRank() - 2, r1 = r0 + 1;
    SmallVector<Value> tc = threadCoords(rewriter, loc, *layout);
    Value threadOff = arith::AddIOp::create(
        rewriter, loc,
        arith::MulIOp::create(rewriter, loc, tc[r0],
                              constI32(rewriter, loc, stride)),
        tc[r1]);
    int64_t rows = type.getDimSize(r0);
    int64_t eb = storageBytes(type.getElementType());
    // Byte offset of element (r, c) of the block in the buffer.
    auto slotOffset = [&](int64_t dr, int64_t dc) -> Value {
      if (!swizzle)
        return arith::MulIOp::create(
            rewriter, loc,
            arith::AddIOp::create(rewriter, loc, threadOff,
                                  constI32(rewriter, loc, dr * stride + dc)),
            constI32(rewriter, loc, eb));
      return swizzledOffset(rewriter, loc,
                            arith::AddIOp::create(rewriter, loc, tc[r0],
                                                  constI32(rewriter, loc, dr)),
                            arith::AddIOp::create(rewriter, loc, tc[r1],
                                                  constI32(rewriter, loc, dc)),
                            rows, eb, swizzle);
    };
    Value full = constI32(rewriter, loc, 16), none = constI32(rewriter, loc, 0);
    if (failed(forEachCopyRun(
            rewriter, op, adaptor.getArray(), adaptor.getIndices(),
            [&](int64_t first, int64_t, Value addr, Value pred) {
              SmallVector<int64_t, 4> rc = layout->regCoord(first);
              Value dst = LLVM::GEPOp::create(
                  rewriter, loc, base.getType(), rewriter.getI8Type(), base,
                  ValueRange{slotOffset(rc[r0], rc[r1])});
              Value size =
                  arith::SelectOp::create(rewriter, loc, pred, full, none);
              NVVM::CpAsyncOp::create(rewriter, loc, dst, addr, 16,
                                      NVVM::LoadCacheModifierKind::CG, size);
            })))
      return failure();
    rewriter.replaceOp(op, constI32(rewriter, loc, 0));
    return success();
  }
};

struct AsyncGroupPattern : OpConversionPattern<tilegpu::AsyncGroupOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tilegpu::AsyncGroupOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    NVVM::CpAsyncCommitGroupOp::create(rewriter, op.getLoc());
    rewriter.replaceOp(op, constI32(rewriter, op.getLoc(), 0));
    return success();
  }
};

struct AsyncWaitPattern : OpConversionPattern<tilegpu::AsyncWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tilegpu::AsyncWaitOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<NVVM::CpAsyncWaitGroupOp>(op, op.getPending());
    return success();
  }
};

struct SharedMmaPattern : StatefulPattern<tilegpu::MmaOp> {
  using StatefulPattern::StatefulPattern;
  LogicalResult
  matchAndRewrite(tilegpu::MmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MmaKind kind = getTensorCoreMmaKind(op.getATileType().getElementType());
    MmaTilingAttr tiling = op.getTilingAttr();
    bool warpgroup = tiling && tiling.isWarpgroup();
    if (warpgroup && op.getASharedBuffer())
      return lowerWarpgroupMma(op, adaptor.getAcc(), adaptor.getA(),
                               adaptor.getB(), rewriter, *getTypeConverter());
    // fp8: wgmma only, A from shared memory or (attention's P) registers.
    if ((kind == MmaKind::F8E4M3 || kind == MmaKind::F8E5M2) && !warpgroup)
      return op.emitOpError()
             << "with fp8 operands needs the sm_90 warpgroup path (A and B "
                "in shared memory, or A in registers)";
    TensorCoreOperands in;
    in.op = op;
    in.aType = op.getATileType();
    in.bType = op.getBTileType();
    in.tiling = tiling;
    in.acc = adaptor.getAcc();
    if (auto a = op.getASharedBuffer()) {
      in.aShared = adaptor.getA();
      in.aStride = a.getType().getRowStride();
    } else {
      in.a = adaptor.getA();
    }
    in.bShared = adaptor.getB();
    in.bStride = op.getB().getType().getRowStride();
    in.bSharedTransposed = op.getBTransposed();
    return lowerTensorCoreMma(in, kind, rewriter, *getTypeConverter(), state);
  }
};

/// wgmma.wait_group through an asm statement that takes and returns every
/// f32 register of the accumulators, so that none is read before it.
struct WaitMmaPattern : OpConversionPattern<tilegpu::WaitMmaOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tilegpu::WaitMmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    SmallVector<Value> scalars;
    for (Value acc : adaptor.getAccs())
      llvm::append_range(scalars, unpackVector(rewriter, loc, acc));
    SmallVector<Value> waited =
        waitCarrying(rewriter, loc, scalars, op.getPending());
    SmallVector<Value> results;
    int64_t next = 0;
    for (Value acc : adaptor.getAccs()) {
      auto type = cast<VectorType>(acc.getType());
      results.push_back(packVector(
          rewriter, loc, type,
          ArrayRef<Value>(waited).slice(next, type.getNumElements())));
      next += type.getNumElements();
    }
    rewriter.replaceOp(op, results);
    return success();
  }
};

} // namespace

void mlir::tile::populateTileGpuToNvvmPatterns(TypeConverter &converter,
                                               RewritePatternSet &patterns,
                                               GpuLoweringState &state) {
  MLIRContext *ctx = patterns.getContext();
  patterns.add<AllocPattern<tilegpu::AllocSharedOp>,
               AllocPattern<tilegpu::AllocMBarriersOp>, SlotPattern,
               ReadSharedPattern, AsyncCopyPattern, AsyncGroupPattern,
               AsyncWaitPattern, WaitMmaPattern, StageLayoutPattern,
               StageOperandPattern>(converter, ctx);
  patterns.add<SharedMmaPattern>(converter, ctx, state);
  populateTileGpuTmaPatterns(converter, patterns);
}
