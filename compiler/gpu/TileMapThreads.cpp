//===- TileMapThreads.cpp - give every tile a thread layout ---------------===//
//
// Two phases. (A) Decide a layout for every tensor value that is not cheap
// to recompute: anchors (loads, mma, reductions) pick theirs, elementwise ops
// and shape ops inherit from their operands, values flowing along control
// flow (scf.for/while iter args, scf.if/while results) take the layouts of
// the values flowing in (loops iterated to a fixpoint). (B) Rewrite the
// types; operands whose layout differs from what their user needs get a
// tile.convert_layout, except cheap values (constants, splats, iota and
// elementwise chains of them), which are recomputed in the needed layout
// instead.
//
//===----------------------------------------------------------------------===//
#include "compiler/Passes.h"
#include "compiler/TileTiling.h"
#include "compiler/gpu/LinearLayout.h"
#include "compiler/gpu/TileToGpuCommon.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"

#include <map>

namespace mlir::tile {
#define GEN_PASS_DEF_TILEMAPTHREADS
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

/// Longer chains of cheap ops are computed once and converted, not
/// recomputed per layout.
constexpr unsigned kMaxRematHeight = 32;

RankedTensorType getTensorType(Value v) {
  return dyn_cast<RankedTensorType>(v.getType());
}

class LayoutAssigner {
public:
  LayoutAssigner(MLIRContext *ctx, int numWarps, func::FuncOp func)
      : ctx(ctx), numWarps(numWarps) {
    // Chained mmas (one's result feeds the other's A, as P = softmax(Q K^T)
    // feeds P V): warps split M only, so that the A operand is already in
    // each warp's registers and row reductions stay inside a warp. Only for
    // mmas tile-tiling has not tiled.
    chained = findChainedMmas(func);
    // Tiles of a shape that some reduction reduces: keep warps off that axis.
    func.walk([&](ReduceOp reduce) {
      auto type = getTensorType(reduce.getSrcs()[0]);
      reducedAxis.try_emplace(SmallVector<int64_t>(type.getShape()),
                              reduce.getAxis());
    });
    // In program order, so that isRemat recurses one level only (operands
    // are decided first) however long the chains.
    func.walk([&](Operation *op) {
      for (Value r : op->getResults())
        (void)isRemat(r);
    });
  }

  void decide(Region &region) {
    for (Block &block : region)
      for (Operation &op : block)
        visit(&op);
  }
  void materialize(func::FuncOp func);

private:
  MLIRContext *ctx;
  int numWarps;
  DenseMap<Value, Attribute> layouts;
  DenseMap<Value, bool> rematCache;
  DenseMap<Value, unsigned> rematHeight; // of the chain recomputing a value
  DenseMap<std::pair<Value, Attribute>, Value> clones;
  std::map<SmallVector<int64_t>, int> reducedAxis;
  DenseSet<Operation *> chained;
  /// Per operand forwarded along a control-flow edge (yield, condition,
  /// loop init), one successor input it becomes (all have its type).
  DenseMap<OpOperand *, Value> successorInput;

  bool isRemat(Value v);
  Attribute get(Value v) { return layouts.lookup(v); }
  void set(Value v, Attribute layout) {
    if (layout)
      layouts[v] = layout;
  }
  Attribute defaultLayout(RankedTensorType type, unsigned contigDim) {
    unsigned bits = type.getElementType().getIntOrFloatBitWidth();
    // A scalar tile: the one element of a 1-d tile, sliced (as a full
    // reduction's result is), so its layout has rank 0 too.
    if (type.getRank() == 0)
      return SliceLayoutAttr::get(
          ctx, 0, getDefaultBlockedLayout(ctx, {1}, 0, bits, numWarps));
    auto it = reducedAxis.find(SmallVector<int64_t>(type.getShape()));
    return getDefaultBlockedLayout(ctx, type.getShape(), contigDim, bits,
                                   numWarps,
                                   it == reducedAxis.end() ? -1 : it->second);
  }
  Attribute defaultLayout(RankedTensorType type) {
    return defaultLayout(type, type.getRank() ? type.getRank() - 1 : 0);
  }
  Attribute decidedOrDefault(Value v) {
    if (Attribute l = get(v))
      return l;
    return defaultLayout(getTensorType(v));
  }
  bool equivalent(Attribute a, Attribute b, ArrayRef<int64_t> shape) {
    if (a == b)
      return true;
    FailureOr<LinearLayout> la = toLinearLayout(a, shape);
    FailureOr<LinearLayout> lb = toLinearLayout(b, shape);
    return succeeded(la) && succeeded(lb) && *la == *lb;
  }

  void visit(Operation *op);
  void visitRegionBranch(RegionBranchOpInterface op);
  Attribute expandLayout(Attribute src, RankedTensorType srcType,
                         unsigned axis);
  Attribute permuteLayout(Attribute src, ArrayRef<int64_t> perm);

  Attribute requiredOperandLayout(Operation *op, unsigned idx);
  Value getInLayout(Value v, Attribute layout, Operation *user);
  Value cloneInLayout(Value v, Attribute layout);
};

bool LayoutAssigner::isRemat(Value v) {
  if (!getTensorType(v))
    return false;
  auto it = rematCache.find(v);
  if (it != rematCache.end())
    return it->second;
  Operation *def = v.getDefiningOp();
  bool result = false;
  if (!def) {
    result = false;
  } else if (auto cst = dyn_cast<arith::ConstantOp>(def)) {
    auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
    result = dense && dense.isSplat();
  } else if (isa<SplatOp, IotaOp>(def)) {
    result = true;
  } else if (isElementwiseTileOp(def) || isa<BroadcastOp, ExpandDimsOp>(def)) {
    unsigned height = 1;
    result = isMemoryEffectFree(def) &&
             llvm::all_of(def->getOperands(), [&](Value o) {
               if (!getTensorType(o))
                 return true;
               if (!isRemat(o))
                 return false;
               height = std::max(height, rematHeight.lookup(o) + 1);
               return true;
             });
    // Each user in another layout clones the whole chain (recursively).
    result = result && height <= kMaxRematHeight;
    if (result)
      rematHeight[v] = height;
  }
  rematCache[v] = result;
  return result;
}

Attribute LayoutAssigner::expandLayout(Attribute src, RankedTensorType srcType,
                                       unsigned axis) {
  if (auto slice = dyn_cast<SliceLayoutAttr>(src))
    if (slice.getDim() == axis)
      return slice.getParent();
  if (auto b = dyn_cast<BlockedLayoutAttr>(src)) {
    // The same distribution with a size-1 dimension inserted (most major).
    auto insert = [&](ArrayRef<unsigned> v, unsigned x) {
      SmallVector<unsigned> r(v);
      r.insert(r.begin() + axis, x);
      return r;
    };
    SmallVector<unsigned> order;
    for (unsigned o : b.getOrder())
      order.push_back(o >= axis ? o + 1 : o);
    order.push_back(axis);
    return BlockedLayoutAttr::get(ctx, insert(b.getSizePerThread(), 1),
                                  insert(b.getThreadsPerWarp(), 1),
                                  insert(b.getWarpsPerCTA(), 1), order);
  }
  SmallVector<int64_t> shape(srcType.getShape());
  shape.insert(shape.begin() + axis, 1);
  return defaultLayout(RankedTensorType::get(shape, srcType.getElementType()));
}

Attribute LayoutAssigner::permuteLayout(Attribute src, ArrayRef<int64_t> perm) {
  // `src` is null when the source's layout is undecided (a function
  // argument): the result then takes a default layout.
  auto b = dyn_cast_if_present<BlockedLayoutAttr>(src);
  if (!b)
    return {};
  auto apply = [&](ArrayRef<unsigned> v) {
    SmallVector<unsigned> r;
    for (int64_t p : perm)
      r.push_back(v[p]);
    return r;
  };
  SmallVector<unsigned> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = i;
  SmallVector<unsigned> order;
  for (unsigned o : b.getOrder())
    order.push_back(inverse[o]);
  return BlockedLayoutAttr::get(ctx, apply(b.getSizePerThread()),
                                apply(b.getThreadsPerWarp()),
                                apply(b.getWarpsPerCTA()), order);
}

void LayoutAssigner::visit(Operation *op) {
  if (auto branch = dyn_cast<RegionBranchOpInterface>(op))
    return visitRegionBranch(branch);
  if (op->getNumResults() == 0 || llvm::none_of(op->getResults(), [](Value r) {
        return getTensorType(r) != nullptr;
      }))
    return;
  if (llvm::all_of(op->getResults(), [&](Value r) { return isRemat(r); }))
    return;
  Value result = op->getResult(0);
  RankedTensorType type = getTensorType(result);

  if (auto load = dyn_cast<LoadOp>(op)) {
    unsigned rank = type.getRank(), contig = rank - 1;
    if (auto order = load.getOrder())
      for (auto [i, o] : llvm::enumerate(*order))
        if (o == static_cast<int64_t>(rank - 1))
          contig = i;
    return set(result, defaultLayout(type, contig));
  }
  if (auto mma = dyn_cast<MmaOp>(op)) {
    // The warp grid tile-tiling chose, else the same choice made here.
    if (MmaTilingAttr tiling = mma.getTilingAttr())
      return set(result,
                 MmaLayoutAttr::get(
                     ctx, 2, llvm::to_vector_of<unsigned>(tiling.getWarps())));
    if (getMmaKind(mma) != MmaKind::Fma)
      return set(result, getMmaLayout(ctx, type.getShape(), numWarps,
                                      chained.contains(mma)));
    return set(result, decidedOrDefault(mma.getAcc()));
  }
  if (auto reduce = dyn_cast<ReduceOp>(op)) {
    Attribute src = decidedOrDefault(reduce.getSrcs()[0]);
    for (Value r : reduce.getResults())
      set(r, SliceLayoutAttr::get(ctx, reduce.getAxis(), src));
    return;
  }
  if (auto scan = dyn_cast<ScanOp>(op)) {
    Attribute src = decidedOrDefault(scan.getSrcs()[0]);
    for (Value r : scan.getResults())
      set(r, src);
    return;
  }
  if (auto bcast = dyn_cast<BroadcastOp>(op))
    return set(result, get(bcast.getSrc()));
  if (auto expand = dyn_cast<ExpandDimsOp>(op)) {
    if (Attribute src = get(expand.getSrc()))
      set(result,
          expandLayout(src, getTensorType(expand.getSrc()), expand.getAxis()));
    return;
  }
  if (auto permute = dyn_cast<PermuteOp>(op)) {
    Attribute src = permuteLayout(get(permute.getSrc()), permute.getPerm());
    return set(result, src ? src : defaultLayout(type));
  }
  if (auto gather = dyn_cast<GatherOp>(op)) {
    for (Value idx : gather.getIndices())
      if (Attribute l = get(idx))
        return set(result, l);
    return set(result, defaultLayout(type));
  }
  if (isa<AtomicRMWOp, AtomicCASOp>(op)) {
    for (Value operand : op->getOperands())
      if (getTensorType(operand))
        if (Attribute l = get(operand))
          return set(result, l);
    return set(result, defaultLayout(type));
  }
  if (isElementwiseTileOp(op)) {
    for (Value operand : op->getOperands())
      if (getTensorType(operand) &&
          getTensorType(operand).getShape() == type.getShape())
        if (Attribute l = get(operand))
          return set(result, l);
    return; // Undecided until a loop-carried operand is.
  }
  // Anything else (reshape, convert_layout, unknown ops): a fresh layout.
  for (Value r : op->getResults())
    if (auto t = getTensorType(r))
      set(r, defaultLayout(t));
}

/// scf.for, scf.while, scf.if (any region branch op). Each successor input
/// (a region argument or a result) takes the layout of the values flowing
/// into it: a terminator's (the loop-carried value, a branch's yield) over
/// the op's own operand (a loop's init: converted once, in front of the
/// loop); of several terminators, the layout it already has if one of them
/// agrees, else an mma layout, else the first in region order. Loops
/// iterate to a fixpoint, as their bodies' layouts follow their arguments'.
void LayoutAssigner::visitRegionBranch(RegionBranchOpInterface op) {
  RegionBranchInverseSuccessorMapping preds;
  op.getSuccessorInputOperandMapping(preds);
  SmallVector<Value> inputs;
  for (Region &region : op->getRegions())
    if (!region.empty())
      for (BlockArgument arg : region.front().getArguments())
        if (getTensorType(arg))
          inputs.push_back(arg);
  for (Value r : op->getResults())
    if (getTensorType(r))
      inputs.push_back(r);
  DenseMap<Value, Attribute> cur;
  for (Value v : inputs)
    for (OpOperand *from : preds.lookup(v))
      if (from->getOwner() == op.getOperation() && !cur.lookup(v))
        cur[v] = get(from->get());
  // Terminators in region order: the choice must not depend on pointers.
  DenseMap<Operation *, unsigned> order;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      order.try_emplace(block.getTerminator(), order.size());
  auto fromTerminators = [&](Value v) -> Attribute {
    SmallVector<std::pair<unsigned, Attribute>> candidates;
    for (OpOperand *from : preds.lookup(v))
      if (from->getOwner() != op.getOperation())
        if (Attribute l = get(from->get()))
          candidates.push_back({order.lookup(from->getOwner()), l});
    llvm::sort(candidates, llvm::less_first());
    // An mma accumulator converted would go through shared memory (and
    // back, when it returns to the mma).
    Attribute first, mma;
    for (auto &[pos, l] : candidates) {
      if (l == cur.lookup(v))
        return l;
      first = first ? first : l;
      mma = mma || !isa<MmaLayoutAttr>(l) ? mma : l;
    }
    return mma ? mma : first;
  };
  bool loop = op.hasLoop();
  Region *last = nullptr;
  for (Region &region : op->getRegions())
    last = region.empty() ? last : &region;
  for (int iter = 0; iter < (loop ? 4 : 1); ++iter) {
    bool changed = false;
    // A loop region by region, so that scf.while's after region sees what
    // this iteration's condition passes; scf.if once both branches are.
    for (Region &region : op->getRegions()) {
      if (region.empty())
        continue;
      for (BlockArgument arg : region.front().getArguments()) {
        layouts.erase(arg);
        set(arg, cur.lookup(arg));
      }
      decide(region);
      if (!loop && &region != last)
        continue;
      for (Value v : inputs) {
        Attribute l = fromTerminators(v);
        // Nothing decided it (a loop of constants): any layout, once.
        if (!l && !cur.lookup(v) && loop && iter > 0)
          l = defaultLayout(getTensorType(v));
        if (l && l != cur.lookup(v)) {
          cur[v] = l;
          changed = true;
        }
      }
    }
    if (!changed && iter > 0)
      break;
  }
  // Region arguments always get one; an scf.if result that no branch
  // decides (constants) is left to its users' default, as a constant is.
  for (Value v : inputs) {
    Attribute l = cur.lookup(v);
    if (!l && (loop || isa<BlockArgument>(v)))
      l = defaultLayout(getTensorType(v));
    set(v, l);
  }
}

/// The layout `op` needs its operand `idx` in (null: any).
Attribute LayoutAssigner::requiredOperandLayout(Operation *op, unsigned idx) {
  Value operand = op->getOperand(idx);
  auto resultLayout = [&]() -> Attribute {
    return cast<RankedTensorType>(op->getResult(0).getType()).getEncoding();
  };
  if (isElementwiseTileOp(op) || isa<BroadcastOp>(op))
    return resultLayout();
  if (auto expand = dyn_cast<ExpandDimsOp>(op)) {
    Attribute want =
        SliceLayoutAttr::get(ctx, expand.getAxis(), resultLayout());
    Attribute have = get(operand);
    if (have && equivalent(have, want, getTensorType(operand).getShape()))
      return have;
    return want;
  }
  if (auto mma = dyn_cast<MmaOp>(op))
    return idx == 2 ? resultLayout() : decidedOrDefault(operand);
  if (isa<ReduceOp, ScanOp>(op))
    return decidedOrDefault(op->getOperand(0));
  if (isa<GatherOp, AtomicRMWOp, AtomicCASOp>(op))
    return resultLayout();
  if (auto scatter = dyn_cast<ScatterOp>(op)) {
    if (Attribute l = get(scatter.getValue()))
      return l;
    for (Value i : scatter.getIndices())
      if (Attribute l = get(i))
        return l;
    return defaultLayout(getTensorType(scatter.getValue()));
  }
  if (auto store = dyn_cast<StoreOp>(op))
    return decidedOrDefault(operand);
  // Along a control-flow edge: the type of what it becomes.
  if (Value input = successorInput.lookup(&op->getOpOperand(idx)))
    return getTensorType(input).getEncoding();
  return decidedOrDefault(operand);
}

Value LayoutAssigner::cloneInLayout(Value v, Attribute layout) {
  auto key = std::make_pair(v, layout);
  if (Value c = clones.lookup(key))
    return c;
  Operation *def = v.getDefiningOp();
  OpBuilder b(def);
  IRMapping mapping;
  for (auto [i, operand] : llvm::enumerate(def->getOperands())) {
    if (!getTensorType(operand))
      continue;
    Attribute want = layout;
    if (auto expand = dyn_cast<ExpandDimsOp>(def))
      want = SliceLayoutAttr::get(ctx, expand.getAxis(), layout);
    mapping.map(operand, cloneInLayout(operand, want));
  }
  Operation *clone = b.clone(*def, mapping);
  auto type = getTensorType(v);
  clone->getResult(0).setType(
      RankedTensorType::get(type.getShape(), type.getElementType(), layout));
  if (auto cst = dyn_cast<arith::ConstantOp>(clone)) {
    auto dense = cast<DenseElementsAttr>(cst.getValue());
    cst.setValueAttr(
        DenseElementsAttr::get(cast<ShapedType>(clone->getResult(0).getType()),
                               dense.getSplatValue<Attribute>()));
  }
  clones[key] = clone->getResult(0);
  return clone->getResult(0);
}

Value LayoutAssigner::getInLayout(Value v, Attribute layout, Operation *user) {
  if (isRemat(v))
    return cloneInLayout(v, layout);
  auto type = getTensorType(v);
  if (type.getEncoding() == layout)
    return v;
  OpBuilder b(user);
  return ConvertLayoutOp::create(
      b, user->getLoc(),
      RankedTensorType::get(type.getShape(), type.getElementType(), layout), v);
}

void LayoutAssigner::materialize(func::FuncOp func) {
  func.walk([&](RegionBranchOpInterface op) {
    RegionBranchSuccessorMapping mapping;
    op.getSuccessorOperandInputMapping(mapping);
    for (auto &[operand, inputs] : mapping)
      if (!inputs.empty())
        successorInput[operand] = inputs.front();
  });
  // Types first, so that required layouts can be read off the results.
  func.walk([&](Operation *op) {
    for (Value r : op->getResults())
      if (auto type = getTensorType(r))
        if (!isRemat(r))
          r.setType(RankedTensorType::get(
              type.getShape(), type.getElementType(), decidedOrDefault(r)));
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          if (auto type = getTensorType(arg))
            if (Attribute l = get(arg))
              arg.setType(RankedTensorType::get(type.getShape(),
                                                type.getElementType(), l));
  });
  SmallVector<Operation *> users;
  func.walk([&](Operation *op) {
    // Remat ops are cloned on demand; their combiner bodies hold scalars.
    if (op->getNumResults() == 1 && isRemat(op->getResult(0)))
      return;
    users.push_back(op);
  });
  for (Operation *op : users)
    for (unsigned i = 0; i < op->getNumOperands(); ++i) {
      Value operand = op->getOperand(i);
      if (!getTensorType(operand))
        continue;
      Attribute want = requiredOperandLayout(op, i);
      Value repl = getInLayout(operand, want, op);
      if (repl != operand)
        op->setOperand(i, repl);
    }
  // Originals of recomputed values are dead now (chains: repeat).
  bool erased = true;
  while (erased) {
    SmallVector<Operation *> dead;
    func.walk([&](Operation *op) {
      if (op->getNumResults() == 1 && getTensorType(op->getResult(0)) &&
          !getTensorType(op->getResult(0)).getEncoding() && op->use_empty() &&
          isMemoryEffectFree(op))
        dead.push_back(op);
    });
    for (Operation *op : dead)
      op->erase();
    erased = !dead.empty();
  }
}

/// Cleanup: a convert_layout whose source is computed by a chain of
/// single-use, layout-agnostic ops (loads, expand_dims, broadcast,
/// elementwise, constants) is removed by computing the chain in the wanted
/// layout directly (Triton's backward rematerialization, simplified).
class ConversionRemover {
public:
  explicit ConversionRemover(MLIRContext *ctx) : ctx(ctx) {}

  void run(func::FuncOp func) {
    SmallVector<ConvertLayoutOp> converts;
    func.walk([&](ConvertLayoutOp c) { converts.push_back(c); });
    for (ConvertLayoutOp c : converts) {
      Attribute want = getTensorType(c.getResult()).getEncoding();
      if (!canRetype(c.getSrc(), want, 0)) {
        narrowBroadcastConversion(c);
        continue;
      }
      retype(c.getSrc(), want);
      if (c.getSrc().getType() == c.getType()) {
        c.getResult().replaceAllUsesWith(c.getSrc());
        c.erase();
      }
    }
  }

private:
  MLIRContext *ctx;

  /// A load may change layout if its accesses stay as wide, or if it is a
  /// small tile (a row of per-column values: narrower accesses to a few
  /// cache lines cost less than the conversion, a barrier).
  bool keepsVectorWidth(LoadOp load, Attribute layout) {
    auto type = getTensorType(load.getResult());
    constexpr int64_t kSmallTileBytes = 1024;
    if (type.getElementType().isIntOrFloat() &&
        type.getNumElements() *
                llvm::divideCeil(type.getElementTypeBitWidth(), 8) <=
            kSmallTileBytes)
      return true;
    unsigned rank = type.getRank(), contig = rank - 1;
    if (auto order = load.getOrder())
      for (auto [i, o] : llvm::enumerate(*order))
        if (o == static_cast<int64_t>(rank - 1))
          contig = i;
    FailureOr<LinearLayout> have = toLinearLayout(type);
    FailureOr<LinearLayout> want = toLinearLayout(layout, type.getShape());
    if (failed(have) || failed(want) || rank == 0)
      return false;
    int64_t limit =
        128 / std::max(8u, type.getElementType().getIntOrFloatBitWidth());
    return std::min(getContiguity(*want, contig), limit) >=
           std::min(getContiguity(*have, contig), limit);
  }

  Attribute sliceOf(Attribute layout, unsigned axis) {
    return SliceLayoutAttr::get(ctx, axis, layout);
  }

  /// The layout a reshape's source takes for its result to have `layout`,
  /// where the reshape only drops one unit axis `a` and `layout` is a slice
  /// of some parent at `a`: the parent (the reshape is then an inverse
  /// expand_dims). Null otherwise. A row of an (n, m) array loaded as
  /// (1, m) and reshaped to (m,) is then loaded in the layout its users
  /// want (attention's backward loaded two such rows per iteration and
  /// moved them through shared memory, a block-wide barrier each).
  Attribute squeezedSourceLayout(ReshapeOp reshape, Attribute layout) {
    auto slice = dyn_cast<SliceLayoutAttr>(layout);
    ArrayRef<int64_t> from = getTensorType(reshape.getSrc()).getShape();
    ArrayRef<int64_t> to = getTensorType(reshape.getResult()).getShape();
    if (!slice || from.size() != to.size() + 1 || slice.getDim() >= from.size())
      return {};
    unsigned axis = slice.getDim();
    if (from[axis] != 1 || from.take_front(axis) != to.take_front(axis) ||
        from.drop_front(axis + 1) != to.drop_front(axis))
      return {};
    return slice.getParent();
  }

  /// convert_layout(broadcast(expand_dims(x))) moves every replicated
  /// element through shared memory (attention's backward broadcast a row
  /// vector into a 128x64 tile twice per iteration this way: most of its
  /// time). Converting x instead, where it is defined (outside the loop when
  /// it is loop-invariant), and broadcasting it in the wanted layout moves
  /// only x's elements.
  void narrowBroadcastConversion(ConvertLayoutOp c) {
    SmallVector<Operation *> chain; // from the convert's source upwards
    SmallVector<Attribute> chainLayouts;
    Attribute layout = getTensorType(c.getResult()).getEncoding();
    Value root = c.getSrc();
    bool broadcasts = false;
    while (Operation *def = root.getDefiningOp()) {
      if (auto expand = dyn_cast<ExpandDimsOp>(def)) {
        chain.push_back(def);
        chainLayouts.push_back(layout);
        layout = sliceOf(layout, expand.getAxis());
        root = expand.getSrc();
      } else if (auto bcast = dyn_cast<BroadcastOp>(def)) {
        chain.push_back(def);
        chainLayouts.push_back(layout);
        root = bcast.getSrc();
        broadcasts = true;
      } else {
        break;
      }
    }
    if (!broadcasts)
      return;
    auto rootType = getTensorType(root);
    Value converted = root;
    if (rootType.getEncoding() != layout) {
      // Next to the use, unless x comes from an enclosing region (a loop's
      // invariant): then once, where x is defined.
      OpBuilder b(c);
      if (root.getParentRegion() != c->getParentRegion()) {
        if (Operation *def = root.getDefiningOp())
          b.setInsertionPointAfter(def);
        else
          b.setInsertionPointToStart(cast<BlockArgument>(root).getOwner());
      }
      converted = ConvertLayoutOp::create(
          b, c.getLoc(),
          RankedTensorType::get(rootType.getShape(), rootType.getElementType(),
                                layout),
          root);
    }
    OpBuilder b(c);
    for (int i = chain.size() - 1; i >= 0; --i) {
      IRMapping mapping;
      mapping.map(chain[i]->getOperand(0), converted);
      Operation *clone = b.clone(*chain[i], mapping);
      auto type = getTensorType(clone->getResult(0));
      clone->getResult(0).setType(RankedTensorType::get(
          type.getShape(), type.getElementType(), chainLayouts[i]));
      converted = clone->getResult(0);
    }
    c.getResult().replaceAllUsesWith(converted);
    c.erase();
    for (Operation *op : chain)
      if (op->use_empty())
        op->erase();
  }

  bool canRetype(Value v, Attribute layout, int depth) {
    Operation *def = v.getDefiningOp();
    if (depth > 8 || !v.hasOneUse() || !def || def->getNumResults() != 1)
      return false;
    if (auto load = dyn_cast<LoadOp>(def))
      return keepsVectorWidth(load, layout);
    if (isa<ConvertLayoutOp, SplatOp, IotaOp>(def))
      return true;
    if (auto cst = dyn_cast<arith::ConstantOp>(def)) {
      auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
      return dense && dense.isSplat();
    }
    if (auto expand = dyn_cast<ExpandDimsOp>(def))
      return canRetype(expand.getSrc(), sliceOf(layout, expand.getAxis()),
                       depth + 1);
    if (auto reshape = dyn_cast<ReshapeOp>(def)) {
      Attribute source = squeezedSourceLayout(reshape, layout);
      return source && canRetype(reshape.getSrc(), source, depth + 1);
    }
    if (auto bcast = dyn_cast<BroadcastOp>(def))
      return canRetype(bcast.getSrc(), layout, depth + 1);
    if (isElementwiseTileOp(def) && isMemoryEffectFree(def))
      return llvm::all_of(def->getOperands(), [&](Value o) {
        return !getTensorType(o) || canRetype(o, layout, depth + 1);
      });
    return false;
  }

  void retype(Value v, Attribute layout) {
    auto type = getTensorType(v);
    auto newType =
        RankedTensorType::get(type.getShape(), type.getElementType(), layout);
    v.setType(newType);
    Operation *def = v.getDefiningOp();
    if (auto cst = dyn_cast<arith::ConstantOp>(def)) {
      auto dense = cast<DenseElementsAttr>(cst.getValue());
      cst.setValueAttr(
          DenseElementsAttr::get(newType, dense.getSplatValue<Attribute>()));
    } else if (auto c = dyn_cast<ConvertLayoutOp>(def)) {
      if (c.getSrc().getType() == newType) {
        v.replaceAllUsesWith(c.getSrc());
        c.erase();
      }
    } else if (auto expand = dyn_cast<ExpandDimsOp>(def)) {
      retype(expand.getSrc(), sliceOf(layout, expand.getAxis()));
    } else if (auto reshape = dyn_cast<ReshapeOp>(def)) {
      retype(reshape.getSrc(), squeezedSourceLayout(reshape, layout));
    } else if (auto bcast = dyn_cast<BroadcastOp>(def)) {
      retype(bcast.getSrc(), layout);
    } else if (isElementwiseTileOp(def)) {
      for (Value o : def->getOperands())
        if (getTensorType(o))
          retype(o, layout);
    }
  }
};

struct TileMapThreadsPass : tile::impl::TileMapThreadsBase<TileMapThreadsPass> {
  using TileMapThreadsBase::TileMapThreadsBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The option, else what tile-tiling recorded, else its choice.
    FailureOr<int> resolved = resolveNumWarps(module, numWarps);
    if (failed(resolved))
      return signalPassFailure();
    int warps = *resolved;
    WalkResult tiled = module.walk([&](MmaOp mma) {
      MmaTilingAttr tiling = mma.getTilingAttr();
      if (!tiling || tiling.getWarps()[0] * tiling.getWarps()[1] == warps)
        return WalkResult::advance();
      mma.emitOpError() << "was tiled for "
                        << tiling.getWarps()[0] * tiling.getWarps()[1]
                        << " warps, but num_warps is " << warps;
      return WalkResult::interrupt();
    });
    if (tiled.wasInterrupted())
      return signalPassFailure();
    // Layouts are decided inside a function: one that takes or returns a
    // tensor (not a kernel, which takes arrays) would be left with unmapped
    // tensors at its boundary.
    WalkResult boundary = module.walk([&](func::FuncOp func) {
      FunctionType type = func.getFunctionType();
      auto isTensor = [](Type t) { return isa<RankedTensorType>(t); };
      if (func.isExternal() || (llvm::none_of(type.getInputs(), isTensor) &&
                                llvm::none_of(type.getResults(), isTensor)))
        return WalkResult::advance();
      func.emitOpError() << "takes or returns a tensor, which has no thread "
                            "layout: a kernel takes !tile.array values and "
                            "scalars and returns nothing";
      return WalkResult::interrupt();
    });
    if (boundary.wasInterrupted())
      return signalPassFailure();
    module->setAttr(
        kNumWarpsAttr,
        IntegerAttr::get(IntegerType::get(&getContext(), 32), warps));
    module.walk([&](func::FuncOp func) {
      if (func.isExternal())
        return;
      LayoutAssigner assigner(&getContext(), warps, func);
      assigner.decide(func.getBody());
      assigner.materialize(func);
      ConversionRemover(&getContext()).run(func);
    });
  }
};

} // namespace
