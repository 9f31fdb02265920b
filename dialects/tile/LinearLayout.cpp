//===- LinearLayout.cpp - layouts as maps from hardware bits --------------===//
#include "dialects/tile/LinearLayout.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::tile;

/// Xors into `coord` the bases of the bits set in `bits`.
static void addBits(SmallVectorImpl<int64_t> &coord,
                    ArrayRef<LinearLayout::Basis> bases, int64_t bits) {
  for (auto [bit, basis] : llvm::enumerate(bases))
    if (bits & (int64_t(1) << bit))
      for (unsigned d = 0; d < coord.size(); ++d)
        coord[d] ^= basis[d];
}

SmallVector<int64_t, 4> LinearLayout::regCoord(int64_t r) const {
  SmallVector<int64_t, 4> coord(getRank(), 0);
  addBits(coord, regs, r);
  return coord;
}

SmallVector<int64_t, 4> LinearLayout::coordOf(int64_t r, unsigned lane,
                                              unsigned warp) const {
  SmallVector<int64_t, 4> coord = regCoord(r);
  addBits(coord, lanes, lane);
  addBits(coord, warps, warp);
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
