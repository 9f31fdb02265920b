//===- LinearLayout.cpp - layouts as maps from hardware bits --------------===//
#include "compiler/gpu/LinearLayout.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::tile;

SmallVector<int64_t, 4> LinearLayout::regCoord(int64_t r) const {
  SmallVector<int64_t, 4> coord(getRank(), 0);
  for (auto [bit, basis] : llvm::enumerate(regs))
    if (r & (int64_t(1) << bit))
      for (unsigned d = 0; d < getRank(); ++d)
        coord[d] ^= basis[d];
  return coord;
}

static bool isZero(ArrayRef<int64_t> basis) {
  return llvm::all_of(basis, [](int64_t v) { return v == 0; });
}

static unsigned replicaMask(ArrayRef<LinearLayout::Basis> bases) {
  unsigned mask = 0;
  for (auto [bit, basis] : llvm::enumerate(bases))
    if (isZero(basis))
      mask |= 1u << bit;
  return mask;
}

unsigned LinearLayout::laneReplicaMask() const { return replicaMask(lanes); }
unsigned LinearLayout::warpReplicaMask() const { return replicaMask(warps); }

/// Applies `fn` to every basis, then drops register bases that became zero.
template <typename Fn>
static LinearLayout mapBases(const LinearLayout &in, ArrayRef<int64_t> newShape,
                             Fn fn) {
  LinearLayout out;
  out.shape.assign(newShape.begin(), newShape.end());
  for (const auto &b : in.regs) {
    LinearLayout::Basis nb = fn(b);
    if (!isZero(nb))
      out.regs.push_back(nb);
  }
  for (const auto &b : in.lanes)
    out.lanes.push_back(fn(b));
  for (const auto &b : in.warps)
    out.warps.push_back(fn(b));
  return out;
}

LinearLayout LinearLayout::sliced(unsigned dim) const {
  SmallVector<int64_t> newShape(shape.begin(), shape.end());
  newShape.erase(newShape.begin() + dim);
  return mapBases(*this, newShape, [&](const Basis &b) {
    Basis nb(b);
    if (b[dim] != 0)
      std::fill(nb.begin(), nb.end(), 0);
    nb.erase(nb.begin() + dim);
    return nb;
  });
}

LinearLayout LinearLayout::restrictedTo(ArrayRef<int64_t> smaller) const {
  return mapBases(*this, smaller, [&](const Basis &b) {
    Basis nb(b);
    for (unsigned d = 0; d < nb.size(); ++d)
      if (nb[d] >= smaller[d])
        nb[d] = 0;
    return nb;
  });
}

LinearLayout LinearLayout::permuted(ArrayRef<int64_t> perm) const {
  SmallVector<int64_t> newShape;
  for (int64_t p : perm)
    newShape.push_back(shape[p]);
  return mapBases(*this, newShape, [&](const Basis &b) {
    Basis nb;
    for (int64_t p : perm)
      nb.push_back(b[p]);
    return nb;
  });
}

LinearLayout LinearLayout::withDimInserted(unsigned dim) const {
  SmallVector<int64_t> newShape(shape.begin(), shape.end());
  newShape.insert(newShape.begin() + dim, 1);
  return mapBases(*this, newShape, [&](const Basis &b) {
    Basis nb(b);
    nb.insert(nb.begin() + dim, 0);
    return nb;
  });
}

namespace {
/// Builds a layout bit by bit: each new basis of dimension d is the next
/// power of two of d, zero (or dropped, for registers) beyond the shape.
struct LayoutBuilder {
  LinearLayout layout;
  SmallVector<int64_t, 4> next;
  explicit LayoutBuilder(ArrayRef<int64_t> shape) : next(shape.size(), 1) {
    layout.shape.assign(shape.begin(), shape.end());
  }
  void add(SmallVector<LinearLayout::Basis> &list, unsigned d, int64_t value,
           bool isReg) {
    LinearLayout::Basis basis(layout.shape.size(), 0);
    if (value < layout.shape[d])
      basis[d] = value;
    if (!isReg || basis[d] != 0)
      list.push_back(basis);
  }
  void addNext(SmallVector<LinearLayout::Basis> &list, unsigned d, bool isReg) {
    add(list, d, next[d], isReg);
    next[d] *= 2;
  }
};
} // namespace

static LinearLayout blockedToLinear(BlockedLayoutAttr attr,
                                    ArrayRef<int64_t> shape) {
  LayoutBuilder b(shape);
  ArrayRef<unsigned> order = attr.getOrder();
  for (unsigned d : order)
    for (unsigned i = 0; i < llvm::Log2_32(attr.getSizePerThread()[d]); ++i)
      b.addNext(b.layout.regs, d, /*isReg=*/true);
  for (unsigned d : order)
    for (unsigned i = 0; i < llvm::Log2_32(attr.getThreadsPerWarp()[d]); ++i)
      b.addNext(b.layout.lanes, d, false);
  for (unsigned d : order)
    for (unsigned i = 0; i < llvm::Log2_32(attr.getWarpsPerCTA()[d]); ++i)
      b.addNext(b.layout.warps, d, false);
  for (unsigned d : order)
    while (b.next[d] < shape[d])
      b.addNext(b.layout.regs, d, true);
  return b.layout;
}

static LinearLayout mmaToLinear(MmaLayoutAttr attr, ArrayRef<int64_t> shape) {
  LayoutBuilder b(shape);
  unsigned wm = attr.getWarpsPerCTA()[0], wn = attr.getWarpsPerCTA()[1];
  // c0..c3 of an m16n8 accumulator: bit 0 moves a column, bit 1 eight rows.
  b.add(b.layout.regs, 1, 1, true);
  b.add(b.layout.regs, 0, 8, true);
  b.add(b.layout.lanes, 1, 2, false);
  b.add(b.layout.lanes, 1, 4, false);
  b.add(b.layout.lanes, 0, 1, false);
  b.add(b.layout.lanes, 0, 2, false);
  b.add(b.layout.lanes, 0, 4, false);
  for (unsigned i = 0; (1u << i) < wm; ++i)
    b.add(b.layout.warps, 0, int64_t(16) << i, false);
  for (unsigned i = 0; (1u << i) < wn; ++i)
    b.add(b.layout.warps, 1, int64_t(8) << i, false);
  for (int64_t v = 8 * wn; v < shape[1]; v *= 2)
    b.add(b.layout.regs, 1, v, true);
  for (int64_t v = 16 * wm; v < shape[0]; v *= 2)
    b.add(b.layout.regs, 0, v, true);
  return b.layout;
}

FailureOr<LinearLayout> mlir::tile::toLinearLayout(Attribute layout,
                                                   ArrayRef<int64_t> shape) {
  if (auto blocked = dyn_cast_or_null<BlockedLayoutAttr>(layout)) {
    if (blocked.getOrder().size() != shape.size())
      return failure();
    return blockedToLinear(blocked, shape);
  }
  if (auto mma = dyn_cast_or_null<MmaLayoutAttr>(layout)) {
    if (shape.size() != 2 || mma.getWarpsPerCTA().size() != 2)
      return failure();
    return mmaToLinear(mma, shape);
  }
  if (auto slice = dyn_cast_or_null<SliceLayoutAttr>(layout)) {
    if (slice.getDim() > shape.size())
      return failure();
    SmallVector<int64_t> parentShape(shape);
    parentShape.insert(parentShape.begin() + slice.getDim(), 1);
    FailureOr<LinearLayout> parent =
        toLinearLayout(slice.getParent(), parentShape);
    if (failed(parent))
      return failure();
    return parent->sliced(slice.getDim());
  }
  return failure();
}

FailureOr<LinearLayout> mlir::tile::toLinearLayout(RankedTensorType type) {
  return toLinearLayout(type.getEncoding(), type.getShape());
}

int mlir::tile::getLayoutNumWarps(Attribute layout) {
  auto product = [](ArrayRef<unsigned> v) {
    int p = 1;
    for (unsigned x : v)
      p *= x;
    return p;
  };
  if (auto blocked = dyn_cast<BlockedLayoutAttr>(layout))
    return product(blocked.getWarpsPerCTA());
  if (auto mma = dyn_cast<MmaLayoutAttr>(layout))
    return product(mma.getWarpsPerCTA());
  if (auto slice = dyn_cast<SliceLayoutAttr>(layout))
    return getLayoutNumWarps(slice.getParent());
  return 0;
}

BlockedLayoutAttr
mlir::tile::getDefaultBlockedLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                                    unsigned contigDim, unsigned elemBits,
                                    int numWarps, int reducedDim) {
  unsigned rank = shape.size();
  // A rank-0 tile is held like a one-element 1-d tile.
  if (rank == 0)
    return getDefaultBlockedLayout(ctx, {1}, 0, elemBits, numWarps);
  SmallVector<unsigned> order{contigDim};
  for (int d = rank - 1; d >= 0; --d)
    if (static_cast<unsigned>(d) != contigDim)
      order.push_back(d);
  SmallVector<unsigned> spt(rank, 1), tpw(rank, 1), wpc(rank, 1);
  unsigned vec = 128 / std::max(8u, elemBits);
  spt[contigDim] =
      std::max<int64_t>(1, std::min<int64_t>(vec, shape[contigDim]));
  unsigned threads = 32, warps = numWarps;
  for (unsigned d : order) {
    int64_t room = std::max<int64_t>(1, shape[d] / spt[d]);
    tpw[d] = std::min<int64_t>(threads, room);
    threads /= tpw[d];
  }
  tpw[order.back()] *= threads;
  SmallVector<unsigned> warpOrder;
  for (unsigned d : order)
    if (static_cast<int>(d) != reducedDim)
      warpOrder.push_back(d);
  for (unsigned d : order)
    if (static_cast<int>(d) == reducedDim)
      warpOrder.push_back(d);
  for (unsigned d : warpOrder) {
    int64_t room = std::max<int64_t>(1, shape[d] / (spt[d] * tpw[d]));
    wpc[d] = std::min<int64_t>(warps, room);
    warps /= wpc[d];
  }
  wpc[order.back()] *= warps;
  return BlockedLayoutAttr::get(ctx, spt, tpw, wpc, order);
}

MmaLayoutAttr mlir::tile::getMmaLayout(MLIRContext *ctx,
                                       ArrayRef<int64_t> shape, int numWarps,
                                       bool rowsOnly) {
  SmallVector<int64_t> warps = chooseMmaWarps(shape, numWarps, rowsOnly);
  return MmaLayoutAttr::get(ctx, 2, llvm::to_vector_of<unsigned>(warps));
}

MmaKind mlir::tile::getMmaKind(MmaOp op) {
  if (op.getTensorCoreShape().empty())
    return MmaKind::Fma;
  Type in = cast<RankedTensorType>(op.getA().getType()).getElementType();
  if (in.isF16())
    return MmaKind::F16;
  if (in.isBF16())
    return MmaKind::BF16;
  if (isa<Float8E4M3FNType>(in))
    return MmaKind::F8E4M3;
  if (isa<Float8E5M2Type>(in))
    return MmaKind::F8E5M2;
  return in.isF32() ? MmaKind::TF32 : MmaKind::I8;
}
