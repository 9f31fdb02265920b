//===- TileToGpuPrefetch.cpp - software pipelining of mma loops -----------===//
//
// In an scf.for that feeds tile.mma from tile.load, loads run ahead of the
// mma. Loads past the last iteration read out of bounds, which the
// predicated lowering turns into no memory traffic (or a harmless in-bounds
// read).
//
// Registers: the loads of iteration i + 1 are issued at the top of
// iteration i (their results carried to the next iteration), so they are in
// flight while the tensor cores work on iteration i. The first iteration's
// loads move in front of the loop.
//
// AsyncCopy (a matmul-shaped loop: one f16/bf16 mma whose A and B are
// 16-byte-vectorizable loads, or an fp8 wgmma of A and B^T blocks): a ring
// of S shared-memory slots. The prologue copies iterations 0..S-2 with
// cp.async; iteration i waits for its slot (cp.async.wait_group S-2), passes
// one barrier (which also retires iteration i-1's reads of the slot about to be
// refilled), copies iteration i+S-1, and runs the mma on slot i % S.
//
//===----------------------------------------------------------------------===//
#include "compiler/TileTiling.h"
#include "compiler/gpu/TileToGpuCommon.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// Collects into `slice` (in body order) the ops of `body` that `v` depends
/// on; false when one of them cannot be re-evaluated for another iteration
/// (it reads memory or a loop-carried value).
bool collectIndexSlice(Value v, scf::ForOp forOp,
                       llvm::SetVector<Operation *> &slice) {
  if (v == forOp.getInductionVar())
    return true;
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() != forOp.getBody();
  Operation *def = v.getDefiningOp();
  if (!forOp->isProperAncestor(def))
    return true;
  if (def->getBlock() != forOp.getBody() || def->getNumRegions() ||
      !isMemoryEffectFree(def) ||
      llvm::any_of(def->getResultTypes(),
                   [](Type t) { return isa<RankedTensorType>(t); }))
    return false;
  for (Value operand : def->getOperands())
    if (!collectIndexSlice(operand, forOp, slice))
      return false;
  slice.insert(def);
  return true;
}

bool writesMemory(Operation *op) {
  bool writes = false;
  op->walk([&](Operation *inner) {
    auto iface = dyn_cast<MemoryEffectOpInterface>(inner);
    if (!iface) {
      writes |= !inner->hasTrait<OpTrait::HasRecursiveMemoryEffects>() &&
                !isa<scf::YieldOp>(inner);
      return;
    }
    writes |= iface.hasEffect<MemoryEffects::Write>();
  });
  return writes;
}

/// Clones `slice` and `load` with the induction variable bound to `iv`.
Value cloneAt(OpBuilder &b, scf::ForOp forOp, ArrayRef<Operation *> slice,
              LoadOp load, Value iv) {
  IRMapping map;
  map.map(forOp.getInductionVar(), iv);
  for (Operation *op : slice)
    b.clone(*op, map);
  return b.clone(*load, map)->getResult(0);
}

/// The 16-byte cp.async a load lowers to, if its accesses are that wide.
bool copiesIn16Bytes(LoadOp load) {
  auto arrayType = cast<ArrayType>(load.getArray().getType());
  auto type = cast<RankedTensorType>(load.getType());
  unsigned rank = arrayType.getRank();
  if (load.getOrder() || rank < 2 || arrayType.getStrides()[rank - 1] != 1 ||
      getMemoryOrder(load) != MemoryOrder::weak)
    return false;
  // A 2-d block, possibly behind unit dimensions: (1, N, D).
  for (unsigned d = 0; d + 2 < rank; ++d)
    if (type.getDimSize(d) != 1)
      return false;
  if (auto pad = load.getPaddingAttr())
    if (auto f = dyn_cast<FloatAttr>(pad); !f || !f.getValue().isZero())
      return false;
  FailureOr<LinearLayout> layout = toLinearLayout(type);
  if (failed(layout))
    return false;
  int64_t eb = storageBytes(type.getElementType());
  int64_t vec = std::min<int64_t>(getContiguity(*layout, rank - 1), 16 / eb);
  int64_t extent = arrayType.getShape()[rank - 1];
  int64_t div =
      ShapedType::isDynamic(extent) ? arrayType.getDivisibility() : extent;
  return vec * eb == 16 && arrayType.getAlignment() % 16 == 0 && div % vec == 0;
}

/// How many slots (2..4) a cp.async ring of `slotBytes` slots gets: as many
/// as fit in about half the shared memory of an SM.
int64_t ringStages(int64_t slotBytes) {
  return std::clamp<int64_t>(110 * 1024 / slotBytes, 2, 4);
}

/// A matmul's wgmma ring: 3-4 slots in up to 192 KB. It serves one block
/// per SM (the accumulators leave registers for one), whose loads the ring
/// hides rather than a second block, and keeps the previous iteration's
/// slot, which its wgmma may still read. Deeper rings measured slower on the
/// H200 (128x256x32 with 8 slots: 494 TFLOP/s; 128x256x64 with 4: 578).
int64_t warpgroupRingStages(int64_t slotBytes) {
  return std::clamp<int64_t>(192 * 1024 / slotBytes, 3, 4);
}

/// The most dynamic shared memory a block can have on sm_80/sm_90.
constexpr int64_t kMaxSharedBytes = 227 * 1024;

/// A ring's slots: `automatic`, unless the num-stages option asks for
/// `requested` (raised to `minimum`, the fewest the ring works with). An
/// explicit request that cannot fit in a block's shared memory is an error
/// at `mma` rather than a silent change (an autotuner skips that config).
FailureOr<int64_t> ringSlots(MmaOp mma, int64_t automatic, int64_t requested,
                             int64_t minimum, int64_t slotBytes) {
  if (requested <= 0)
    return automatic;
  int64_t slots = std::max(requested, minimum);
  if (slots * slotBytes > kMaxSharedBytes)
    return mma.emitError() << "num_stages=" << requested << " needs " << slots
                           << " shared-memory slots of " << slotBytes
                           << " bytes for this mma loop, more than the "
                           << kMaxSharedBytes / 1024
                           << " KB a block can have; use fewer stages or "
                              "smaller tiles";
  return slots;
}

/// The copies and waits of a `stages`-slot cp.async ring around `forOp`,
/// the same for the pipelines below. `copy(b, iv, ahead, slot)` issues and
/// commits the copies of iteration `iv` (`ahead` iterations early, into
/// `slot`; -1 for the slot the body computes). With D = S-1 iterations in
/// flight, iterations 0..D-1 go to slots 0..D-1 before the loop; the body
/// waits for its own slot, synchronizes once and copies iteration iv + D
/// (the last call of `copy`); nothing is in flight, or being read, after
/// the loop.
///
/// Warpgroup mmas (wgmma) read the ring through the async proxy: the
/// copies are made visible to it before the barrier. `lag`: the wgmma is
/// still in flight when the next iteration starts and may still read the
/// previous iteration's slot, so D = S-2 (the slot refilled is the one two
/// iterations back, which every warpgroup finished with before the
/// barrier), and the last wgmma is waited for after the loop.
struct RingSync {
  bool asyncProxy = false;
  bool lag = false;
};

void emitRing(scf::ForOp forOp, int64_t stages, RingSync sync,
              function_ref<void(OpBuilder &, Value, int64_t, int64_t)> copy) {
  Location loc = forOp.getLoc();
  Value step = forOp.getStep();
  int64_t depth = stages - 1 - (sync.lag ? 1 : 0);
  OpBuilder b(forOp);
  Value iv = forOp.getLowerBound();
  for (int64_t s = 0; s < depth; ++s) {
    copy(b, iv, 0, s);
    iv = arith::AddIOp::create(b, loc, iv, step);
  }
  b.setInsertionPointToStart(forOp.getBody());
  NVVM::CpAsyncWaitGroupOp::create(b, loc, depth - 1);
  if (sync.asyncProxy)
    NVVM::FenceProxyOp::create(
        b, loc, NVVM::ProxyKind::async_shared,
        NVVM::SharedSpaceAttr::get(b.getContext(),
                                   NVVM::SharedSpace::shared_cta));
  gpu::BarrierOp::create(b, loc);
  Value ahead = arith::AddIOp::create(
      b, loc, forOp.getInductionVar(),
      arith::MulIOp::create(
          b, loc, step,
          arith::ConstantIntOp::create(b, loc, step.getType(), depth)));
  copy(b, ahead, depth, -1);
  b.setInsertionPointAfter(forOp);
  if (sync.lag)
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0)->setAttr(kWgmmaResultsAttr,
                                                           b.getUnitAttr());
  NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  gpu::BarrierOp::create(b, loc);
}

/// Whether the accumulator of `mma` (in `forOp`'s body) is read by nothing
/// but the mma of the next iteration and the loop's results: a wgmma may
/// then stay in flight across the back edge, as its registers are
/// undefined until waited for (an scf.if or a scaling of the accumulator in
/// the body would read them).
bool onlyFeedsNextIteration(MmaOp mma, scf::ForOp forOp) {
  Value result = mma.getResult();
  if (!result.hasOneUse())
    return false;
  OpOperand &use = *result.use_begin();
  if (use.getOwner() != forOp.getBody()->getTerminator())
    return false;
  BlockArgument carried = forOp.getRegionIterArg(use.getOperandNumber());
  return carried.hasOneUse() && mma.getAcc() == carried;
}

/// Rewrites a matmul-shaped loop to the cp.async ring; false if it is not.
FailureOr<bool> pipelineAsync(scf::ForOp forOp, int64_t numStages) {
  Block *body = forOp.getBody();
  SmallVector<MmaOp> mmas(body->getOps<MmaOp>());
  if (mmas.size() != 1)
    return false;
  MmaOp mma = mmas.front();
  MmaKind kind = getMmaKind(mma);
  MmaTilingAttr tiling = mma.getTilingAttr();
  bool warpgroup = tiling && tiling.isWarpgroup();
  // fp8 (wgmma only): A [m][k] and B^T [n][k] blocks, both K-major, read
  // through bitcasts and B's transpose (streamsFp8KMajor).
  bool fp8 = kind == MmaKind::F8E4M3 || kind == MmaKind::F8E5M2;
  if (kind != MmaKind::F16 && kind != MmaKind::BF16 && !(fp8 && warpgroup))
    return false;
  LoadOp aLoad, bLoad;
  SmallVector<Operation *> views;
  if (fp8) {
    if (!streamsFp8KMajor(mma, &aLoad, &bLoad, &views, &views))
      return false;
  } else {
    aLoad = mma.getA().getDefiningOp<LoadOp>();
    bLoad = mma.getB().getDefiningOp<LoadOp>();
  }
  if (!aLoad || !bLoad || aLoad == bLoad || aLoad->getBlock() != body ||
      bLoad->getBlock() != body || !mma.getA().hasOneUse() ||
      !mma.getB().hasOneUse() || !copiesIn16Bytes(aLoad) ||
      !copiesIn16Bytes(bLoad))
    return false;
  llvm::SetVector<Operation *> aSlice, bSlice;
  for (auto [load, slice] :
       {std::pair(aLoad, &aSlice), std::pair(bLoad, &bSlice)})
    for (Value v : load->getOperands())
      if (!collectIndexSlice(v, forOp, *slice))
        return false;

  auto aType = cast<RankedTensorType>(mma.getA().getType());
  auto bType = cast<RankedTensorType>(mma.getB().getType());
  int64_t m = aType.getDimSize(0), k = aType.getDimSize(1),
          n = bType.getDimSize(1);
  int64_t eb = storageBytes(aType.getElementType());
  MmaSmemLayout l = getMmaSmemLayout(m, n, k, eb, /*bTransposed=*/false);
  // wgmma reads 128-byte swizzled panels (no padding): A [m][k], B [k][n]
  // (fp8: B^T [n][k]).
  // A's rows are K long: 128-byte panels, or 64-byte ones for K = 32 f16
  // (and fp8 B^T's rows likewise).
  int64_t aSwizzle = warpgroup ? warpgroupSwizzle(k * eb) : 0;
  int64_t bSwizzle = !warpgroup ? 0 : fp8 ? aSwizzle : 128;
  if (warpgroup) {
    l.aBytes = m * k * eb;
    l.bBytes = k * n * eb;
    l.aStride = l.bStride = 0;
  }
  int64_t slotBytes = l.aBytes + l.bBytes;
  bool lag = warpgroup && onlyFeedsNextIteration(mma, forOp);
  FailureOr<int64_t> slots = ringSlots(
      mma, warpgroup ? warpgroupRingStages(slotBytes) : ringStages(slotBytes),
      numStages, lag ? 3 : 2, slotBytes);
  if (failed(slots))
    return failure();
  int64_t stages = *slots;

  MLIRContext *ctx = forOp.getContext();
  auto mark = [&](Value loaded, int64_t offset, int64_t stride, int64_t ahead,
                  int64_t slot, int64_t swizzle) {
    loaded.getDefiningOp()->setAttr(
        kAsyncCopyAttr,
        DenseI64ArrayAttr::get(
            ctx, {offset, stride, slotBytes, stages, ahead, slot, swizzle}));
  };
  Value a, bv; // the copies of the last call: the body's
  emitRing(forOp, stages, RingSync{warpgroup, lag},
           [&](OpBuilder &b, Value iv, int64_t ahead, int64_t slot) {
             a = cloneAt(b, forOp, aSlice.getArrayRef(), aLoad, iv);
             bv = cloneAt(b, forOp, bSlice.getArrayRef(), bLoad, iv);
             mark(a, 0, l.aStride, ahead, slot, aSwizzle);
             mark(bv, l.aBytes, l.bStride, ahead, slot, bSwizzle);
             NVVM::CpAsyncCommitGroupOp::create(b, forOp.getLoc());
           });
  // The mma reads the ring; its operands only keep the IR typed (zero
  // tiles where the copies have other types: fp8's views).
  auto typed = [&](Value copy, Value operand) -> Value {
    if (copy.getType() == operand.getType())
      return copy;
    OpBuilder b(mma);
    auto type = cast<RankedTensorType>(operand.getType());
    return arith::ConstantOp::create(
        b, mma.getLoc(),
        DenseElementsAttr::get(type, b.getZeroAttr(type.getElementType())));
  };
  mma.getAMutable().assign(typed(a, mma.getA()));
  mma.getBMutable().assign(typed(bv, mma.getB()));
  // [stages, slot bytes, A's offset, B's offset, B K-major, awaited].
  SmallVector<int64_t> ring = {stages, slotBytes, 0, l.aBytes};
  if (warpgroup && (!lag || fp8))
    ring.append({fp8 ? 1 : 0, lag ? 0 : 1});
  mma->setAttr(kAsyncMmaAttr, DenseI64ArrayAttr::get(ctx, ring));
  for (Operation *op : views)
    op->erase();
  aLoad.erase();
  bLoad.erase();
  return true;
}

/// Every mma of the loop reads its B from a cp.async ring (attention's K^T
/// and V); A stays where it is (registers, or fragments hoisted in front
/// of the loop). False if some mma's B does not come from a suitable load.
FailureOr<bool> pipelineAsyncB(scf::ForOp forOp, int64_t numStages) {
  Block *body = forOp.getBody();
  struct Operand {
    MmaOp mma;
    LoadOp load;
    SmallVector<Operation *> chain;
    llvm::SetVector<Operation *> slice;
    int64_t offset, stride;
  };
  SmallVector<Operand> operands;
  int64_t slotBytes = 0;
  // wgmma reads B as 128-byte swizzled panels of the loaded block (no
  // padding), K-major for K^T, N-major otherwise.
  bool warpgroup = llvm::all_of(body->getOps<MmaOp>(), [](MmaOp mma) {
    MmaTilingAttr tiling = mma.getTilingAttr();
    return tiling && tiling.isWarpgroup();
  });
  SmallVector<bool> kMajor;
  for (MmaOp mma : body->getOps<MmaOp>()) {
    MmaKind kind = getMmaKind(mma);
    if (kind != MmaKind::F16 && kind != MmaKind::BF16)
      return false;
    Operand o;
    o.mma = mma;
    bool transposed = false;
    o.load = findLoadThroughView(mma.getB(), body, &o.chain, &transposed);
    if (!o.load || !copiesIn16Bytes(o.load))
      return false;
    // The mma lowering keeps B transposed exactly when its registers run
    // along k, which is what the transpose of a row-major block gives.
    auto bType = cast<RankedTensorType>(mma.getB().getType());
    FailureOr<LinearLayout> bLayout = toLinearLayout(bType);
    if (failed(bLayout) ||
        transposed != (getContiguity(*bLayout, 0) > getContiguity(*bLayout, 1)))
      return false;
    for (Value v : o.load->getOperands())
      if (!collectIndexSlice(v, forOp, o.slice))
        return false;
    auto loadType = cast<RankedTensorType>(o.load.getType());
    unsigned rank = loadType.getRank();
    int64_t rows = loadType.getDimSize(rank - 2),
            cols = loadType.getDimSize(rank - 1);
    int64_t eb = storageBytes(loadType.getElementType());
    // The row-major block is B [k][n] or, transposed, B^T [n][k]: the
    // mma's shared layout either way (getMmaSmemLayout).
    o.stride = warpgroup ? 0 : cols + 16 / eb;
    o.offset = slotBytes;
    slotBytes +=
        warpgroup ? rows * cols * eb : (rows * o.stride * eb + 15) / 16 * 16;
    kMajor.push_back(transposed);
    operands.push_back(std::move(o));
  }
  if (operands.empty())
    return false;
  // Attention also needs scratch (Q's staging, reductions) below the ring:
  // the smaller budget (128x128x128 blocks: 2 slots of 64 KB).
  FailureOr<int64_t> slots = ringSlots(operands.front().mma,
                                       ringStages(slotBytes), numStages,
                                       /*minimum=*/2, slotBytes);
  if (failed(slots))
    return failure();
  int64_t stages = *slots;
  int64_t swizzle = warpgroup ? 128 : 0;
  MLIRContext *ctx = forOp.getContext();
  Location loc = forOp.getLoc();
  emitRing(forOp, stages, RingSync{warpgroup, /*lag=*/false},
           [&](OpBuilder &b, Value iv, int64_t ahead, int64_t slot) {
             for (Operand &o : operands) {
               Value v = cloneAt(b, forOp, o.slice.getArrayRef(), o.load, iv);
               v.getDefiningOp()->setAttr(
                   kAsyncCopyAttr,
                   DenseI64ArrayAttr::get(ctx, {o.offset, o.stride, slotBytes,
                                                stages, ahead, slot, swizzle}));
             }
             NVVM::CpAsyncCommitGroupOp::create(b, loc);
           });
  OpBuilder b(ctx);
  for (auto [o, bKMajor] : llvm::zip(operands, kMajor)) {
    // B is read from the ring; a zero tile keeps the IR typed.
    b.setInsertionPoint(o.mma);
    auto bType = cast<RankedTensorType>(o.mma.getB().getType());
    Value zero = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(bType, b.getZeroAttr(bType.getElementType())));
    o.mma.getBMutable().assign(zero);
    o.mma->setAttr(kAsyncMmaAttr,
                   DenseI64ArrayAttr::get(ctx, {stages, slotBytes, -1, o.offset,
                                                bKMajor ? 1 : 0}));
    for (Operation *op : o.chain)
      op->erase();
    o.load.erase();
  }
  return true;
}

LogicalResult prefetchLoop(scf::ForOp forOp, MmaPipelining mode,
                           int64_t numStages) {
  Block *body = forOp.getBody();
  if (!llvm::any_of(body->getOps<MmaOp>(),
                    [](MmaOp mma) { return getMmaKind(mma) != MmaKind::Fma; }))
    return success();
  if (writesMemory(forOp))
    return success();
  if (mode == MmaPipelining::AsyncCopy) {
    FailureOr<bool> ring = pipelineAsync(forOp, numStages);
    if (succeeded(ring) && !*ring)
      ring = pipelineAsyncB(forOp, numStages);
    if (failed(ring))
      return failure();
    if (*ring)
      return success();
  }
  SmallVector<std::pair<LoadOp, SmallVector<Operation *>>> loads;
  for (LoadOp load : body->getOps<LoadOp>()) {
    if (getMemoryOrder(load) != MemoryOrder::weak)
      continue; // an ordered load stays where the program put it
    llvm::SetVector<Operation *> slice;
    if (llvm::all_of(load->getOperands(), [&](Value v) {
          return collectIndexSlice(v, forOp, slice);
        }))
      loads.push_back({load, SmallVector<Operation *>(slice.getArrayRef())});
  }
  if (loads.empty())
    return success();

  // Iteration 0's tiles, loaded in front of the loop.
  OpBuilder b(forOp);
  SmallVector<Value> inits;
  for (auto &[load, slice] : loads)
    inits.push_back(cloneAt(b, forOp, slice, load, forOp.getLowerBound()));

  IRRewriter rewriter(forOp.getContext());
  auto newFor = cast<scf::ForOp>(*forOp.replaceWithAdditionalYields(
      rewriter, inits, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &yb, Location loc, ArrayRef<BlockArgument> args) {
        // Iteration i + 1's tiles, issued before iteration i's work.
        Block *newBody = args.front().getOwner();
        OpBuilder::InsertionGuard guard(yb);
        yb.setInsertionPointToStart(newBody);
        Value iv = newBody->getArgument(0);
        Value next = arith::AddIOp::create(yb, loc, iv, forOp.getStep());
        SmallVector<Value> yields;
        for (auto &[load, slice] : loads)
          yields.push_back(cloneAt(yb, forOp, slice, load, next));
        return yields;
      }));
  // The body now reads this iteration's tiles from the carried values.
  unsigned first = newFor.getNumRegionIterArgs() - loads.size();
  for (auto [i, entry] : llvm::enumerate(loads)) {
    LoadOp load = entry.first;
    load.getResult().replaceAllUsesWith(newFor.getRegionIterArg(first + i));
    load.erase();
  }
  return success();
}

/// An fp8 mma that tile-tiling narrowed but that got no ring (pipelining
/// off or by registers, a loop that also stores, ...): its operands widened
/// to f16 again (exact), the warpgroup tiling run as mma.sync.
void widenUnstreamedFp8(MmaOp mma) {
  MmaKind kind = getMmaKind(mma);
  if ((kind != MmaKind::F8E4M3 && kind != MmaKind::F8E5M2) ||
      mma->hasAttr(kAsyncMmaAttr))
    return;
  OpBuilder b(mma);
  for (OpOperand *operand : {&mma.getAMutable(), &mma.getBMutable()}) {
    auto type = cast<RankedTensorType>(operand->get().getType());
    operand->set(arith::ExtFOp::create(
        b, mma.getLoc(), type.clone(b.getF16Type()), operand->get()));
  }
  if (MmaTilingAttr t = mma.getTilingAttr())
    mma.setTilingAttr(MmaTilingAttr::get(
        mma.getContext(), t.getWarps(), t.getWarpTile(),
        {t.getInstr()[0], t.getInstr()[1], t.getInstr()[2] / 2}));
}

} // namespace

LogicalResult mlir::tile::prefetchMmaLoads(Operation *root, MmaPipelining mode,
                                           int64_t numStages) {
  SmallVector<scf::ForOp> loops;
  if (mode != MmaPipelining::Off)
    root->walk([&](scf::ForOp forOp) { loops.push_back(forOp); });
  for (scf::ForOp forOp : loops)
    if (failed(prefetchLoop(forOp, mode, numStages)))
      return failure();
  root->walk([](MmaOp mma) { widenUnstreamedFp8(mma); });
  return success();
}
