//===- LinearLayout.h - layouts as maps from hardware bits ----*- C++ -*-===//
//
// Every layout encoding (blocked, slice, mma) of a power-of-two tile is a
// linear map from the bits of (register, lane, warp) indices to coordinates:
// each bit has a basis vector and a thread's register r holds the element at
// the xor (here also the sum: bases of one dimension are distinct powers of
// two) of the bases of the bits set in (r, lane, warp). Lowering reasons on
// this form only, so that "is this conversion free?" is a comparison and
// broadcast/expand_dims/reduce/permute are bit manipulations.
//
// The layout attributes build it (LayoutAttrInterface::toLinearLayout); this
// header needs nothing of the dialect so that the dialect's headers can
// include it.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_DIALECT_TILE_LINEARLAYOUT_H
#define TILE_DIALECT_TILE_LINEARLAYOUT_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

namespace mlir::tile {

struct LinearLayout {
  using Basis = SmallVector<int64_t, 4>;
  SmallVector<int64_t, 4> shape;
  /// Register bases are never zero (a tile element is held once per thread);
  /// lane and warp bases are zero where threads replicate the element.
  SmallVector<Basis> regs, lanes, warps;

  unsigned getRank() const { return shape.size(); }
  int64_t getNumRegs() const { return int64_t(1) << regs.size(); }
  int getNumWarps() const { return 1 << warps.size(); }
  /// The in-thread part of the coordinate of register `r`.
  SmallVector<int64_t, 4> regCoord(int64_t r) const;
  /// The coordinate register `r` of lane `lane` in warp `warp` holds.
  SmallVector<int64_t, 4> coordOf(int64_t r, unsigned lane,
                                  unsigned warp) const;
  /// Lane (warp) id bits that do not move the element: replicas.
  unsigned laneReplicaMask() const;
  unsigned warpReplicaMask() const;

  /// Dimension `dim` removed: its register bits dropped, its lane/warp bits
  /// turned into replicas (what a reduction along `dim` produces).
  LinearLayout sliced(unsigned dim) const;
  /// The layout restricted to a smaller shape (every extent a power of two
  /// no larger than ours): bases beyond it drop (registers) or replicate.
  LinearLayout restrictedTo(ArrayRef<int64_t> smaller) const;
  /// Result dimension i is our dimension perm[i].
  LinearLayout permuted(ArrayRef<int64_t> perm) const;
  /// A size-1 dimension inserted at `dim`.
  LinearLayout withDimInserted(unsigned dim) const;

  bool operator==(const LinearLayout &o) const {
    return shape == o.shape && regs == o.regs && lanes == o.lanes &&
           warps == o.warps;
  }
  bool operator!=(const LinearLayout &o) const { return !(*this == o); }
};

} // namespace mlir::tile

#endif // TILE_DIALECT_TILE_LINEARLAYOUT_H
