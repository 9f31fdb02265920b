//===- TileStageStores.cpp - mma results stored in 16-byte rows -----------===//
//
// The tile-stage-stores pass. An mma accumulator's layout gives a thread two
// neighbouring elements per row (4 bytes of f16): stored as it is, one warp
// instruction writes 8 rows x 16 bytes, 8 cache lines for 128 bytes, and the
// 128x256 epilogue of a matmul measured about 3.5 us longer per tile than a
// 16-byte-per-thread store on the H200 (issue 17). A `tile.store` of such a
// tile, at the kernel's top level (or its consumers', SharedLiveness's
// steps) after its mma loops, gets its value in
// the loads' blocked layout first (16-byte runs, a warp's 32 runs along one
// row) through a shared buffer of padded rows:
//
//   %stage = tilegpu.alloc_shared : !tilegpu.shared<128x256xf16, row_stride =
//   264> %v = tilegpu.stage_layout %acc through %stage : ... #mma ... -> ...
//   #blocked ... tile.store %c[...], %v
//
// The buffer is the kernel's own (tile-allocate-shared places it), and only
// taken where no buffer is live at the store and it is no larger than the
// buffers that were live together before (the rings of a loop): first fit
// puts it at offset 0, and a kernel's shared memory never grows for it. A batch
// of one (bmm's (1, BM, BN) store of its 2-d accumulator) is staged as the
// 2-d tile, then given its unit dimensions in registers. The 8
// elements of padding per row put the 8 rows one fragment store writes in
// distinct banks.
//
// The consumers of a warp-specialized persistent loop store each output
// tile in the loop's body while the producer refills the ring: their
// store is staged through a buffer allocated before the loop, beside the
// ring, where the kernel's shared memory has room for both (a ring of 3
// slots of 48 KB and 66 KB of buffer; tile-pipeline-mma's epilogue-room
// leaves it). Where it has none, the store goes by TMA through a buffer
// of the loop's body that is dead from a barrier before the store to the
// body's end (a persistent attention's Q at D 128, as FlashAttention-3
// stores O).
//
//===----------------------------------------------------------------------===//
#include "compiler/Passes.h"
#include "compiler/gpu/LinearLayout.h"
#include "compiler/gpu/SharedLiveness.h"
#include "compiler/gpu/TilePipelineMma.h"
#include "compiler/gpu/TileToGpuCommon.h"
#include "dialects/tilegpu/TileGpuDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILESTAGESTORES
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

/// The bytes a buffer allocated at step `at` may take without growing the
/// kernel's shared memory. When no buffer allocated before `at` is still
/// live there, first fit puts the new one at offset 0; the buffers live
/// together at any one step before `at` are disjoint, so the largest such
/// sum is no more than the kernel's end. 0 when one is live, but for
/// mbarriers: they sit below the ring, and the room shrinks by them.
int64_t roomAt(func::FuncOp func, const SharedLiveness &liveness, int64_t at) {
  SmallVector<std::tuple<int64_t, int64_t, int64_t>> ranges;
  // Only mbarriers may still be live at the store (a cluster's, kept until
  // its CTAs part): allocated before the ring (tile-cluster-multicast),
  // they take its first bytes, and the buffer goes past them at the
  // alignment of a swizzled block.
  bool liveAtStore = false;
  int64_t barrierBytes = 0;
  func.walk([&](Operation *op) {
    int64_t bytes = SharedLiveness::getBufferBytes(op);
    if (!bytes)
      return;
    auto [first, last] = liveness.getLiveRange(op);
    if (first >= at)
      return;
    if (last >= at) {
      if (isa<tilegpu::AllocMBarriersOp>(op))
        barrierBytes += bytes;
      else
        liveAtStore = true;
    }
    ranges.push_back({first, last, bytes});
  });
  if (liveAtStore)
    return 0;
  int64_t room = 0;
  for (int64_t step = 0; step < at; ++step) {
    int64_t together = 0;
    for (auto [first, last, bytes] : ranges)
      if (first <= step && step <= last)
        together += bytes;
    room = std::max(room, together);
  }
  if (barrierBytes) // 1024: a swizzled buffer's alignment (TileGpuTypes.td)
    room -= llvm::alignTo(barrierBytes, 1024);
  return std::max<int64_t>(room, 0);
}

/// The 2-d mma-layout tile a store's value `v` is: `v` itself, or (a batch
/// of one, as bmm stores it) a reshape of one adding unit dimensions, maybe
/// behind a truncf. `reshape` and `truncate` get those ops.
Value mmaTileOf(Value v, ReshapeOp &reshape, arith::TruncFOp &truncate) {
  auto type = cast<RankedTensorType>(v.getType());
  if (type.getRank() == 2)
    return isa_and_present<MmaLayoutAttr>(type.getEncoding()) ? v : Value();
  if (!v.hasOneUse())
    return {};
  if ((truncate = v.getDefiningOp<arith::TruncFOp>())) {
    v = truncate.getIn();
    if (!v.hasOneUse())
      return {};
  }
  reshape = v.getDefiningOp<ReshapeOp>();
  if (!reshape)
    return {};
  Value src = reshape.getSrc();
  auto srcType = cast<RankedTensorType>(src.getType());
  ArrayRef<int64_t> shape = type.getShape();
  if (srcType.getRank() != 2 ||
      !isa_and_present<MmaLayoutAttr>(srcType.getEncoding()) ||
      shape.take_back(2) != srcType.getShape() ||
      llvm::any_of(shape.drop_back(2), [](int64_t d) { return d != 1; }))
    return {};
  return src;
}

/// Whether `bytes` more fit in shared memory beside every buffer the
/// kernel has, however they overlap in time.
bool fitsBesideAll(func::FuncOp func, int64_t bytes) {
  func.walk(
      [&](Operation *op) { bytes += SharedLiveness::getBufferBytes(op); });
  return bytes <= pipeline::kMaxSharedBytes;
}

/// The body of a loop that is a step (a persistent loop walking output
/// tiles), whose top-level stores are staged through a buffer allocated
/// before the loop.
Block *loopBodyOf(Operation *step) {
  if (auto whileOp = dyn_cast<scf::WhileOp>(step))
    return whileOp.getAfterBody();
  if (auto forOp = dyn_cast<scf::ForOp>(step))
    return forOp.getBody();
  return nullptr;
}

/// Whether `func` only writes `array`: its stores (and bulk stores through
/// a tensor map of it) are its only uses, so a bulk store's wait need not
/// see the writes land, only the staging buffer read.
bool onlyWritten(func::FuncOp func, BlockArgument array) {
  auto writes = [](Value v) {
    return llvm::all_of(v.getUsers(), [&](Operation *user) {
      auto store = dyn_cast<StoreOp>(user);
      return (store && store.getArray() == v) ||
             isa<tilegpu::BulkStoreOp>(user);
    });
  };
  if (!writes(array))
    return false;
  StringRef name = tilegpu::TensorMapOfAttr::getArgAttrName();
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto of = func.getArgAttrOfType<tilegpu::TensorMapOfAttr>(i, name);
        of && of.getArray() == array.getArgNumber() &&
        !writes(func.getArgument(i)))
      return false;
  return true;
}

/// `store` of the 2-d mma tile `tile` (the stored value, or what a batch
/// of one reshapes) as a TMA bulk store through an unpadded swizzled
/// buffer, when it can be (a kernel array TMA describes, 64 rows per
/// warpgroup, whole 128-byte rows): `reuse`, a buffer of that type, or one
/// of `room` bytes allocated before `at`; the wait for the last copy put
/// after `waitAfter` (or before the end of the store's region).
bool storeByTma(func::FuncOp func, StoreOp store, Value tile,
                arith::TruncFOp truncate, Operation *at, Operation *waitAfter,
                int64_t room, Value reuse = {}) {
  auto tileType = cast<RankedTensorType>(tile.getType());
  auto mma = dyn_cast_or_null<MmaLayoutAttr>(tileType.getEncoding());
  auto array = dyn_cast<BlockArgument>(store.getArray());
  auto storedType = cast<RankedTensorType>(store.getValue().getType());
  Type elemType = storedType.getElementType();
  if (!mma || store.getMemoryOrder() || !array ||
      array.getOwner() != &func.getBody().front() ||
      !func.getArgAttr(array.getArgNumber(), "tile.tma_ok") ||
      !(elemType.isF16() || elemType.isBF16() || elemType.isF32()))
    return false;
  int64_t rows = tileType.getDimSize(0), cols = tileType.getDimSize(1);
  int64_t elemBytes = elemType.getIntOrFloatBitWidth() / 8;
  if (mma.getWarpsPerCTA()[1] != 1 ||
      16 * int64_t(mma.getWarpsPerCTA()[0]) != rows || rows % 64 ||
      (cols * elemBytes) % 128 || cols > 256)
    return false;
  MLIRContext *ctx = func.getContext();
  auto bufferType = tilegpu::SharedBufferType::get(
      ctx, {rows, cols}, elemType, /*slots=*/1, /*swizzle=*/128, 0);
  if (reuse ? reuse.getType() != bufferType : bufferType.getTotalBytes() > room)
    return false;
  // One box per 128-byte panel of a warpgroup's 64 rows (a batch of one:
  // unit extents in front).
  int64_t rank = storedType.getRank();
  SmallVector<int64_t> box(rank, 1);
  box[rank - 2] = 64;
  box[rank - 1] = 128 / elemBytes;
  auto mapType =
      tilegpu::TensorMapType::get(ctx, box, elemType, /*swizzle=*/128);
  FailureOr<Value> map = pipeline::tensorMapArg(func, array, mapType);
  if (failed(map))
    return false;
  Location loc = store.getLoc();
  OpBuilder b(at);
  Value buffer =
      reuse ? reuse
            : tilegpu::AllocSharedOp::create(b, loc, bufferType, IntegerAttr());
  b.setInsertionPoint(store);
  // The block's element coordinates, innermost first.
  ValueRange indices = store.getIndices();
  SmallVector<Value> coords = {
      arith::MulIOp::create(b, loc, indices[rank - 1], constI32(b, loc, cols)),
      arith::MulIOp::create(b, loc, indices[rank - 2], constI32(b, loc, rows))};
  for (int64_t dim = rank - 3; dim >= 0; --dim)
    coords.push_back(indices[dim]);
  auto mmaType = RankedTensorType::get({rows, cols}, elemType, mma);
  if (truncate)
    tile = arith::TruncFOp::create(b, loc, mmaType, tile);
  tilegpu::BulkStoreOp::create(b, loc, tile, buffer, *map, coords,
                               /*inner_axis=*/1, /*outer_dim=*/1);
  if (waitAfter)
    b.setInsertionPointAfter(waitAfter);
  else
    b.setInsertionPoint(store->getBlock()->getTerminator());
  tilegpu::BulkWaitOp::create(b, loc, buffer, onlyWritten(func, array));
  Value stored = store.getValue();
  store.erase();
  // The batch's reshape (and the truncation in front of it) of the tile.
  for (Operation *op = stored.getDefiningOp();
       isa_and_nonnull<ReshapeOp, arith::TruncFOp>(op) && op->use_empty();) {
    Operation *next = op->getOperand(0).getDefiningOp();
    op->erase();
    op = next;
  }
  return true;
}

/// A buffer of `type` that `store`'s loop body refills before it reads it
/// and is done with before the store (a persistent attention's Q, its last
/// wgmma waited for before a barrier): the store's staging may use it until
/// the body ends. Every use of it is in the body: first a TMA copy into
/// it after a block barrier, and a block barrier after its last use.
Value deadBufferAt(func::FuncOp func, StoreOp store,
                   tilegpu::SharedBufferType type) {
  Block *body = store->getBlock();
  Value found;
  func.walk([&](tilegpu::AllocSharedOp alloc) {
    if (found || alloc.getType() != type)
      return;
    SmallVector<Operation *> uses; // the body's ops that use the buffer
    bool inBody = true;
    SmallVector<Value> worklist = {alloc.getResult()};
    while (!worklist.empty() && inBody) {
      Value v = worklist.pop_back_val();
      for (Operation *user : v.getUsers()) {
        Operation *top = body->findAncestorOpInBlock(*user);
        inBody &= top != nullptr;
        if (!top)
          break;
        if (auto slot = dyn_cast<tilegpu::SlotOp>(user))
          worklist.push_back(slot.getResult());
        else
          uses.push_back(top);
      }
    }
    if (!inBody || uses.empty())
      return;
    llvm::sort(
        uses, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    auto copy = dyn_cast<tilegpu::TmaLoadOp>(uses.front());
    if (!copy || !uses.back()->isBeforeInBlock(store))
      return;
    auto barrierBetween = [](Operation *from, Operation *to) {
      for (Operation *op = from->getNextNode(); op && op != to;
           op = op->getNextNode())
        if (isa<gpu::BarrierOp>(op))
          return true;
      return false;
    };
    if (!barrierBetween(&body->front(), copy) &&
        !isa<gpu::BarrierOp>(body->front()))
      return;
    if (barrierBetween(uses.back(), store))
      found = alloc.getResult();
  });
  return found;
}

void stageStores(func::FuncOp func, int numWarps, bool tmaStores) {
  // The stores at the top level of the kernel (or of its consumers), and
  // at the top level of a loop there.
  SmallVector<StoreOp> stores;
  SharedLiveness steps(func);
  for (Operation *step : steps.getSteps()) {
    if (auto store = dyn_cast<StoreOp>(step))
      stores.push_back(store);
    if (Block *body = loopBodyOf(step))
      llvm::append_range(stores, body->getOps<StoreOp>());
  }
  MLIRContext *ctx = func.getContext();
  for (StoreOp store : stores) {
    auto arrayType = cast<ArrayType>(store.getArray().getType());
    ReshapeOp reshape;
    arith::TruncFOp truncate;
    Value tile = mmaTileOf(store.getValue(), reshape, truncate);
    if (!tile || arrayType.getStrides().back() != 1)
      continue;
    auto storedType = cast<RankedTensorType>(store.getValue().getType());
    Type elemType = storedType.getElementType();
    auto tileType = cast<RankedTensorType>(tile.getType());
    ArrayRef<int64_t> shape = tileType.getShape();
    unsigned bits = elemType.getIntOrFloatBitWidth();
    auto mmaType =
        RankedTensorType::get(shape, elemType, tileType.getEncoding());
    auto stagedType = RankedTensorType::get(
        shape, elemType,
        getDefaultBlockedLayout(ctx, shape, 1, bits, numWarps));
    FailureOr<LinearLayout> from = toLinearLayout(mmaType);
    FailureOr<LinearLayout> to = toLinearLayout(stagedType);
    // Worth it only when the blocked runs are longer.
    if (failed(from) || failed(to) ||
        getContiguity(*to, 1) <= getContiguity(*from, 1))
      continue;
    auto bufferType = tilegpu::SharedBufferType::get(
        ctx, shape, elemType, /*slots=*/1,
        /*swizzle=*/0, shape[1] + pipeline::kStageRowPadding);
    // A store in a loop's body: only the consumers' (a persistent loop
    // whose producer refills the ring meanwhile), the buffer allocated
    // before the loop, beside the ring.
    Operation *loop = store->getParentOp();
    bool inLoop = !isa<func::FuncOp>(loop) &&
                  !loop->hasAttr(tilegpu::WarpSpecializedAttr::getAttrName());
    if (inLoop) {
      std::optional<WarpRole> role = warpRoleOf(loop->getParentRegion());
      if (!role || role->producer)
        continue;
    }
    SharedLiveness liveness(func);
    int64_t room = inLoop ? (fitsBesideAll(func, bufferType.getTotalBytes())
                                 ? bufferType.getTotalBytes()
                                 : 0)
                          : roomAt(func, liveness, *liveness.getStep(store));
    // By TMA where it can, in the staging buffer's room (without padding).
    if (tmaStores && !reshape &&
        storeByTma(func, store, tile, /*truncate=*/{},
                   inLoop ? loop : store.getOperation(),
                   inLoop ? loop : nullptr, room))
      continue;
    // A persistent loop's store with no room beside the ring: through a
    // buffer of the body that is dead by then (FlashAttention-3 stores O
    // through Q's), waited for before the body ends.
    if (tmaStores && inLoop && bufferType.getTotalBytes() > room)
      if (Value dead = deadBufferAt(
              func, store,
              tilegpu::SharedBufferType::get(ctx, shape, elemType, 1,
                                             /*swizzle=*/128, 0));
          dead &&
          storeByTma(func, store, tile, truncate, store, nullptr, 0, dead))
        continue;
    if (bufferType.getTotalBytes() > room)
      continue;
    OpBuilder b(inLoop ? loop : store.getOperation());
    Location loc = store.getLoc();
    Value buffer =
        tilegpu::AllocSharedOp::create(b, loc, bufferType, IntegerAttr());
    b.setInsertionPoint(store);
    // A batch of one: truncate the 2-d tile, stage it, then add the unit
    // dimensions in the blocked layout of that shape (the same registers).
    if (truncate)
      tile = arith::TruncFOp::create(b, loc, mmaType, tile);
    Value staged =
        tilegpu::StageLayoutOp::create(b, loc, stagedType, tile, buffer);
    if (reshape) {
      ArrayRef<int64_t> full = storedType.getShape();
      staged = ReshapeOp::create(
          b, loc,
          RankedTensorType::get(full, elemType,
                                getDefaultBlockedLayout(ctx, full,
                                                        full.size() - 1, bits,
                                                        numWarps)),
          staged);
    }
    store.getValueMutable().assign(staged);
    if (truncate && truncate->use_empty())
      truncate.erase();
    if (reshape && reshape->use_empty())
      reshape.erase();
  }
}

struct TileStageStoresPass
    : tile::impl::TileStageStoresBase<TileStageStoresPass> {
  using TileStageStoresBase::TileStageStoresBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto warps = module->getAttrOfType<IntegerAttr>(kNumWarpsAttr);
    if (!warps)
      return;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && func->hasAttr("tile.kernel"))
        stageStores(func, warps.getInt(), tmaStores);
  }
};

} // namespace
