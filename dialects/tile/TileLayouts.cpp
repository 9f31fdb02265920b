//===- TileLayouts.cpp - layout encodings and tile.convert_layout ---------===//
#include "dialects/tile/TileDialect.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::tile;

LogicalResult
BlockedLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          ArrayRef<unsigned> sizePerThread,
                          ArrayRef<unsigned> threadsPerWarp,
                          ArrayRef<unsigned> warpsPerCTA,
                          ArrayRef<unsigned> order) {
  size_t rank = sizePerThread.size();
  if (threadsPerWarp.size() != rank || warpsPerCTA.size() != rank ||
      order.size() != rank)
    return emitError() << "blocked layout parameters must have one rank";
  unsigned threads = 1;
  for (unsigned t : threadsPerWarp)
    threads *= t;
  if (threads != 32)
    return emitError() << "threadsPerWarp must multiply to 32, got " << threads;
  SmallVector<bool> seen(rank, false);
  for (unsigned o : order) {
    if (o >= rank || seen[o])
      return emitError() << "order must be a permutation of [0, " << rank
                         << ")";
    seen[o] = true;
  }
  auto pow2 = [](unsigned v) { return v && llvm::isPowerOf2_32(v); };
  if (!llvm::all_of(sizePerThread, pow2) || !llvm::all_of(threadsPerWarp, pow2) ||
      !llvm::all_of(warpsPerCTA, pow2))
    return emitError() << "blocked layout sizes must be powers of two";
  return success();
}

LogicalResult
MmaTilingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      ArrayRef<int64_t> warps, ArrayRef<int64_t> warpTile,
                      ArrayRef<int64_t> instr) {
  if (warps.size() != 2 || warpTile.size() != 2 || instr.size() != 3)
    return emitError() << "mma tiling needs 2 warps, 2 warp_tile and 3 instr "
                          "sizes";
  auto positive = [](int64_t v) { return v > 0; };
  if (!llvm::all_of(warpTile, positive) || !llvm::all_of(instr, positive))
    return emitError() << "mma tiling sizes must be positive";
  if (!llvm::all_of(warps,
                    [](int64_t w) { return w > 0 && llvm::isPowerOf2_64(w); }))
    return emitError() << "mma tiling warps must be powers of two";
  return success();
}

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  // convert(convert(x)) == convert(x): only the final layout matters.
  if (auto inner = getSrc().getDefiningOp<ConvertLayoutOp>()) {
    if (inner.getSrc().getType() == getType())
      return inner.getSrc();
    getSrcMutable().assign(inner.getSrc());
    return getResult();
  }
  return {};
}
