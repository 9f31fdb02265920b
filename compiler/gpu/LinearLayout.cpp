//===- LinearLayout.cpp - linear forms of tensor layouts ------------------===//
#include "compiler/gpu/LinearLayout.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::tile;

FailureOr<LinearLayout> mlir::tile::toLinearLayout(Attribute layout,
                                                   ArrayRef<int64_t> shape) {
  if (auto iface = dyn_cast_or_null<LayoutAttrInterface>(layout))
    return iface.toLinearLayout(shape);
  return failure();
}

FailureOr<LinearLayout> mlir::tile::toLinearLayout(RankedTensorType type) {
  return toLinearLayout(type.getEncoding(), type.getShape());
}

int mlir::tile::getLayoutNumWarps(Attribute layout) {
  if (auto iface = dyn_cast_or_null<LayoutAttrInterface>(layout))
    return iface.getNumWarps();
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
  return getTensorCoreMmaKind(
      cast<RankedTensorType>(op.getA().getType()).getElementType());
}

MmaKind mlir::tile::getTensorCoreMmaKind(Type in) {
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
