//===- TileToGpuTma.cpp - tilegpu mbarrier and TMA ops to nvvm ------------===//
//
// Patterns of convert-tile-to-gpu for the mbarrier and TMA ops. Barrier
// `index` of a !tilegpu.mbarriers is the 8-byte object index * 8 bytes into
// its address. Who executes what (every thread of the block runs each op;
// in a warp-specialized region, "thread 0" is the region's first thread):
// - mbarrier_init: thread 0 initializes, then fence.mbarrier_init and a
//   block barrier, so every thread (and the TMA unit) sees it initialized
//   (once after a run of inits);
// - mbarrier_arrive_expect_tx, tma_load: thread 0 alone (one arrival, one
//   copy per box: a block of several swizzled panels is one box each; a
//   copy shared by a cluster's CTAs issues this CTA's panels, multicast);
// - mbarrier_arrive: every thread arrives (init's count counts threads);
//   with a `cta`, on that CTA's barrier of the cluster (mapa);
// - mbarrier_inval: thread 0 (the caller puts barriers around it);
// - mbarrier_wait: every thread loops on try_wait.parity (the NVVM op is
//   that loop);
// - tma_store: every thread fences its shared writes for the async proxy,
//   a barrier, thread 0 stores and waits until the store has read the
//   buffer (bulk group), a barrier: the buffer may be rewritten afterwards;
// - bulk_reduce_add: per warpgroup, its first thread waits until its last
//   reduction read the warpgroup's part of the buffer, a barrier of the
//   warpgroup (named, 128 threads), every thread writes its elements, the
//   fence, the barrier again, the first thread issues one reduction per
//   box and commits them as a bulk group; bulk_wait: every thread waits
//   for its groups, then a barrier.
//
//===----------------------------------------------------------------------===//
#include "compiler/gpu/TileToGpuCommon.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// try_wait.parity's suspend-time hint (ns) between retries.
constexpr int64_t kWaitSuspendNs = 10'000'000;

/// The address of barrier `index` of the converted `barriers`.
Value barrierAddress(OpBuilder &b, Location loc, Value barriers, Value index) {
  return LLVM::GEPOp::create(b, loc, barriers.getType(), b.getI64Type(),
                             barriers, ValueRange{index});
}

/// The type of a shared::cluster address (another CTA's shared memory).
LLVM::LLVMPointerType sharedClusterPointer(MLIRContext *ctx) {
  return LLVM::LLVMPointerType::get(
      ctx, static_cast<unsigned>(NVVM::NVVMMemorySpace::SharedCluster));
}

/// Runs `body` on thread 0 of the block only (of its warp-specialized
/// region: the producer's copies are issued by the producer).
void onThreadZero(OpBuilder &b, Location loc, function_ref<void()> body) {
  Value first = isIssuingThread(b, loc);
  auto ifOp = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  body();
}

/// The generic address of the tensor-map parameter `map` stands for: the
/// kernel entry casts the !llvm.ptr parameter to the map type (as it
/// rebuilds arrays from their parts), and the patterns look through it.
FailureOr<Value> tensorMapAddress(Operation *op, Value map) {
  auto cast = map.getDefiningOp<UnrealizedConversionCastOp>();
  if (!cast || cast.getNumOperands() != 1 ||
      !isa<LLVM::LLVMPointerType>(cast.getOperand(0).getType()))
    return op->emitOpError("needs a tensor map that is a kernel argument");
  return cast.getOperand(0);
}

/// Whether the next op of `op`'s block with side effects is another
/// mbarrier_init: a run of inits (a ring's full and empty barriers) then
/// needs one fence and one block barrier, after its last init.
static bool anotherInitFollows(Operation *op) {
  for (Operation *next = op->getNextNode(); next; next = next->getNextNode()) {
    if (isa<tilegpu::MBarrierInitOp>(next))
      return true;
    if (!isMemoryEffectFree(next))
      return false;
  }
  return false;
}

struct MBarrierInitPattern : OpConversionPattern<tilegpu::MBarrierInitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tilegpu::MBarrierInitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    bool lastOfRun = !anotherInitFollows(op);
    onThreadZero(rewriter, loc, [&] {
      NVVM::MBarrierInitOp::create(rewriter, loc,
                                   barrierAddress(rewriter, loc,
                                                  adaptor.getBarriers(),
                                                  adaptor.getIndex()),
                                   adaptor.getCount(), /*predicate=*/Value());
      if (lastOfRun)
        NVVM::FenceMbarrierInitOp::create(rewriter, loc);
    });
    if (lastOfRun)
      barrier(rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }
};

struct MBarrierExpectTxPattern
    : OpConversionPattern<tilegpu::MBarrierExpectTxOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tilegpu::MBarrierExpectTxOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    onThreadZero(rewriter, loc, [&] {
      NVVM::MBarrierArriveExpectTxOp::create(
          rewriter, loc, /*res=*/Type(),
          barrierAddress(rewriter, loc, adaptor.getBarriers(),
                         adaptor.getIndex()),
          adaptor.getBytes(), NVVM::MemScopeKind::CTA, /*relaxed=*/false,
          /*predicate=*/Value());
    });
    rewriter.eraseOp(op);
    return success();
  }
};

struct MBarrierArrivePattern : OpConversionPattern<tilegpu::MBarrierArriveOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tilegpu::MBarrierArriveOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value bar = barrierAddress(rewriter, loc, adaptor.getBarriers(),
                               adaptor.getIndex());
    if (!adaptor.getCta()) {
      NVVM::MBarrierArriveOp::create(rewriter, loc, /*res=*/Type(), bar,
                                     /*count=*/Value());
      rewriter.eraseOp(op);
      return success();
    }
    // The same barrier in the shared memory of CTA `cta` of the cluster.
    // Release at CTA scope, as CUTLASS's ClusterBarrier::arrive(cta): what
    // is released is a slot this thread's wgmmas finished reading (waited
    // for), and .release.cluster costs a MEMBAR.ALL.GPU before every arrive
    // (ncu, H100: 43% of the clustered matmul's stalls).
    Value remote = NVVM::MapaOp::create(
        rewriter, loc, sharedClusterPointer(rewriter.getContext()), bar,
        adaptor.getCta());
    NVVM::MBarrierArriveOp::create(rewriter, loc, /*res=*/Type(), remote,
                                   /*count=*/Value(), NVVM::MemScopeKind::CTA,
                                   /*relaxed=*/false);
    rewriter.eraseOp(op);
    return success();
  }
};

struct MBarrierInvalPattern : OpConversionPattern<tilegpu::MBarrierInvalOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tilegpu::MBarrierInvalOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    onThreadZero(rewriter, loc, [&] {
      NVVM::MBarrierInvalOp::create(rewriter, loc,
                                    barrierAddress(rewriter, loc,
                                                   adaptor.getBarriers(),
                                                   adaptor.getIndex()));
    });
    rewriter.eraseOp(op);
    return success();
  }
};

struct MBarrierWaitPattern : OpConversionPattern<tilegpu::MBarrierWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tilegpu::MBarrierWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    rewriter.replaceOpWithNewOp<NVVM::MBarrierTryWaitParityOp>(
        op,
        barrierAddress(rewriter, loc, adaptor.getBarriers(),
                       adaptor.getIndex()),
        adaptor.getParity(), constI32(rewriter, loc, kWaitSuspendNs));
    return success();
  }
};

/// cp.async.bulk.tensor into the block's own shared memory, through its
/// shared::cluster address (what PTX 8.0 names; a block is its own
/// cluster). Both tilegpu and PTX order coordinates innermost first.
struct TmaLoadPattern : OpConversionPattern<tilegpu::TmaLoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tilegpu::TmaLoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<Value> map = tensorMapAddress(op, op.getMap());
    if (failed(map))
      return failure();
    Location loc = op.getLoc();
    tilegpu::SharedBufferType dstType = op.getDst().getType();
    int64_t width = op.getMap().getType().getBox().back();
    int64_t panels = dstType.getCols() / width;
    int64_t panelBytes = dstType.getRows() * width * dstType.getElementBytes();
    // In a cluster, whether the copy is shared with other CTAs (its mask
    // names more than this one): then this CTA issues its panels only.
    Value shared;
    if (Value mask = adaptor.getCtaMask()) {
      Value self = arith::ShLIOp::create(
          rewriter, loc, constI32(rewriter, loc, 1), adaptor.getClusterRank());
      Value wide =
          arith::ExtUIOp::create(rewriter, loc, rewriter.getI32Type(), mask);
      shared = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::ne,
                                     wide, self);
    }
    onThreadZero(rewriter, loc, [&] {
      Value bar = barrierAddress(rewriter, loc, adaptor.getBarriers(),
                                 adaptor.getIndex());
      for (int64_t p = 0; p < panels; ++p) {
        // Panel p: the box `p * width` elements further along the inner
        // dimension, `p * panelBytes` into the block.
        Value panel = adaptor.getDst();
        SmallVector<Value> coords(adaptor.getCoords());
        if (p) {
          panel = LLVM::GEPOp::create(
              rewriter, loc, panel.getType(), rewriter.getI8Type(), panel,
              ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(p * panelBytes)});
          coords[0] = arith::AddIOp::create(rewriter, loc, coords[0],
                                            constI32(rewriter, loc, p * width));
        }
        Value dst = LLVM::AddrSpaceCastOp::create(
            rewriter, loc, sharedClusterPointer(rewriter.getContext()), panel);
        auto copy = [&](Value multicastMask) {
          NVVM::CpAsyncBulkTensorGlobalToSharedClusterOp::create(
              rewriter, loc, dst, *map, coords, bar,
              /*im2colOffsets=*/ValueRange(), multicastMask,
              /*l2CacheHint=*/Value(), NVVM::TMALoadMode::TILE,
              /*isCTAOnly=*/false, /*group=*/nullptr, /*predicate=*/Value());
        };
        if (!shared) {
          copy(Value());
          continue;
        }
        // A shared panel is issued by its owner, multicast; a copy this
        // CTA alone reads is the plain one (the .multicast::cluster form
        // with a mask of one CTA is what CUTLASS avoids too: it picks
        // SM90_TMA_LOAD for an operand its cluster does not share).
        int64_t owner = p % *op.getClusterSize();
        Value mine = arith::CmpIOp::create(
            rewriter, loc, arith::CmpIPredicate::eq, adaptor.getClusterRank(),
            constI32(rewriter, loc, owner));
        auto ifShared = scf::IfOp::create(rewriter, loc, shared,
                                          /*withElseRegion=*/true);
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPoint(ifShared.elseBlock()->getTerminator());
        copy(Value());
        rewriter.setInsertionPoint(ifShared.thenBlock()->getTerminator());
        auto ifMine = scf::IfOp::create(rewriter, loc, mine,
                                        /*withElseRegion=*/false);
        rewriter.setInsertionPoint(ifMine.thenBlock()->getTerminator());
        copy(adaptor.getCtaMask());
      }
    });
    rewriter.eraseOp(op);
    return success();
  }
};

struct TmaStorePattern : OpConversionPattern<tilegpu::TmaStoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tilegpu::TmaStoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<Value> map = tensorMapAddress(op, op.getMap());
    if (failed(map))
      return failure();
    Location loc = op.getLoc();
    // The threads' writes to the buffer, visible to the TMA unit.
    NVVM::FenceProxyOp::create(
        rewriter, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(rewriter.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    barrier(rewriter, loc);
    onThreadZero(rewriter, loc, [&] {
      NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
          rewriter, loc, *map, adaptor.getSrc(), adaptor.getCoords(),
          /*l2CacheHint=*/Value(), NVVM::TMAStoreMode::TILE,
          /*predicate=*/Value());
      NVVM::CpAsyncBulkCommitGroupOp::create(rewriter, loc);
      NVVM::CpAsyncBulkWaitGroupOp::create(rewriter, loc, /*group=*/0,
                                           /*read=*/rewriter.getUnitAttr());
    });
    barrier(rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }
};

/// Named barriers of bulk_reduce_add: warpgroup g waits on
/// kBulkReduceBarrier + g (0 is the block's, 1 the consumers', 2 the
/// producer's, 3 and 4 the ping-pong turns).
constexpr int32_t kBulkReduceBarrier = 5;

/// Per warpgroup: wait until the last bulk copy read its part of the
/// buffer, barrier, write its rows as swizzled boxes, fence, barrier, and
/// one thread issues a bulk tensor copy per box: a reduction (add) for
/// bulk_reduce_add, a store for bulk_store.
template <typename BulkOp>
struct BulkCopyPattern : OpConversionPattern<BulkOp> {
  using OpConversionPattern<BulkOp>::OpConversionPattern;
  using OpAdaptor = typename BulkOp::Adaptor;
  LogicalResult
  matchAndRewrite(BulkOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    FailureOr<Value> map = tensorMapAddress(op, op.getMap());
    if (failed(map))
      return failure();
    auto type = cast<RankedTensorType>(op.getValue().getType());
    FailureOr<LinearLayout> layout = toLinearLayout(type);
    auto mma = dyn_cast_or_null<MmaLayoutAttr>(type.getEncoding());
    int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
    if (failed(layout) || !mma || mma.getWarpsPerCTA()[1] != 1 ||
        16 * int64_t(mma.getWarpsPerCTA()[0]) != rows || rows % 64)
      return op.emitOpError("needs a value whose warpgroups hold 64 rows each "
                            "(a warpgroup mma's accumulator)");
    Location loc = op.getLoc();
    auto c = [&](int64_t v) { return constI32(rewriter, loc, v); };
    bool innerRows = op.getInnerAxis() == 0;
    // Each warpgroup's part: its 64 rows, as boxes of 32 inner elements
    // (128-byte rows) by `other` outer ones.
    // A box row is 128 bytes: `boxInner` elements.
    int64_t elemBytes = type.getElementTypeBitWidth() / 8;
    int64_t boxInner = 128 / elemBytes;
    int64_t inner = innerRows ? 64 : cols, other = innerRows ? cols : 64;
    int64_t partBytes = 64 * cols * elemBytes;
    Value group =
        arith::DivUIOp::create(rewriter, loc, warpId(rewriter, loc), c(4));
    Value issuing = arith::CmpIOp::create(
        rewriter, loc, arith::CmpIPredicate::eq,
        arith::RemUIOp::create(rewriter, loc, threadIdX(rewriter, loc), c(128)),
        c(0));
    auto onIssuing = [&](function_ref<void()> body) {
      auto ifOp = scf::IfOp::create(rewriter, loc, issuing, false);
      OpBuilder::InsertionGuard guard(rewriter);
      rewriter.setInsertionPoint(ifOp.thenBlock()->getTerminator());
      body();
    };
    auto groupBarrier = [&] {
      NVVM::BarrierOp::create(
          rewriter, loc, TypeRange{},
          arith::AddIOp::create(rewriter, loc, group, c(kBulkReduceBarrier)),
          c(128), {}, Value());
    };
    onIssuing([&] {
      NVVM::CpAsyncBulkWaitGroupOp::create(rewriter, loc, /*group=*/0,
                                           /*read=*/rewriter.getUnitAttr());
    });
    groupBarrier();
    Value part = LLVM::GEPOp::create(
        rewriter, loc, adaptor.getBuffer().getType(), rewriter.getI8Type(),
        adaptor.getBuffer(),
        ValueRange{arith::MulIOp::create(rewriter, loc, group, c(partBytes))});
    // Element (row, col): in the warpgroup's part, the inner index along
    // the panels' columns, the outer one along their rows.
    int64_t v = innerRows ? 1 : std::min<int64_t>(getContiguity(*layout, 1), 4);
    storeSwizzled(
        rewriter, loc, part, unpackVector(rewriter, loc, adaptor.getValue()),
        type.getElementType(), *layout, v, other, 128,
        [&](Value row, Value col) {
          Value inGroup = arith::AndIOp::create(rewriter, loc, row, c(63));
          return innerRows ? std::pair(col, inGroup) : std::pair(inGroup, col);
        },
        // A reduction runs every iteration of its loop: its addresses are
        // derived here, not held across the loop.
        /*inPlace=*/std::is_same_v<BulkOp, tilegpu::BulkReduceAddOp>);
    NVVM::FenceProxyOp::create(
        rewriter, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(rewriter.getContext(),
                                   NVVM::SharedSpace::shared_cta));
    groupBarrier();
    onIssuing([&] {
      Value first = arith::MulIOp::create(rewriter, loc, group, c(64));
      for (int64_t box = 0; box < inner / boxInner; ++box) {
        SmallVector<Value> coords(adaptor.getCoords());
        int64_t along = box * boxInner;
        coords[0] = arith::AddIOp::create(
            rewriter, loc, coords[0],
            innerRows ? arith::AddIOp::create(rewriter, loc, first, c(along))
                            .getResult()
                      : c(along));
        int64_t outer = op.getOuterDim();
        if (!innerRows)
          coords[outer] =
              arith::AddIOp::create(rewriter, loc, coords[outer], first);
        Value src = LLVM::GEPOp::create(
            rewriter, loc, part.getType(), rewriter.getI8Type(), part,
            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(box * other * 128)});
        if constexpr (std::is_same_v<BulkOp, tilegpu::BulkStoreOp>)
          NVVM::CpAsyncBulkTensorSharedCTAToGlobalOp::create(
              rewriter, loc, *map, src, coords, /*l2CacheHint=*/Value(),
              NVVM::TMAStoreMode::TILE, /*predicate=*/Value());
        else
          NVVM::CpAsyncBulkTensorReduceOp::create(
              rewriter, loc, *map, src, NVVM::TMAReduxKind::ADD,
              NVVM::TMAStoreMode::TILE, coords, /*l2CacheHint=*/Value());
      }
      NVVM::CpAsyncBulkCommitGroupOp::create(rewriter, loc);
    });
    rewriter.eraseOp(op);
    return success();
  }
};

struct BulkWaitPattern : OpConversionPattern<tilegpu::BulkWaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(tilegpu::BulkWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    NVVM::CpAsyncBulkWaitGroupOp::create(rewriter, op.getLoc(), /*group=*/0,
                                         op.getReadAttr());
    barrier(rewriter, op.getLoc());
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tile::populateTileGpuTmaPatterns(TypeConverter &converter,
                                            RewritePatternSet &patterns) {
  patterns
      .add<MBarrierInitPattern, MBarrierExpectTxPattern, MBarrierArrivePattern,
           MBarrierInvalPattern, MBarrierWaitPattern, TmaLoadPattern,
           TmaStorePattern, BulkCopyPattern<tilegpu::BulkReduceAddOp>,
           BulkCopyPattern<tilegpu::BulkStoreOp>, BulkWaitPattern>(
          converter, patterns.getContext());
}
