//===- TileChunkLoops.cpp - long reductions and long-K mmas into loops ----===//
//
// Reductions along an axis longer than `max-reduce-extent` become a loop
// over chunks of a loaded tile, so the whole row never has to sit in
// registers; so do mmas with a K longer than `max-mma-k`, whose unrolled
// code grew with K (ptxas time faster than linearly). Both backends run it,
// before tile-tiling (GPU warp tiling) or the host lowering.
//
//===----------------------------------------------------------------------===//
#include "compiler/Passes.h"
#include "compiler/TileTiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILECHUNKLOOPS
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

static RankedTensorType getTensorType(Value v) {
  return dyn_cast<RankedTensorType>(v.getType());
}

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

struct TileChunkLoopsPass : tile::impl::TileChunkLoopsBase<TileChunkLoopsPass> {
  using TileChunkLoopsBase::TileChunkLoopsBase;

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
