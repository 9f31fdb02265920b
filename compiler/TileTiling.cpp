//===- TileTiling.cpp - block tiles to warp and instruction tiles ---------===//
//
// Makes two tiling decisions explicit in tile IR, before any thread layout:
// (1) how each tensor-core tile.mma splits over the block's warps and into
// mma.sync instructions (#tile.mma_tiling, with the warp count as the module
// attribute tile.num_warps), and (2) reductions along an axis longer than
// `max-reduce-extent` become a loop over chunks of a loaded tile, so the
// whole row never has to sit in registers, and (3) so do mmas with a K
// longer than `max-mma-k`, whose unrolled code grew with K (ptxas time
// faster than linearly).
//
//===----------------------------------------------------------------------===//
#include "compiler/TileTiling.h"
#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
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
                                       bool *transposed) {
  bool permuted = false;
  while (Operation *def = v.getDefiningOp()) {
    if (!v.hasOneUse() || def->getBlock() != block)
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

static bool isFp8(Type type) {
  return isa<Float8E4M3FNType, Float8E5M2Type>(type);
}

/// Whether a warpgroup mma streams A through the cp.async ring (matmul)
/// rather than taking it from registers (Q, or P from the chained mma).
static bool readsAFromRing(MmaOp op, bool chained) {
  if (isFp8(getElementTypeOrSelf(op.getA().getType())))
    return !chained; // only wgmma from the ring takes fp8 (streamsFp8KMajor)
  auto aLoad = op.getA().getDefiningOp<LoadOp>();
  return aLoad && aLoad->getBlock() == op->getBlock() && !aLoad.getOrder() &&
         !chained;
}

/// Whether `load`'s block can be copied in 16-byte cp.async pieces as far
/// as its array tells (TileToGpuPrefetch.cpp checks the thread layout too).
static bool copiesWholeRows(LoadOp load) {
  auto array = cast<ArrayType>(load.getArray().getType());
  unsigned rank = array.getRank();
  int64_t extent = array.getShape()[rank - 1];
  int64_t div =
      ShapedType::isDynamic(extent) ? array.getDivisibility() : extent;
  auto pad = dyn_cast_or_null<FloatAttr>(load.getPaddingAttr());
  return rank == 2 && array.getStrides()[1] == 1 &&
         array.getAlignment() % 16 == 0 && div % 16 == 0 &&
         (!load.getPaddingAttr() || (pad && pad.getValue().isZero())) &&
         getMemoryOrder(load) == MemoryOrder::weak;
}

bool mlir::tile::streamsFp8KMajor(MmaOp op, LoadOp *aLoad, LoadOp *bLoad,
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

MmaTilingAttr mlir::tile::getWarpgroupMmaTiling(MmaOp op, int numWarps,
                                                bool chained) {
  auto a = cast<RankedTensorType>(op.getA().getType());
  auto c = cast<RankedTensorType>(op.getType());
  Type in = a.getElementType();
  bool fp8 = isFp8(in);
  if (a.getRank() != 2 || !(in.isF16() || in.isBF16() || fp8) ||
      !c.getElementType().isF32())
    return {};
  int64_t m = c.getDimSize(0), n = c.getDimSize(1), k = a.getDimSize(1);
  int64_t kBytes = k * (fp8 ? 1 : 2);
  // K: whole 128-byte swizzle panels, or one 64-byte panel (K = 32) for A
  // in shared memory; K^T's rows (attention) are 128-byte panels.
  if (numWarps % 4 || m % (16 * numWarps) || n % 64 || n > 256 ||
      (kBytes % 128 && (chained || kBytes != 64)))
    return {};
  // fp8 wgmma: 32 of K per instruction, both operands K-major in the ring.
  if (fp8) {
    if (chained || !isa<scf::ForOp>(op->getParentOp()) || !streamsFp8KMajor(op))
      return {};
    return MmaTilingAttr::get(op.getContext(), {numWarps, 1}, {m / numWarps, n},
                              {64, n, 32});
  }
  // The operands must be able to stream through the cp.async ring
  // (TileToGpuPrefetch.cpp): B loaded in the body of the loop around the
  // mma; A too (matmul), or A in registers: loop-invariant (Q) or the
  // result of the chained mma (P).
  auto loop = dyn_cast<scf::ForOp>(op->getParentOp());
  if (!loop || !findLoadThroughView(op.getB(), op->getBlock()))
    return {};
  bool aInRing = readsAFromRing(op, chained);
  bool aInRegs = chained || loop.isDefinedOutsideOfLoop(op.getA());
  if (!aInRing && !aInRegs)
    return {};
  MLIRContext *ctx = op.getContext();
  return MmaTilingAttr::get(ctx, {numWarps, 1}, {m / numWarps, n}, {64, n, 16});
}

//===----------------------------------------------------------------------===//
// Large reductions into loops
//===----------------------------------------------------------------------===//

namespace {

/// The ops that compute a reduction's (or an mma's) sources from loads of
/// the full tile: loads, splat constants, splats and elementwise ops, in
/// block order.
struct LoadChain {
  SmallVector<Operation *> ops;
  SmallVector<LoadOp> loads;
};

/// Constants and splats may have other users: they are recomputed per chunk
/// and the originals stay for those users.
bool isCheapLeaf(Operation *op) {
  if (isa<SplatOp>(op))
    return true;
  if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
    auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
    return dense && dense.isSplat();
  }
  return false;
}

/// Whether the combiner can be applied to whole chunks: elementwise ops on
/// scalars (and scalar constants), which then run on tensors.
bool isElementwiseCombiner(ReduceOp reduce) {
  for (Operation &op : reduce.getCombiner().front().without_terminator()) {
    if (op.getNumRegions() || !isMemoryEffectFree(&op) ||
        op.getNumResults() != 1 ||
        !isa<arith::ArithDialect, math::MathDialect>(op.getDialect()))
      return false;
    if (!op.hasTrait<OpTrait::Elementwise>() &&
        !isa<arith::SelectOp, arith::ConstantOp>(op))
      return false;
  }
  return true;
}

/// Whether nothing between `from` and `to` (same block) may write memory.
bool noWritesBetween(Operation *from, Operation *to,
                     const llvm::SetVector<Operation *> &chain) {
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    if (chain.contains(op) || isMemoryEffectFree(op))
      continue;
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects || !effects.onlyHasEffect<MemoryEffects::Read>())
      return false;
  }
  return true;
}

/// The chain computing `srcs` (of one shape) for `consumer` alone.
FailureOr<LoadChain> findChain(ValueRange srcs, Operation *consumer) {
  ArrayRef<int64_t> shape = getTensorType(srcs[0]).getShape();
  Block *block = consumer->getBlock();
  llvm::SetVector<Operation *> chain;
  SmallVector<Value> worklist(srcs);
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    Operation *def = v.getDefiningOp();
    // Cheap leaves may come from outside the block (the canonicalizer hoists
    // constants out of loops); they are recomputed inside with the chain.
    if (!def || (def->getBlock() != block && !isCheapLeaf(def)) ||
        getTensorType(v).getShape() != shape)
      return failure();
    if (!chain.insert(def))
      continue;
    if (isa<LoadOp>(def) || isCheapLeaf(def))
      continue;
    if (!isElementwiseTileOp(def) || !isMemoryEffectFree(def))
      return failure();
    for (Value o : def->getOperands())
      worklist.push_back(o);
  }
  LoadChain result;
  for (Operation *op : chain) {
    // A value used outside the chain would still need the whole tile.
    if (!isCheapLeaf(op) && llvm::any_of(op->getUsers(), [&](Operation *u) {
          return u != consumer && !chain.contains(u);
        }))
      return failure();
    if (auto load = dyn_cast<LoadOp>(op)) {
      // The chunks are read where the consumer is: nothing in between may
      // write what the load reads.
      if (!noWritesBetween(load, consumer, chain))
        return failure();
      result.loads.push_back(load);
    }
    result.ops.push_back(op);
  }
  if (result.loads.empty())
    return failure();
  // Leaves from outside the block first, then the block's ops in order.
  llvm::sort(result.ops, [&](Operation *a, Operation *b) {
    bool aInside = a->getBlock() == block, bInside = b->getBlock() == block;
    if (aInside != bInside)
      return bInside;
    return aInside && a->isBeforeInBlock(b);
  });
  return result;
}

/// The result of `op` (a clone of a chain op) retyped to `shape`; splat
/// constants get a value of the new type.
void retype(Operation *op, ArrayRef<int64_t> shape) {
  Value r = op->getResult(0);
  Type elem = getElementTypeOrSelf(r.getType());
  auto type = RankedTensorType::get(shape, elem);
  r.setType(type);
  if (auto cst = dyn_cast<arith::ConstantOp>(op)) {
    Attribute value = cst.getValue();
    if (auto dense = dyn_cast<DenseElementsAttr>(value))
      value = dense.getSplatValue<Attribute>();
    cst.setValueAttr(DenseElementsAttr::get(type, value));
  }
}

/// Each load of a chain: the block dim its result's chunked axis reads and
/// the tile index of its first chunk there.
using ChunkBases = DenseMap<Operation *, std::pair<unsigned, Value>>;

/// The chunk bases of `chain`'s loads chunked along their result's `axis`:
/// each block's index times `chunks` (chunks per block, an i32).
ChunkBases computeChunkBases(OpBuilder &b, Location loc, const LoadChain &chain,
                             unsigned axis, Value chunks) {
  ChunkBases bases;
  for (LoadOp load : chain.loads) {
    unsigned dim = axis;
    if (auto order = load.getOrder())
      dim = (*order)[axis];
    Value base = arith::MulIOp::create(b, loc, load.getIndices()[dim], chunks);
    bases[load] = {dim, base};
  }
  return bases;
}

/// Clones `chain` at `b` on chunk `j` (null: chunk 0) of its loads, retyped
/// to `shape`; `mapping` maps the chain's values to the clones.
void cloneChainOnChunk(OpBuilder &b, Location loc, const LoadChain &chain,
                       const ChunkBases &bases, Value j,
                       ArrayRef<int64_t> shape, IRMapping &mapping) {
  for (Operation *op : chain.ops) {
    // The chunk's index goes in front of its load.
    Value index;
    if (isa<LoadOp>(op)) {
      index = bases.lookup(op).second;
      if (j)
        index = arith::AddIOp::create(b, loc, index, j);
    }
    Operation *clone = b.clone(*op, mapping);
    retype(clone, shape);
    if (auto load = dyn_cast<LoadOp>(clone))
      load.getIndicesMutable()[bases.lookup(op).first].set(index);
  }
}

/// Erases the full-tile chain once its consumer is gone (cheap leaves may
/// still be used).
void eraseDeadChain(const LoadChain &chain) {
  for (Operation *op : llvm::reverse(chain.ops))
    if (op->use_empty())
      op->erase();
}

//===----------------------------------------------------------------------===//
// Long mmas into loops over K
//===----------------------------------------------------------------------===//

/// The K extent of one chunk of `mma`, or 0 when it is not split: K at most
/// `maxK`, or no power of two <= `maxChunk` that divides K and is a multiple
/// of the instruction's K.
int64_t chooseKChunk(MmaOp mma, int64_t maxK, int64_t maxChunk) {
  auto a = getTensorType(mma.getA());
  int64_t k = a.getDimSize(a.getRank() - 1);
  if (maxK <= 0 || k <= maxK)
    return 0;
  SmallVector<int64_t> instr = mma.getTensorCoreShape();
  int64_t minChunk = instr.empty() ? 1 : instr[2];
  int64_t chunk = maxChunk; // a power of two (checked)
  while (chunk >= minChunk && k % chunk)
    chunk /= 2;
  return chunk >= minChunk && chunk < k ? chunk : 0;
}

/// mma(chain(load A), chain(load B), acc) with K > max-mma-k ->
///   for j in 0..K/KC:
///     acc = mma(chain(load A chunk j), chain(load B chunk j), acc)
/// The chains (loads through elementwise ops, e.g. casts, that only the mma
/// reads) are recomputed per chunk. The chunks cover exactly the loaded
/// blocks (padding included) and are accumulated in K order, as the
/// instructions of the unsplit mma are.
void tileMmaK(MmaOp mma, int64_t maxK, int64_t maxChunk) {
  int64_t chunk = chooseKChunk(mma, maxK, maxChunk);
  if (!chunk)
    return;
  auto aType = getTensorType(mma.getA()), bType = getTensorType(mma.getB());
  if (aType.getEncoding() || bType.getEncoding())
    return; // layouts would have to be chosen again for the chunks
  FailureOr<LoadChain> aChain = findChain(mma.getA(), mma);
  FailureOr<LoadChain> bChain = findChain(mma.getB(), mma);
  if (failed(aChain) || failed(bChain))
    return;
  unsigned rank = aType.getRank(), aAxis = rank - 1, bAxis = rank - 2;
  int64_t k = aType.getDimSize(aAxis);
  SmallVector<int64_t> aShape(aType.getShape()), bShape(bType.getShape());
  aShape[aAxis] = chunk;
  bShape[bAxis] = chunk;

  OpBuilder b(mma);
  Location loc = mma.getLoc();
  auto constI32 = [&](int64_t v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
  };
  // Block index i of K extent k is chunk index i * (k / chunk) + j.
  Value chunks = constI32(k / chunk);
  ChunkBases aBases = computeChunkBases(b, loc, *aChain, aAxis, chunks);
  ChunkBases bBases = computeChunkBases(b, loc, *bChain, bAxis, chunks);
  auto loop = scf::ForOp::create(
      b, loc, constI32(0), chunks, constI32(1), ValueRange{mma.getAcc()},
      [&](OpBuilder &lb, Location, Value j, ValueRange acc) {
        IRMapping mapping;
        cloneChainOnChunk(lb, loc, *aChain, aBases, j, aShape, mapping);
        cloneChainOnChunk(lb, loc, *bChain, bBases, j, bShape, mapping);
        auto step = cast<MmaOp>(lb.clone(*mma));
        step->setOperands(
            {mapping.lookup(mma.getA()), mapping.lookup(mma.getB()), acc[0]});
        scf::YieldOp::create(lb, loc, step.getResult());
      });
  mma.getResult().replaceAllUsesWith(loop.getResult(0));
  mma->erase();
  eraseDeadChain(*aChain);
  eraseDeadChain(*bChain);
}

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
    ModuleOp module = getOperation();
    if (maxReduceExtent > 0) {
      if (!llvm::isPowerOf2_64(reduceChunk) || reduceChunk > maxReduceExtent) {
        module.emitError() << "reduce-chunk must be a power of two <= "
                              "max-reduce-extent, got "
                           << int64_t(reduceChunk);
        return signalPassFailure();
      }
      SmallVector<ReduceOp> reduces;
      module.walk([&](ReduceOp r) { reduces.push_back(r); });
      for (ReduceOp reduce : reduces)
        tileReduction(reduce);
    }
    if (maxMmaK > 0) {
      if (!llvm::isPowerOf2_64(mmaKChunk)) {
        module.emitError() << "mma-k-chunk must be a power of two, got "
                           << int64_t(mmaKChunk);
        return signalPassFailure();
      }
      SmallVector<MmaOp> mmas;
      module.walk([&](MmaOp mma) { mmas.push_back(mma); });
      for (MmaOp mma : mmas)
        tileMmaK(mma, maxMmaK, mmaKChunk);
    }
    if (warpTiling && failed(tileMmas(module)))
      signalPassFailure();
  }

  LogicalResult tileMmas(ModuleOp module) {
    FailureOr<int> resolved = resolveNumWarps(module, numWarps);
    if (failed(resolved))
      return failure();
    int warps = *resolved;
    module->setAttr(
        kNumWarpsAttr,
        IntegerAttr::get(IntegerType::get(&getContext(), 32), warps));
    llvm::DenseSet<Operation *> chained = findChainedMmas(module);
    // wgmma for a loop's mmas only if all of them can (one ring layout).
    llvm::DenseMap<Operation *, MmaTilingAttr> warpgroup;
    if (warpgroupMma) {
      llvm::DenseSet<Operation *> mixed;
      SmallVector<MmaOp> mmas, narrowed;
      module.walk([&](MmaOp mma) { mmas.push_back(mma); });
      for (MmaOp mma : mmas) {
        // Widened fp8 operands that can stream K-major: fp8 wgmma.
        bool fp8 = !chained.contains(mma) && narrowWidenedFp8(mma);
        MmaTilingAttr t =
            getWarpgroupMmaTiling(mma, warps, chained.contains(mma));
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

  /// reduce(chain(load)) along an axis of extent E > max-reduce-extent ->
  ///   acc = chain(load of chunk 0)
  ///   for j in 1..E/C: acc = combine(acc, chain(load of chunk j))
  ///   reduce(acc)
  /// The chunks cover exactly the loaded block (padding included), so the
  /// reduction combines the same elements; the first chunk seeds the
  /// accumulator, so no identity element is needed.
  void tileReduction(ReduceOp reduce) {
    auto srcType = getTensorType(reduce.getSrcs()[0]);
    unsigned axis = reduce.getAxis();
    int64_t extent = srcType.getDimSize(axis);
    // Layouts (mapped IR) would have to be chosen again for the chunks.
    if (extent <= maxReduceExtent || extent % reduceChunk ||
        srcType.getEncoding() || !isElementwiseCombiner(reduce))
      return;
    FailureOr<LoadChain> chain = findChain(reduce.getSrcs(), reduce);
    if (failed(chain))
      return;
    int64_t chunks = extent / reduceChunk;
    SmallVector<int64_t> chunkShape(srcType.getShape());
    chunkShape[axis] = reduceChunk;

    OpBuilder b(reduce);
    Location loc = reduce.getLoc();
    auto constI32 = [&](int64_t v) {
      return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
    };
    // Each load's tile index along the reduced axis, in chunks.
    ChunkBases chunkBase =
        computeChunkBases(b, loc, *chain, axis, constI32(chunks));
    // The chain on chunk `j` (null: chunk 0); returns the reduce's sources.
    auto emitChunk = [&](OpBuilder &b, Value j) {
      IRMapping mapping;
      cloneChainOnChunk(b, loc, *chain, chunkBase, j, chunkShape, mapping);
      SmallVector<Value> srcs;
      for (Value src : reduce.getSrcs())
        srcs.push_back(mapping.lookup(src));
      return srcs;
    };
    SmallVector<Value> init = emitChunk(b, Value());
    auto loop = scf::ForOp::create(
        b, loc, constI32(1), constI32(chunks), constI32(1), init,
        [&](OpBuilder &lb, Location, Value j, ValueRange acc) {
          SmallVector<Value> next = emitChunk(lb, j);
          // The scalar combiner, elementwise on whole chunks.
          SmallVector<Value> yields =
              cloneCombiner(lb, reduce.getCombiner(), acc, next,
                            [&](Operation *op) { retype(op, chunkShape); });
          scf::YieldOp::create(lb, loc, yields);
        });
    reduce->setOperands(loop.getResults());
    eraseDeadChain(*chain);
  }
};

} // namespace
