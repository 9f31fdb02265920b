//===- TileTiling.cpp - block tiles to warp and instruction tiles ---------===//
//
// Makes the warp tiling explicit in tile IR, before any thread layout: how
// each tensor-core tile.mma splits over the block's warps and into mma.sync
// or wgmma instructions (#tile.mma_tiling, with the warp count as the module
// attribute tile.num_warps). Long reductions and long-K mmas become loops
// before this, in tile-chunk-loops (TileChunkLoops.cpp).
//
//===----------------------------------------------------------------------===//
#include "compiler/TileTiling.h"
#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>

namespace mlir::tile {
#define GEN_PASS_DEF_TILETILING
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

static RankedTensorType getTensorType(Value v) {
  return dyn_cast<RankedTensorType>(v.getType());
}

//===----------------------------------------------------------------------===//
// Warp and instruction tiles of tile.mma
//===----------------------------------------------------------------------===//

bool mlir::tile::isElementwiseTileOp(Operation *op) {
  if (op->getNumResults() != 1 || !getTensorType(op->getResult(0)))
    return false;
  if (!isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return false;
  return op->hasTrait<OpTrait::Elementwise>() || isa<arith::SelectOp>(op);
}

static int64_t maxTileElements(Operation *root) {
  int64_t most = 0;
  root->walk([&](Operation *op) {
    for (Value r : op->getResults())
      if (auto t = getTensorType(r))
        most = std::max(most, t.getNumElements());
  });
  return most;
}

int mlir::tile::chooseNumWarps(ModuleOp module) {
  int64_t most = 0;
  module.walk(
      [&](func::FuncOp f) { most = std::max(most, maxTileElements(f)); });
  bool hasMma = false;
  module.walk([&](MmaOp) { hasMma = true; });
  // mma kernels: 8 warps for tiles of 8K elements or more whose mmas have
  // 128 rows or more (two warpgroups of 64 rows on sm_90), else 4.
  int64_t mmaRows = 0;
  module.walk([&](MmaOp mma) {
    auto type = cast<RankedTensorType>(mma.getType());
    mmaRows = std::max(mmaRows, type.getDimSize(type.getRank() - 2));
  });
  if (hasMma)
    return most >= 8192 && mmaRows >= 128 ? 8 : 4;
  // Memory-bound kernels: about 32 elements of the largest tile per thread
  // keeps rows of 8K-32K elements in registers without spills.
  return int(std::clamp<int64_t>(llvm::PowerOf2Ceil(most / 1024), 4, 16));
}

FailureOr<int> mlir::tile::resolveNumWarps(ModuleOp module, int option) {
  int warps = option;
  if (warps <= 0) {
    auto recorded = module->getAttrOfType<IntegerAttr>(kNumWarpsAttr);
    warps = recorded ? int(recorded.getInt()) : chooseNumWarps(module);
  }
  if (!llvm::isPowerOf2_32(warps) || warps > 32)
    return module.emitError()
           << "num_warps must be a power of two <= 32, got " << warps;
  return warps;
}

static bool isTensorCore(MmaOp mma) {
  return !mma.getTensorCoreShape().empty();
}

/// The tensor-core mma whose result `v` is computed from elementwise.
static MmaOp producingMma(Value v, int depth) {
  Operation *def = v.getDefiningOp();
  if (!def || depth > 16)
    return {};
  // Through an scf.if (attention masking only some blocks): what either
  // branch yields reaches the user.
  if (auto ifOp = dyn_cast<scf::IfOp>(def)) {
    unsigned i = cast<OpResult>(v).getResultNumber();
    for (Region &branch : ifOp->getRegions())
      if (!branch.empty())
        if (MmaOp mma = producingMma(
                branch.front().getTerminator()->getOperand(i), depth + 1))
          return mma;
    return {};
  }
  if (auto mma = dyn_cast<MmaOp>(def))
    return isTensorCore(mma) ? mma : MmaOp();
  if (!isElementwiseTileOp(def) && !isa<ConvertLayoutOp>(def))
    return {};
  for (Value o : def->getOperands())
    if (getTensorType(o) &&
        getTensorType(o).getShape() == getTensorType(v).getShape())
      if (MmaOp mma = producingMma(o, depth + 1))
        return mma;
  return {};
}

llvm::DenseSet<Operation *> mlir::tile::findChainedMmas(Operation *root) {
  llvm::DenseSet<Operation *> chained;
  root->walk([&](MmaOp mma) {
    if (!isTensorCore(mma))
      return;
    if (MmaOp producer = producingMma(mma.getA(), 0)) {
      chained.insert(mma);
      chained.insert(producer);
    }
  });
  return chained;
}

SmallVector<int64_t> mlir::tile::chooseMmaWarps(ArrayRef<int64_t> shape,
                                                int numWarps, bool rowsOnly) {
  // Split M while it has more 16-row tiles per warp than N has 16-column
  // tiles (or, for chained mmas, as far as M allows).
  int64_t wm = 1, wn = 1;
  while (rowsOnly && wm < numWarps && wm < shape[0] / 16)
    wm *= 2;
  while (wm * wn < numWarps) {
    if (shape[0] / 16 / wm >= shape[1] / 16 / wn) {
      if (wm < shape[0] / 16)
        wm *= 2;
      else
        wn *= 2;
    } else {
      wn *= 2;
    }
  }
  return {wm, wn};
}

MmaTilingAttr mlir::tile::getMmaTiling(MmaOp op, int numWarps, bool rowsOnly) {
  SmallVector<int64_t> instr = op.getTensorCoreShape();
  if (instr.empty())
    return {};
  auto shape = cast<RankedTensorType>(op.getType()).getShape();
  SmallVector<int64_t> warps = chooseMmaWarps(shape, numWarps, rowsOnly);
  SmallVector<int64_t> warpTile;
  for (int d = 0; d < 2; ++d)
    warpTile.push_back(std::max(instr[d], shape[d] / warps[d]));
  return MmaTilingAttr::get(op.getContext(), warps, warpTile, instr);
}

LoadOp mlir::tile::findLoadThroughView(Value v, Block *block,
                                       SmallVectorImpl<Operation *> *chain,
                                       bool *transposed, bool sharedViews) {
  bool permuted = false;
  while (Operation *def = v.getDefiningOp()) {
    if ((!sharedViews && !v.hasOneUse()) || def->getBlock() != block)
      return {};
    if (auto load = dyn_cast<LoadOp>(def)) {
      if (load.getOrder())
        return {};
      if (transposed)
        *transposed = permuted;
      return load;
    }
    if (auto permute = dyn_cast<PermuteOp>(def)) {
      if (permuted || permute.getPerm().size() != 2)
        return {};
      permuted = true;
    } else if (!isa<ReshapeOp, arith::BitcastOp>(def)) {
      return {}; // a bitcast keeps the bytes (u8 codes viewed as fp8)
    }
    if (chain)
      chain->push_back(def);
    v = def->getOperand(0);
  }
  return {};
}

LoadOp
mlir::tile::findLoadThroughUnitReshapes(Value v, Block *block,
                                        SmallVectorImpl<Operation *> *chain) {
  while (Operation *def = v.getDefiningOp()) {
    if (def->getBlock() != block)
      return {};
    if (auto load = dyn_cast<LoadOp>(def))
      return load.getOrder() ? LoadOp() : load;
    auto reshape = dyn_cast<ReshapeOp>(def);
    if (!reshape || !v.hasOneUse())
      return {};
    ArrayRef<int64_t> from =
        cast<RankedTensorType>(reshape.getSrc().getType()).getShape();
    ArrayRef<int64_t> to = cast<RankedTensorType>(v.getType()).getShape();
    size_t dropped = from.size() - std::min(from.size(), to.size());
    if (from.size() <= to.size() || from.drop_front(dropped) != to ||
        llvm::any_of(from.take_front(dropped),
                     [](int64_t d) { return d != 1; }))
      return {};
    if (chain)
      chain->push_back(def);
    v = reshape.getSrc();
  }
  return {};
}

static bool isFp8(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

/// The input types sm_90's wgmma reads only K-major (both operands from
/// shared memory, B given transposed): fp8, tf32 (f32 inputs where the mma
/// allows tf32) and int8.
static bool isKMajorOnly(MmaOp op) {
  Type in = getElementTypeOrSelf(op.getA().getType());
  return isFp8(in) || (in.isF32() && op.getAllowTf32()) ||
         in.isSignlessInteger(8);
}

/// Whether `load`'s block can be copied in 16-byte cp.async pieces as far
/// as its array tells (tile-pipeline-mma checks the thread layout too): its
/// rows unit-strided, 16-byte aligned, of whole 16-element runs, zero-padded
/// and weak. `rank2`: of a 2-d array (fp8's K-major operands), else of a
/// batched one (rank 3 and up).
static bool copiesWholeRows(LoadOp load, bool rank2 = true) {
  auto array = cast<ArrayType>(load.getArray().getType());
  unsigned rank = array.getRank();
  int64_t extent = array.getShape()[rank - 1];
  int64_t div =
      ShapedType::isDynamic(extent) ? array.getDivisibility() : extent;
  auto pad = dyn_cast_or_null<FloatAttr>(load.getPaddingAttr());
  return (rank2 ? rank == 2 : rank >= 3) && array.getStrides()[rank - 1] == 1 &&
         array.getAlignment() % 16 == 0 && div % 16 == 0 &&
         (!load.getPaddingAttr() || (pad && pad.getValue().isZero())) &&
         getMemoryOrder(load) == MemoryOrder::weak;
}

bool mlir::tile::onlyViewedAsB(Value v,
                               function_ref<bool(Operation *)> isView) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (auto mma = dyn_cast<MmaOp>(user)) {
      if (&use != &mma.getBMutable())
        return false;
      continue;
    }
    if (!isView(user) || !onlyViewedAsB(user->getResult(0), isView))
      return false;
  }
  return true;
}

/// Whether a warpgroup mma streams A through the cp.async ring (matmul)
/// rather than taking it from registers (Q, or P from the chained mma).
static bool readsAFromRing(MmaOp op, bool chained) {
  if (isKMajorOnly(op))
    return !chained; // only wgmma from the ring takes them (streamsKMajor)
  SmallVector<Operation *> views;
  LoadOp aLoad = findLoadThroughUnitReshapes(op.getA(), op->getBlock(), &views);
  if (!aLoad || chained)
    return false;
  if (views.empty())
    return true;
  // A batched block (through reshapes) only where both operands stream in
  // 16-byte rows: the register fallback of wgmma does not take them.
  LoadOp bLoad = findLoadThroughUnitReshapes(op.getB(), op->getBlock());
  return bLoad && copiesWholeRows(aLoad, /*rank2=*/false) &&
         copiesWholeRows(bLoad, /*rank2=*/false);
}

bool mlir::tile::streamsKMajor(MmaOp op, LoadOp *aLoad, LoadOp *bLoad,
                               SmallVectorImpl<Operation *> *aChain,
                               SmallVectorImpl<Operation *> *bChain) {
  bool aTransposed = true, bTransposed = false;
  LoadOp a =
      findLoadThroughView(op.getA(), op->getBlock(), aChain, &aTransposed);
  LoadOp b =
      findLoadThroughView(op.getB(), op->getBlock(), bChain, &bTransposed);
  if (!a || !b || a == b || aTransposed || !bTransposed ||
      !copiesWholeRows(a) || !copiesWholeRows(b))
    return false;
  if (aLoad)
    *aLoad = a;
  if (bLoad)
    *bLoad = b;
  return true;
}

/// Whether `v` is computed in `body` from registers: defined there, and
/// not a view of a block loaded there.
static bool computedIn(Value v, Block *body) {
  Operation *def = v.getDefiningOp();
  return def && def->getBlock() == body &&
         !findLoadThroughView(v, body, nullptr, nullptr, /*sharedViews=*/true);
}

StagedOperand mlir::tile::stagedOperand(MmaOp op, scf::ForOp loop) {
  Block *body = loop.getBody();
  auto wholeRows = [](LoadOp load) {
    return load &&
           copiesWholeRows(
               load, cast<RankedTensorType>(load.getType()).getRank() == 2);
  };
  if (computedIn(op.getB(), body)) {
    LoadOp aLoad = findLoadThroughView(op.getA(), loop->getBlock(), nullptr,
                                       nullptr, /*sharedViews=*/true);
    return wholeRows(aLoad) ? StagedOperand::B : StagedOperand::None;
  }
  auto permute = op.getA().getDefiningOp<PermuteOp>();
  if (!permute || permute->getBlock() != body ||
      permute.getPerm() != ArrayRef<int64_t>{1, 0} ||
      !computedIn(permute.getSrc(), body))
    return StagedOperand::None;
  bool transposed = false;
  LoadOp bLoad = findLoadThroughView(op.getB(), loop->getBlock(), nullptr,
                                     &transposed, /*sharedViews=*/true);
  return wholeRows(bLoad) && !transposed ? StagedOperand::A
                                         : StagedOperand::None;
}

/// Whether a register-A wgmma of fp8 (which reads B only K-major) can take
/// `op`: A loop-invariant or the chained mma's P, and B the transpose of a
/// block the loop loads in 16-byte rows and only mmas read as B.
static bool readsKMajorBFromLoop(MmaOp op, bool chained) {
  auto loop = dyn_cast<scf::ForOp>(op->getParentOp());
  if (!loop || !(chained || loop.isDefinedOutsideOfLoop(op.getA())))
    return false;
  bool transposed = false;
  LoadOp bLoad = findLoadThroughView(op.getB(), op->getBlock(), nullptr,
                                     &transposed, /*sharedViews=*/true);
  return bLoad && transposed &&
         copiesWholeRows(
             bLoad, cast<RankedTensorType>(bLoad.getType()).getRank() == 2) &&
         onlyViewedAsB(bLoad.getResult(), [](Operation *view) {
           return isa<ReshapeOp, PermuteOp, arith::BitcastOp>(view);
         });
}

MmaTilingAttr mlir::tile::getWarpgroupMmaTiling(MmaOp op, int numWarps,
                                                bool chained,
                                                bool stagedOperands) {
  auto a = cast<RankedTensorType>(op.getA().getType());
  auto c = cast<RankedTensorType>(op.getType());
  Type in = a.getElementType();
  // fp8, tf32 and int8: both operands K-major, 32 bytes of K per wgmma.
  bool kMajorOnly = isKMajorOnly(op);
  Type acc = c.getElementType();
  if (a.getRank() != 2 || !(in.isF16() || in.isBF16() || kMajorOnly) ||
      !(in.isSignlessInteger(8) ? acc.isSignlessInteger(32) : acc.isF32()))
    return {};
  int64_t m = c.getDimSize(0), n = c.getDimSize(1), k = a.getDimSize(1);
  int64_t elemBytes = in.getIntOrFloatBitWidth() / 8;
  int64_t kBytes = k * elemBytes;
  // K: whole 128-byte swizzle panels, or one 64-byte panel (K = 32) for A
  // in shared memory; K^T's rows (attention) are 128-byte panels.
  if (numWarps % 4 || m % (16 * numWarps) || n % 64 || n > 256 ||
      (kBytes % 128 && (chained || kBytes != 64)))
    return {};
  // fp8/tf32/int8 wgmma: 32 bytes of K per instruction, both operands
  // K-major in the ring.
  if (kMajorOnly) {
    if (!isa<scf::ForOp>(op->getParentOp()))
      return {};
    if (!chained && streamsKMajor(op))
      return MmaTilingAttr::get(op.getContext(), {numWarps, 1},
                                {m / numWarps, n}, {64, n, 32 / elemBytes});
    // fp8 attention: A in registers (Q in front of the loop, or P from the
    // chained mma), B a transposed block (K^T, or V^T's transpose) that the
    // ring holds K-major.
    if (isFp8(in) && readsKMajorBFromLoop(op, chained))
      return MmaTilingAttr::get(op.getContext(), {numWarps, 1},
                                {m / numWarps, n}, {64, n, 32});
    return {};
  }
  // The operands must be able to stream through the cp.async ring
  // (tile-pipeline-mma): B loaded in the body of the loop around the
  // mma; A too (matmul), or A in registers: loop-invariant (Q) or the
  // result of the chained mma (P).
  auto loop = dyn_cast<scf::ForOp>(op->getParentOp());
  MLIRContext *ctx = op.getContext();
  // An operand staged from registers: 128-byte swizzled panels of 16-bit
  // elements.
  if (loop && stagedOperands && !chained && !isFp8(in) &&
      stagedOperand(op, loop) != StagedOperand::None)
    return MmaTilingAttr::get(ctx, {numWarps, 1}, {m / numWarps, n},
                              {64, n, 16});
  LoadOp bLoad = findLoadThroughView(op.getB(), op->getBlock(), nullptr,
                                     nullptr, /*sharedViews=*/true);
  // A block several mmas read through views of their own, which
  // tile-pipeline-mma streams through one ring.
  if (!loop || !bLoad || !onlyViewedAsB(bLoad.getResult(), [](Operation *op) {
        return isa<ReshapeOp, PermuteOp>(op);
      }))
    return {};
  // A block several mmas read streams only through a ring (one per block):
  // whole 16-byte rows, which both the TMA and the cp.async ring copy.
  if (!bLoad->hasOneUse() &&
      !copiesWholeRows(bLoad,
                       cast<RankedTensorType>(bLoad.getType()).getRank() == 2))
    return {};
  bool aInRing = readsAFromRing(op, chained);
  bool aInRegs = chained || loop.isDefinedOutsideOfLoop(op.getA());
  if (!aInRing && !aInRegs)
    return {};
  return MmaTilingAttr::get(ctx, {numWarps, 1}, {m / numWarps, n}, {64, n, 16});
}

/// `v` transposed: the source of a 2-d transpose, else a new one right
/// after `v` is defined (in front of the loop for a block loaded there).
static Value transposed(OpBuilder &b, Value v) {
  if (auto permute = v.getDefiningOp<PermuteOp>();
      permute && permute.getPerm() == ArrayRef<int64_t>{1, 0})
    return permute.getSrc();
  OpBuilder::InsertionGuard guard(b);
  Operation *def = v.getDefiningOp();
  if (def)
    b.setInsertionPointAfter(def);
  else
    b.setInsertionPointToStart(cast<BlockArgument>(v).getOwner());
  auto type = cast<RankedTensorType>(v.getType());
  auto to = RankedTensorType::get({type.getDimSize(1), type.getDimSize(0)},
                                  type.getElementType());
  Location loc = v.getLoc();
  // Index tiles (a splat, a row or column broadcast) are built transposed,
  // so that they take whatever layout their user gives them.
  if (auto splat = dyn_cast_or_null<SplatOp>(def))
    return SplatOp::create(b, loc, to, splat.getSrc());
  if (auto expand = dyn_cast_or_null<ExpandDimsOp>(def);
      expand && cast<RankedTensorType>(expand.getSrc().getType()).getRank() ==
                    1)
    return ExpandDimsOp::create(b, loc, to, expand.getSrc(),
                                1 - int32_t(expand.getAxis()));
  if (auto bcast = dyn_cast_or_null<BroadcastOp>(def)) {
    Value src = transposed(b, bcast.getSrc());
    return BroadcastOp::create(b, loc, to, src);
  }
  return PermuteOp::create(b, loc, to, v, ArrayRef<int64_t>{1, 0});
}

/// mma(A, B, acc) of a loop as transpose(mma(B^T, A^T, acc^T)) where only
/// the swapped form is a warpgroup mma: M too short to give each warpgroup
/// 64 rows, N long enough. The backward's dQ = dS K of 64 queries becomes
/// dQ^T = K^T dS^T over the head dimension's 128 rows (FlashAttention-3
/// swaps the same product). Only for a fresh product (a splat
/// accumulator). Returns the new mma, or null.
static MmaOp swapForWarpgroups(MmaOp mma, int warps) {
  auto c = cast<RankedTensorType>(mma.getType());
  if (c.getRank() != 2 || !isTensorCore(mma) || mma.getTilingAttr() ||
      !isa<scf::ForOp>(mma->getParentOp()) ||
      c.getDimSize(0) % (16 * warps) == 0 ||
      c.getDimSize(1) % (16 * warps) != 0 ||
      getWarpgroupMmaTiling(mma, warps, /*chained=*/false,
                            /*stagedOperands=*/true))
    return {};
  // A fresh product (a splat accumulator, dQ's zeros) only: a carried
  // accumulator would be transposed back and forth every iteration.
  SplatElementsAttr zero;
  if (!matchPattern(mma.getAcc(), m_Constant(&zero)))
    return {};
  OpBuilder b(mma);
  Location loc = mma.getLoc();
  auto accT = RankedTensorType::get({c.getDimSize(1), c.getDimSize(0)},
                                    c.getElementType());
  Value newAcc =
      arith::ConstantOp::create(b, loc, accT, zero.resizeSplat(accT));
  Value a = transposed(b, mma.getB()), bT = transposed(b, mma.getA());
  auto swapped = MmaOp::create(b, loc, accT, a, bT, newAcc,
                               mma.getAllowTf32(), mma.getFastAccumulation(),
                               MmaTilingAttr());
  if (!getWarpgroupMmaTiling(swapped, warps, /*chained=*/false,
                             /*stagedOperands=*/true)) {
    swapped->erase(); // and the transposes and zeros made for it
    for (Value v : {newAcc, bT, a})
      if (Operation *def = v.getDefiningOp();
          def && def->use_empty() && isMemoryEffectFree(def))
        def->erase();
    return {};
  }
  Value result = PermuteOp::create(b, loc, c, swapped.getResult(),
                                   ArrayRef<int64_t>{1, 0});
  mma.getResult().replaceAllUsesWith(result);
  mma->erase();
  // An atomic update of the product (the backward's dQ) takes it as it is,
  // with its indices and mask transposed instead: the transposed wgmma
  // layout has no form of its own, and converting it would go through
  // shared memory every iteration.
  for (OpOperand &use : llvm::make_early_inc_range(result.getUses())) {
    auto rmw = dyn_cast<AtomicRMWOp>(use.getOwner());
    if (!rmw || use.getOperandNumber() != rmw.getValueMutable()
                                              .getOperandNumber() ||
        !rmw.getResult().use_empty())
      continue;
    OpBuilder rb(rmw);
    SmallVector<Value> indices;
    for (Value index : rmw.getIndices())
      indices.push_back(transposed(rb, index));
    Value mask = rmw.getMask() ? transposed(rb, rmw.getMask()) : Value();
    AtomicRMWOp::create(rb, rmw.getLoc(), accT, rmw.getKindAttr(),
                        rmw.getArray(), swapped.getResult(), indices, mask,
                        rmw.getMemoryOrderAttr(), rmw.getMemoryScopeAttr());
    rmw->erase();
  }
  if (result.use_empty())
    result.getDefiningOp()->erase();
  return swapped;
}

//===----------------------------------------------------------------------===//
// Large reductions into loops
//===----------------------------------------------------------------------===//

namespace {

/// mma(extf(a), extf(b)) of fp8 a and b widened to f16 (the frontend's
/// exact f16 form) -> mma(a, b); false, unchanged, when it is not one.
bool narrowWidenedFp8(MmaOp mma) {
  // The fp8 tensor cores accumulate with fewer bits than f32: only where
  // the program asked for fast accumulation.
  if (!mma.getFastAccumulation())
    return false;
  auto aExt = mma.getA().getDefiningOp<arith::ExtFOp>();
  auto bExt = mma.getB().getDefiningOp<arith::ExtFOp>();
  if (!aExt || !bExt || aExt == bExt || !aExt->hasOneUse() ||
      !bExt->hasOneUse())
    return false;
  Type in = getElementTypeOrSelf(aExt.getIn().getType());
  if (!isFp8(in) || getElementTypeOrSelf(bExt.getIn().getType()) != in)
    return false;
  mma.getAMutable().assign(aExt.getIn());
  mma.getBMutable().assign(bExt.getIn());
  aExt->erase();
  bExt->erase();
  return true;
}

/// Undoes narrowWidenedFp8: the operands widened to f16 again.
void widenFp8(MmaOp mma) {
  OpBuilder b(mma);
  for (OpOperand *operand : {&mma.getAMutable(), &mma.getBMutable()}) {
    auto type = cast<RankedTensorType>(operand->get().getType());
    operand->set(arith::ExtFOp::create(
        b, mma.getLoc(), type.clone(b.getF16Type()), operand->get()));
  }
}

struct TileTilingPass : tile::impl::TileTilingBase<TileTilingPass> {
  using TileTilingBase::TileTilingBase;

  void runOnOperation() override {
    if (warpTiling && failed(tileMmas(getOperation())))
      signalPassFailure();
  }

  LogicalResult tileMmas(ModuleOp module) {
    FailureOr<int> resolved = resolveNumWarps(module, numWarps);
    if (failed(resolved))
      return failure();
    int warps = *resolved;
    unpermuteMmaLoads(module);
    module->setAttr(
        kNumWarpsAttr,
        IntegerAttr::get(IntegerType::get(&getContext(), 32), warps));
    if (warpgroupMma && stagedOperands) {
      SmallVector<MmaOp> all;
      module.walk([&](MmaOp mma) { all.push_back(mma); });
      for (MmaOp mma : all)
        swapForWarpgroups(mma, warps);
    }
    llvm::DenseSet<Operation *> chained = findChainedMmas(module);
    // wgmma for a loop's mmas only if all of them can (one ring layout).
    llvm::DenseMap<Operation *, MmaTilingAttr> warpgroup;
    if (warpgroupMma) {
      llvm::DenseSet<Operation *> mixed;
      SmallVector<MmaOp> mmas, narrowed;
      module.walk([&](MmaOp mma) { mmas.push_back(mma); });
      for (MmaOp mma : mmas) {
        // Widened fp8 operands that can stream K-major: fp8 wgmma.
        bool fp8 = narrowWidenedFp8(mma);
        MmaTilingAttr t =
            getWarpgroupMmaTiling(mma, warps, chained.contains(mma),
                                  stagedOperands);
        if (fp8 && !t)
          widenFp8(mma);
        else if (fp8)
          narrowed.push_back(mma);
        if (t)
          warpgroup[mma] = t;
        else if (!mma.getTensorCoreShape().empty())
          mixed.insert(mma->getParentOp());
      }
      for (auto it = warpgroup.begin(); it != warpgroup.end();) {
        auto cur = it++;
        if (mixed.contains(cur->first->getParentOp()))
          warpgroup.erase(cur);
      }
      // A register-A wgmma loop needs a branch-free body (ptxas).
      llvm::SetVector<Operation *> regA;
      module.walk([&](MmaOp mma) {
        if (warpgroup.count(mma) && !readsAFromRing(mma, chained.contains(mma)))
          regA.insert(mma->getParentOp());
      });
      for (Operation *loop : regA) {
        if (flattenBranches(cast<scf::ForOp>(loop)))
          continue;
        for (auto it = warpgroup.begin(); it != warpgroup.end();) {
          auto cur = it++;
          if (cur->first->getParentOp() == loop)
            warpgroup.erase(cur);
        }
      }
      for (MmaOp mma : narrowed)
        if (!warpgroup.count(mma))
          widenFp8(mma);
    }
    module.walk([&](MmaOp mma) {
      // A tiling for this warp count stays (resuming, hand-written IR).
      if (MmaTilingAttr old = mma.getTilingAttr())
        if (old.getWarps()[0] * old.getWarps()[1] == warps)
          return;
      if (MmaTilingAttr tiling = warpgroup.lookup(mma)) {
        mma.setTilingAttr(tiling);
        return;
      }
      if (MmaTilingAttr tiling =
              getMmaTiling(mma, warps, chained.contains(mma)))
        mma.setTilingAttr(tiling);
    });
    return success();
  }
};

} // namespace
