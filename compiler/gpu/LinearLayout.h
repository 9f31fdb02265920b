//===- LinearLayout.h - linear forms of tensor layouts -------*- C++ -*-===//
//
// The lowering's access to layouts: the linear form of a tensor's encoding
// (the layout attributes build it, see dialects/tile/LinearLayout.h and
// LayoutAttrInterface) and the layouts tile-map-threads chooses.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_COMPILER_GPU_LINEARLAYOUT_H
#define TILE_COMPILER_GPU_LINEARLAYOUT_H

#include "compiler/TileTiling.h"
#include "dialects/tile/TileDialect.h"

namespace mlir::tile {

/// The linear form of `layout` (a tile layout attribute) over `shape`;
/// failure for other attributes and for shapes the layout does not apply to.
FailureOr<LinearLayout> toLinearLayout(Attribute layout,
                                       ArrayRef<int64_t> shape);
/// The linear form of a tensor type's encoding.
FailureOr<LinearLayout> toLinearLayout(RankedTensorType type);
/// Warps per block a layout attribute assumes (0: not a layout).
int getLayoutNumWarps(Attribute layout);

/// The blocked layout tile-map-threads gives loads: each thread owns 16-byte
/// runs along `contigDim`, threads and warps fill the contiguous dimension
/// first. Warps avoid `reducedDim` (when >= 0) while other dimensions have
/// room, so that reductions along it need no shared memory.
BlockedLayoutAttr getDefaultBlockedLayout(MLIRContext *ctx,
                                          ArrayRef<int64_t> shape,
                                          unsigned contigDim,
                                          unsigned elemBits, int numWarps,
                                          int reducedDim = -1);

/// The mma.sync accumulator layout for an MxN tile; `rowsOnly` puts the
/// warps along M as far as M allows (chained mmas).
MmaLayoutAttr getMmaLayout(MLIRContext *ctx, ArrayRef<int64_t> shape,
                           int numWarps, bool rowsOnly = false);

/// How a tile.mma is computed on the GPU.
enum class MmaKind { Fma, F16, BF16, TF32, I8, F8E4M3, F8E5M2 };
MmaKind getMmaKind(MmaOp op);
/// The tensor-core kind of an mma whose operands are `elementType`.
MmaKind getTensorCoreMmaKind(Type elementType);

} // namespace mlir::tile

#endif
