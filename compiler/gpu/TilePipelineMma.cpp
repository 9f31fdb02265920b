//===- TilePipelineMma.cpp - software pipelining of mma loops -------------===//
//
// The tile-pipeline-mma pass. In an scf.for that feeds tile.mma from
// tile.load, loads run ahead of the mma. Loads past the last iteration read out
// of bounds, which the predicated lowering turns into no memory traffic (or a
// harmless in-bounds read).
//
// Registers: the loads of iteration i + 1 are issued at the top of
// iteration i (their results carried to the next iteration), so they are in
// flight while the tensor cores work on iteration i. The first iteration's
// loads move in front of the loop.
//
// AsyncCopy (a matmul-shaped loop: one f16/bf16 mma whose A and B are
// 16-byte-vectorizable loads, or an fp8 wgmma of A and B^T blocks): a ring
// of S shared-memory slots per operand (tilegpu.alloc_shared). The prologue
// copies iterations 0..S-2 (tilegpu.async_copy, one tilegpu.async_group per
// iteration); iteration i waits for the token of its group (carried by the
// loop), passes one barrier (which also retires iteration i-1's reads of the
// slot about to be refilled), copies iteration i+S-1, and runs a tilegpu.mma
// on slot i % S. The loads and the tile.mma are gone: nothing stands in for
// the data in registers.
//
// TMA (mma-pipelining=tma): TilePipelineMmaTma.cpp, tried first for
// matmul-shaped sm_90 loops; loops it declines take the paths above.
//
// Why not scf::pipelineForLoop: the ring needs no epilogue (copies past the
// end are predicated off by their bounds checks) and its stage boundaries are
// fixed (copy D ahead, wait, compute), so the loop is rewritten directly.
//
//===----------------------------------------------------------------------===//
#include "compiler/gpu/TilePipelineMma.h"
#include "compiler/Passes.h"
#include "compiler/TileTiling.h"
#include "compiler/gpu/TileToGpuCommon.h"
#include "dialects/tilegpu/TileGpuDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEPIPELINEMMA
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

// The helpers TilePipelineMmaTma.cpp shares (TilePipelineMma.h).
namespace mlir::tile::pipeline {

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

bool isPlainBlockLoad(LoadOp load) {
  auto arrayType = cast<ArrayType>(load.getArray().getType());
  auto type = cast<RankedTensorType>(load.getType());
  unsigned rank = arrayType.getRank();
  if (load.getOrder() || rank < 2 || !arrayType.hasUnitInnerStride() ||
      getMemoryOrder(load) != MemoryOrder::weak)
    return false;
  // A 2-d block, possibly behind unit dimensions: (1, N, D).
  for (unsigned d = 0; d + 2 < rank; ++d)
    if (type.getDimSize(d) != 1)
      return false;
  if (auto pad = load.getPaddingAttr())
    if (auto f = dyn_cast<FloatAttr>(pad); !f || !f.getValue().isZero())
      return false;
  return true;
}

/// The 16-byte cp.async a load lowers to, if its accesses are that wide.
bool copiesIn16Bytes(LoadOp load) {
  if (!isPlainBlockLoad(load))
    return false;
  auto arrayType = cast<ArrayType>(load.getArray().getType());
  auto type = cast<RankedTensorType>(load.getType());
  unsigned rank = arrayType.getRank();
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

/// A ring's slots: `automatic`, unless the num-stages option asks for
/// `requested` (raised to `minimum`, the fewest the ring works with). An
/// explicit request that cannot fit in a block's shared memory is an error
/// at `mma` rather than a silent change (an autotuner skips that config).
FailureOr<int64_t> ringSlots(MmaOp mma, int64_t automatic, int64_t requested,
                             int64_t minimum, int64_t slotBytes) {
  if (requested <= 0) {
    // The automatic count, as far as the block's shared memory holds it.
    int64_t slots = std::min(automatic, kMaxSharedBytes / slotBytes);
    if (slots < minimum)
      return mma.emitError()
             << "this mma loop's blocks need " << minimum
             << " shared-memory slots of " << slotBytes
             << " bytes, more than the " << kMaxSharedBytes / 1024
             << " KB a block can have; use smaller tiles";
    return slots;
  }
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

/// Issues the copies of iteration `iv` into slot `slot` (i32) of each ring
/// and closes their group; returns the group's token.
using RingCopy = function_ref<Value(OpBuilder &, Value iv, Value slot)>;

/// Slot ((iv - lb) / step + ahead) % stages of `forOp`'s ring, as i32.
Value ringSlotAt(OpBuilder &b, Location loc, scf::ForOp forOp, Value iv,
                 int64_t ahead, int64_t stages) {
  Value iter = arith::DivSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, iv, forOp.getLowerBound()),
      forOp.getStep());
  return arith::RemSIOp::create(
      b, loc, arith::AddIOp::create(b, loc, iter, constI32(b, loc, ahead)),
      constI32(b, loc, stages));
}

/// The copies and waits of a `stages`-slot cp.async ring around `forOp`,
/// the same for the pipelines below. With D = S-1 iterations in flight,
/// iterations 0..D-1 go to slots 0..D-1 before the loop; the loop carries
/// the tokens of the D groups in flight; the body waits for the oldest
/// (its own slot), synchronizes once and copies iteration iv + D; nothing
/// is in flight, or being read, after the loop.
///
/// Warpgroup mmas (wgmma) read the ring through the async proxy: the
/// copies are made visible to it before the barrier. `lag`: the wgmma is
/// still in flight when the next iteration starts and may still read the
/// previous iteration's slot, so D = S-2 (the slot refilled is the one two
/// iterations back, which every warpgroup finished with before the
/// barrier), and the last wgmma is waited for after the loop
/// (tilegpu.wait_mma on the loop's f32 results).
struct RingSync {
  bool asyncProxy = false;
  bool lag = false;
};

void emitRing(scf::ForOp forOp, int64_t stages, RingSync sync, RingCopy copy) {
  Location loc = forOp.getLoc();
  Value step = forOp.getStep();
  int64_t depth = stages - 1 - (sync.lag ? 1 : 0);
  OpBuilder b(forOp);
  Value iv = forOp.getLowerBound();
  SmallVector<Value> tokens;
  for (int64_t s = 0; s < depth; ++s) {
    tokens.push_back(copy(b, iv, constI32(b, loc, s)));
    iv = arith::AddIOp::create(b, loc, iv, step);
  }
  IRRewriter rewriter(forOp.getContext());
  auto newFor = cast<scf::ForOp>(*forOp.replaceWithAdditionalYields(
      rewriter, tokens, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &yb, Location, ArrayRef<BlockArgument> carried) {
        // The new body is empty until the old one is merged behind this.
        Block *newBody = carried.front().getOwner();
        OpBuilder::InsertionGuard guard(yb);
        yb.setInsertionPointToStart(newBody);
        tilegpu::AsyncWaitOp::create(yb, loc, carried.front(), depth - 1);
        if (sync.asyncProxy)
          NVVM::FenceProxyOp::create(
              yb, loc, NVVM::ProxyKind::async_shared,
              NVVM::SharedSpaceAttr::get(yb.getContext(),
                                         NVVM::SharedSpace::shared_cta));
        gpu::BarrierOp::create(yb, loc);
        Value newIv = newBody->getArgument(0);
        Value ahead = arith::AddIOp::create(
            yb, loc, newIv,
            arith::MulIOp::create(
                yb, loc, step,
                arith::ConstantIntOp::create(yb, loc, step.getType(), depth)));
        SmallVector<Value> yields(carried.drop_front());
        yields.push_back(
            copy(yb, ahead, ringSlotAt(yb, loc, forOp, newIv, depth, stages)));
        return yields;
      }));
  // The accumulators are defined once the last wgmma is waited for.
  Operation *wait = sync.lag ? waitForInFlightAccumulators(newFor) : nullptr;
  b.setInsertionPointAfter(wait ? wait : newFor.getOperation());
  tilegpu::AsyncWaitOp::create(b, loc, newFor.getResults().back(), 0);
  gpu::BarrierOp::create(b, loc);
}

Operation *waitForInFlightAccumulators(scf::ForOp forOp) {
  // Every f32 tile the loop carries, and whatever its wgmmas yield.
  SmallVector<Value> accs;
  Operation *yield = forOp.getBody()->getTerminator();
  for (auto [r, yielded] : llvm::zip(forOp.getResults(), yield->getOperands()))
    if (auto type = dyn_cast<RankedTensorType>(r.getType());
        type && (type.getElementType().isF32() ||
                 yielded.getDefiningOp<tilegpu::MmaOp>()))
      accs.push_back(r);
  if (accs.empty())
    return nullptr;
  OpBuilder b(forOp->getContext());
  b.setInsertionPointAfter(forOp);
  auto wait = tilegpu::WaitMmaOp::create(
      b, forOp.getLoc(), ValueRange(accs).getTypes(), accs, /*pending=*/0);
  for (auto [acc, waited] : llvm::zip(accs, wait.getResults()))
    acc.replaceAllUsesExcept(waited, wait);
  return wait;
}

/// Copies the block `load` reads at iteration `iv` (its index `slice`
/// re-evaluated there) into slot `slot` of `ring`; returns the token.
Value copyInto(OpBuilder &b, scf::ForOp forOp, ArrayRef<Operation *> slice,
               LoadOp load, Value iv, Value ring, Value slot) {
  IRMapping map;
  map.map(forOp.getInductionVar(), iv);
  for (Operation *op : slice)
    b.clone(*op, map);
  auto ringType = cast<tilegpu::SharedBufferType>(ring.getType());
  Value dst = tilegpu::SlotOp::create(b, load.getLoc(), ringType.withSlots(1),
                                      ring, slot);
  SmallVector<Value> indices;
  for (Value v : load.getIndices())
    indices.push_back(map.lookupOrDefault(v));
  return tilegpu::AsyncCopyOp::create(
      b, load.getLoc(), b.getType<tilegpu::TokenType>(),
      map.lookupOrDefault(load.getArray()), indices, dst,
      TypeAttr::get(load.getType()));
}

/// A ring of `stages` slots of `rows` x `cols` blocks, allocated in front of
/// `forOp`: swizzled panels (wgmma) or rows padded to `rowStride`.
Value allocRing(scf::ForOp forOp, int64_t rows, int64_t cols, Type elemType,
                int64_t stages, int64_t swizzle, int64_t rowStride) {
  OpBuilder b(forOp);
  auto type =
      tilegpu::SharedBufferType::get(forOp.getContext(), {rows, cols}, elemType,
                                     stages, swizzle, swizzle ? 0 : rowStride);
  return tilegpu::AllocSharedOp::create(b, forOp.getLoc(), type, IntegerAttr());
}

/// `mma` rewritten as a tilegpu.mma reading B (and A when `aRing`) from
/// this iteration's slot of the rings.
void replaceWithSharedMma(MmaOp mma, scf::ForOp forOp, int64_t stages,
                          Value aRing, Value bRing, bool bTransposed,
                          bool inFlight, bool aTransposed) {
  OpBuilder b(mma);
  Location loc = mma.getLoc();
  Value slot =
      ringSlotAt(b, loc, forOp, forOp.getInductionVar(), /*ahead=*/0, stages);
  // A one-slot buffer (an A copied once, in front of the loop) at slot 0.
  auto slotOf = [&](Value ring) -> Value {
    auto type = cast<tilegpu::SharedBufferType>(ring.getType());
    Value index = type.getSlots() == 1 ? constI32(b, loc, 0) : slot;
    return tilegpu::SlotOp::create(b, loc, type.withSlots(1), ring, index);
  };
  Value a = aRing ? slotOf(aRing) : mma.getA();
  auto shared = tilegpu::MmaOp::create(
      b, loc, mma.getType(), a, slotOf(bRing), mma.getAcc(), bTransposed,
      inFlight, aTransposed, mma.getFastAccumulation(), mma.getTilingAttr());
  mma.getResult().replaceAllUsesWith(shared.getResult());
  mma.erase();
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
  // fp8, tf32 and int8 (wgmma only): A [m][k] and B^T [n][k] blocks, both
  // K-major, read through bitcasts and B's transpose (streamsKMajor).
  bool kMajor = kind == MmaKind::F8E4M3 || kind == MmaKind::F8E5M2 ||
                kind == MmaKind::TF32 || kind == MmaKind::I8;
  if (kind != MmaKind::F16 && kind != MmaKind::BF16 && !(kMajor && warpgroup))
    return false;
  LoadOp aLoad, bLoad;
  SmallVector<Operation *> views;
  if (kMajor) {
    if (!streamsKMajor(mma, &aLoad, &bLoad, &views, &views))
      return false;
  } else { // a batched matmul's blocks of one batch: through reshapes
    aLoad = findLoadThroughUnitReshapes(mma.getA(), body, &views);
    bLoad = findLoadThroughUnitReshapes(mma.getB(), body, &views);
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
  // (fp8, tf32, int8: B^T [n][k]).
  // A's rows are K long: 128-byte panels, or 64-byte ones for K = 32 f16
  // (and a K-major B^T's rows likewise).
  int64_t aSwizzle = warpgroup ? warpgroupSwizzle(k * eb) : 0;
  int64_t bSwizzle = !warpgroup ? 0 : kMajor ? aSwizzle : 128;
  if (warpgroup) {
    l.aBytes = m * k * eb;
    l.bBytes = k * n * eb;
  }
  int64_t slotBytes = l.aBytes + l.bBytes;
  bool lag = warpgroup && onlyFeedsNextIteration(mma, forOp);
  // A wgmma left in flight needs a third slot; where three do not fit,
  // each iteration waits for its wgmma and two slots take turns.
  if (lag && numStages <= 0 && 3 * slotBytes > kMaxSharedBytes)
    lag = false;
  FailureOr<int64_t> slots = ringSlots(
      mma, warpgroup ? warpgroupRingStages(slotBytes) : ringStages(slotBytes),
      numStages, lag ? 3 : 2, slotBytes);
  if (failed(slots))
    return failure();
  int64_t stages = *slots;

  Type elemType = aType.getElementType();
  Value aRing = allocRing(forOp, m, k, elemType, stages, aSwizzle, l.aStride);
  Value bRing =
      kMajor ? allocRing(forOp, n, k, elemType, stages, bSwizzle, 0)
             : allocRing(forOp, k, n, elemType, stages, bSwizzle, l.bStride);
  replaceWithSharedMma(mma, forOp, stages, aRing, bRing, /*bTransposed=*/kMajor,
                       /*inFlight=*/lag);
  for (Operation *op : views) // from the mma's operand down to the load
    op->erase();
  emitRing(forOp, stages, RingSync{warpgroup, lag},
           [&](OpBuilder &b, Value iv, Value slot) -> Value {
             Value ta = copyInto(b, forOp, aSlice.getArrayRef(), aLoad, iv,
                                 aRing, slot);
             Value tb = copyInto(b, forOp, bSlice.getArrayRef(), bLoad, iv,
                                 bRing, slot);
             return tilegpu::AsyncGroupOp::create(
                 b, forOp.getLoc(), b.getType<tilegpu::TokenType>(),
                 ValueRange{ta, tb});
           });
  aLoad.erase();
  bLoad.erase();
  return true;
}

/// Whether every mma of `forOp`'s body is an f16/bf16 mma reading B from a
/// load of the body (through views): attention's K^T and V. `out` gets one
/// entry per mma, its index slice collected; false if some mma's B does not
/// come from such a load (or, with `in16Bytes`, one cp.async cannot copy).
bool collectStreamedB(scf::ForOp forOp, bool in16Bytes,
                      SmallVectorImpl<StreamedB> &out, bool sharedLoads,
                      SmallVectorImpl<MmaOp> *staged) {
  Block *body = forOp.getBody();
  for (MmaOp mma : body->getOps<MmaOp>()) {
    MmaKind kind = getMmaKind(mma);
    MmaTilingAttr tiling = mma.getTilingAttr();
    // fp8 (attention's register-A wgmma, tile-tiling): B K-major only.
    bool fp8 = kind == MmaKind::F8E4M3 || kind == MmaKind::F8E5M2;
    if (kind != MmaKind::F16 && kind != MmaKind::BF16 &&
        !(fp8 && tiling && tiling.isWarpgroup()))
      return false;
    if (staged && tiling && tiling.isWarpgroup() &&
        stagedOperand(mma, forOp) != StagedOperand::None) {
      staged->push_back(mma);
      continue;
    }
    StreamedB o;
    o.mma = mma;
    bool transposed = false;
    o.load = findLoadThroughView(mma.getB(), body, &o.chain, &transposed,
                                 sharedLoads);
    if (!o.load || !isPlainBlockLoad(o.load) ||
        (in16Bytes && !copiesIn16Bytes(o.load)))
      return false;
    // The mma lowering keeps B transposed exactly when its registers run
    // along k, which is what the transpose of a row-major block gives.
    auto bType = cast<RankedTensorType>(mma.getB().getType());
    FailureOr<LinearLayout> bLayout = toLinearLayout(bType);
    if (failed(bLayout) ||
        transposed !=
            (getContiguity(*bLayout, 0) > getContiguity(*bLayout, 1)) ||
        (fp8 && !transposed))
      return false;
    for (Value v : o.load->getOperands())
      if (!collectIndexSlice(v, forOp, o.slice))
        return false;
    o.kMajor = transposed;
    out.push_back(std::move(o));
  }
  return !out.empty();
}

/// Whether every use of the loads and views in `streamed` (from their
/// mmas' B down) is one of those views or mmas: erasing them after the
/// rewrite leaves nothing reading the loaded registers.
bool onlyStreamedUses(ArrayRef<StreamedB> streamed) {
  llvm::SmallPtrSet<Operation *, 16> known;
  for (const StreamedB &s : streamed) {
    known.insert(s.mma);
    known.insert(s.chain.begin(), s.chain.end());
  }
  for (const StreamedB &s : streamed) {
    SmallVector<Operation *> ops(s.chain.begin(), s.chain.end());
    ops.push_back(s.load);
    for (Operation *op : ops)
      for (Operation *user : op->getUsers())
        if (!known.contains(user))
          return false;
  }
  return true;
}

/// Erases the views and loads of `streamed` (and `extra`) that nothing
/// reads once their mmas were rewritten; shared ones go with their last
/// reader.
void eraseStreamedViews(ArrayRef<StreamedB> streamed,
                        ArrayRef<Operation *> extra) {
  llvm::SetVector<Operation *> unique;
  for (const StreamedB &s : streamed) {
    unique.insert(s.chain.begin(), s.chain.end());
    unique.insert(s.load);
  }
  unique.insert(extra.begin(), extra.end());
  SmallVector<Operation *> dead(unique.begin(), unique.end());
  for (bool erased = true; erased;) {
    erased = false;
    for (Operation *&op : dead)
      if (op && op->use_empty()) {
        op->erase();
        op = nullptr;
        erased = true;
      }
  }
}

/// Every mma of the loop reads its B from a cp.async ring (attention's K^T
/// and V); A stays where it is (registers, or fragments hoisted in front
/// of the loop). False if some mma's B does not come from a suitable load.
FailureOr<bool> pipelineAsyncB(scf::ForOp forOp, int64_t numStages) {
  Block *body = forOp.getBody();
  SmallVector<StreamedB> operands;
  if (!collectStreamedB(forOp, /*in16Bytes=*/true, operands,
                        /*sharedLoads=*/true) ||
      !onlyStreamedUses(operands))
    return false;
  int64_t slotBytes = 0;
  // wgmma reads B as 128-byte swizzled panels of the loaded block (no
  // padding), K-major for K^T, N-major otherwise.
  bool warpgroup = llvm::all_of(body->getOps<MmaOp>(), [](MmaOp mma) {
    MmaTilingAttr tiling = mma.getTilingAttr();
    return tiling && tiling.isWarpgroup();
  });
  // The row-major block is B [k][n] or, transposed, B^T [n][k]: the mma's
  // shared layout either way (getMmaSmemLayout), rows padded by 16 bytes
  // for mma.sync.
  auto blockOf = [](LoadOp load) {
    auto type = cast<RankedTensorType>(load.getType());
    unsigned rank = type.getRank();
    return std::pair(type.getDimSize(rank - 2), type.getDimSize(rank - 1));
  };
  // One ring per distinct load (a block two mmas read fills one): the
  // first entry of each load owns it.
  auto owner = [&](StreamedB &o) -> StreamedB & {
    return *llvm::find_if(operands,
                          [&](StreamedB &e) { return e.load == o.load; });
  };
  for (StreamedB &o : operands) {
    if (&owner(o) != &o)
      continue;
    auto [rows, cols] = blockOf(o.load);
    int64_t eb = storageBytes(o.load.getType().getElementType());
    slotBytes += warpgroup ? rows * cols * eb
                           : (rows * (cols + 16 / eb) * eb + 15) / 16 * 16;
  }
  // Attention also needs scratch (Q's staging, reductions) beside the ring:
  // the smaller budget (128x128x128 blocks: 2 slots of 64 KB).
  FailureOr<int64_t> slots =
      ringSlots(operands.front().mma, ringStages(slotBytes), numStages,
                /*minimum=*/2, slotBytes);
  if (failed(slots))
    return failure();
  int64_t stages = *slots;
  for (StreamedB &o : operands) {
    StreamedB &first = owner(o);
    if (&first == &o) {
      auto [rows, cols] = blockOf(o.load);
      Type elemType = o.load.getType().getElementType();
      o.ring =
          allocRing(forOp, rows, cols, elemType, stages, warpgroup ? 128 : 0,
                    cols + 16 / storageBytes(elemType));
    }
    replaceWithSharedMma(o.mma, forOp, stages, Value(), first.ring, o.kMajor,
                         /*inFlight=*/false);
  }
  emitRing(forOp, stages, RingSync{warpgroup, /*lag=*/false},
           [&](OpBuilder &b, Value iv, Value slot) -> Value {
             SmallVector<Value> tokens;
             for (StreamedB &o : operands)
               if (o.ring)
                 tokens.push_back(copyInto(b, forOp, o.slice.getArrayRef(),
                                           o.load, iv, o.ring, slot));
             return tilegpu::AsyncGroupOp::create(
                 b, forOp.getLoc(), b.getType<tilegpu::TokenType>(), tokens);
           });
  eraseStreamedViews(operands);
  return true;
}

/// The kernel arguments `forOp`'s body writes when every write is a
/// relaxed atomic update whose old values nothing reads (a reduction into
/// memory: the backward's dQ) of an array no load of the body reads: a TMA
/// ring may read ahead of them if no array it reads overlaps them, which
/// the runtime checks at each launch (kDisjointArraysAttr). Else empty.
SmallVector<BlockArgument> reductionTargets(scf::ForOp forOp) {
  SmallVector<BlockArgument> targets;
  llvm::SmallPtrSet<Value, 4> loaded;
  forOp.getBody()->walk([&](LoadOp load) { loaded.insert(load.getArray()); });
  WalkResult walk = forOp.getBody()->walk([&](Operation *op) {
    auto rmw = dyn_cast<AtomicRMWOp>(op);
    if (!rmw)
      return writesMemory(op) && op->getNumRegions() == 0
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    auto array = dyn_cast<BlockArgument>(rmw.getArray());
    if (!array || !rmw.getResult().use_empty() || loaded.contains(array) ||
        getMemoryOrder(rmw) != MemoryOrder::relaxed ||
        !isa<func::FuncOp>(array.getOwner()->getParentOp()))
      return WalkResult::interrupt();
    if (!llvm::is_contained(targets, array))
      targets.push_back(array);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    targets.clear();
  return targets;
}

/// Records on the kernel that `written` and `read` must not overlap.
void requireDisjoint(scf::ForOp forOp, ArrayRef<BlockArgument> written,
                     ArrayRef<BlockArgument> read) {
  auto func = forOp->getParentOfType<func::FuncOp>();
  SmallVector<int32_t> pairs;
  if (auto old = func->getAttrOfType<DenseI32ArrayAttr>(kDisjointArraysAttr))
    pairs.assign(old.asArrayRef().begin(), old.asArrayRef().end());
  for (BlockArgument w : written)
    for (BlockArgument r : read) {
      pairs.push_back(int32_t(w.getArgNumber()));
      pairs.push_back(int32_t(r.getArgNumber()));
    }
  func->setAttr(kDisjointArraysAttr,
                DenseI32ArrayAttr::get(forOp.getContext(), pairs));
}

LogicalResult prefetchLoop(scf::ForOp forOp, MmaPipelining mode,
                           int64_t numStages, bool epilogueRoom) {
  Block *body = forOp.getBody();
  if (!llvm::any_of(body->getOps<MmaOp>(),
                    [](MmaOp mma) { return getMmaKind(mma) != MmaKind::Fma; }))
    return success();
  if (writesMemory(forOp)) {
    // Only atomic reductions, only behind TMA rings of B operands.
    SmallVector<BlockArgument> written = reductionTargets(forOp);
    if (mode != MmaPipelining::Tma || written.empty())
      return success();
    // Its rows stay loads: the shared memory they would take is what
    // tile-bulk-reduce's buffer for the reduction needs (the fused
    // backward's dQ at d 128 fits beside a 3-slot ring only so).
    SmallVector<BlockArgument> read;
    FailureOr<bool> ring =
        pipelineTmaB(forOp, numStages, &read, /*withRows=*/false);
    if (failed(ring))
      return failure();
    if (*ring)
      requireDisjoint(forOp, written, read);
    return success();
  }
  if (mode == MmaPipelining::AsyncCopy || mode == MmaPipelining::Tma) {
    FailureOr<bool> ring = mode == MmaPipelining::Tma
                               ? pipelineTma(forOp, numStages, epilogueRoom)
                               : FailureOr<bool>(false);
    if (mode == MmaPipelining::Tma && succeeded(ring) && !*ring)
      ring = pipelineTmaB(forOp, numStages);
    if (succeeded(ring) && !*ring)
      ring = pipelineAsync(forOp, numStages);
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

/// An fp8, tf32 or int8 mma that tile-tiling gave a warpgroup tiling but
/// that got no ring (pipelining off or by registers, a loop that also
/// stores, ...) runs as mma.sync over the same warps: tf32 and int8 with
/// their own mma.sync instruction, fp8 widened to f16 again (exact).
void runUnstreamedOnMmaSync(MmaOp mma) {
  MmaKind kind = getMmaKind(mma);
  MmaTilingAttr tiling = mma.getTilingAttr();
  if ((kind == MmaKind::TF32 || kind == MmaKind::I8) && tiling &&
      tiling.isWarpgroup()) {
    mma.setTilingAttr(MmaTilingAttr::get(mma.getContext(), tiling.getWarps(),
                                         tiling.getWarpTile(),
                                         mma.getTensorCoreShape()));
    return;
  }
  if (kind != MmaKind::F8E4M3 && kind != MmaKind::F8E5M2)
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

} // namespace mlir::tile::pipeline

namespace {
using namespace mlir::tile::pipeline;

struct TilePipelineMmaPass
    : tile::impl::TilePipelineMmaBase<TilePipelineMmaPass> {
  using TilePipelineMmaBase::TilePipelineMmaBase;

  void runOnOperation() override {
    std::optional<MmaPipelining> mode = parseMmaPipelining(mmaPipelining);
    if (!mode) {
      getOperation().emitError()
          << "tile-pipeline-mma: mma-pipelining must be off, regs, async or "
             "tma, not '"
          << mmaPipelining << "'";
      return signalPassFailure();
    }
    SmallVector<scf::ForOp> loops;
    if (*mode != MmaPipelining::Off)
      getOperation()->walk([&](scf::ForOp forOp) { loops.push_back(forOp); });
    for (scf::ForOp forOp : loops)
      if (failed(prefetchLoop(forOp, *mode, numStages, epilogueRoom)))
        return signalPassFailure();
    getOperation()->walk([](MmaOp mma) { runUnstreamedOnMmaSync(mma); });
  }
};

} // namespace
