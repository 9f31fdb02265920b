//===- TileUnpermuteMmaLoads.cpp - transposed loads of mma operands -------===//
//
// Part of tile-tiling: a load with `order` that reads a 2-d transpose
// (cuTile's transposed load, as attention loads K^T: `load(k, ...,
// order=(0, 2, 1))`) of an array with unit-stride rows, whose block mmas
// read as B, becomes the plain load of the block, the reshape dropping its unit
// dimensions and a 2-d permute: the form the warpgroup tiling and the ring
// pipelining read through (findLoadThroughView). The block is copied as it
// lies in memory and the mma reads it transposed from shared memory. Left
// as it was, such a load kept its mma off wgmma and out of the ring: the
// attention example, written this way, ran on mma.sync.
//
//===----------------------------------------------------------------------===//
#include "compiler/TileTiling.h"

#include "dialects/tile/TileDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"

using namespace mlir;
using namespace mlir::tile;

/// Whether `load` reads a 2-d transpose: `order` swaps its last two
/// dimensions, any before them are 1 and dropped by the one reshape that
/// reads it (the permute that replaces it is then the 2-d transpose).
static bool loadsTransposedRows(LoadOp load) {
  auto type = cast<RankedTensorType>(load.getType());
  int64_t rank = type.getRank();
  if (rank < 2 || llvm::any_of(type.getShape().drop_back(2),
                               [](int64_t d) { return d != 1; }))
    return false;
  auto swapLast = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  std::swap(swapLast[rank - 2], swapLast[rank - 1]);
  if (*load.getOrder() != ArrayRef<int64_t>(swapLast))
    return false;
  if (rank == 2)
    return true;
  if (!load->hasOneUse())
    return false;
  auto reshape = dyn_cast<ReshapeOp>(*load->getUsers().begin());
  return reshape && cast<RankedTensorType>(reshape.getType()).getShape() ==
                        type.getShape().take_back(2);
}

void mlir::tile::unpermuteMmaLoads(Operation *root) {
  SmallVector<LoadOp> loads;
  // Only blocks of arrays with unit-stride rows: a transposed load of a
  // column-major array already reads along its contiguous dimension.
  root->walk([&](LoadOp load) {
    if (load.getOrder() && load.getArray().getType().hasUnitInnerStride() &&
        loadsTransposedRows(load) && !load->use_empty() &&
        // Only B: a transposed A gains nothing (the warpgroup tiling takes
        // A from a plain block or registers, and mma.sync stages either
        // form).
        // fp8 reaches its mma widened to f16 (tile-tiling narrows it after
        // this rewrite): the widening is a view here.
        onlyViewedAsB(load.getResult(), [](Operation *op) {
          return isa<ReshapeOp, arith::BitcastOp, arith::ExtFOp>(op);
        }))
      loads.push_back(load);
  });
  for (LoadOp load : loads) {
    OpBuilder b(load);
    Location loc = load.getLoc();
    auto type = cast<RankedTensorType>(load.getType());
    auto plain = cast<LoadOp>(b.clone(*load));
    plain.removeOrderAttr();
    plain.getResult().setType(type.clone(load.getBlockShape()));
    // The 2-d block: the load itself, or the reshape that drops its
    // leading unit dimensions (loadsTransposedRows).
    Operation *block = load;
    Value rows = plain.getResult();
    if (type.getRank() > 2) {
      block = *load->getUsers().begin();
      rows = ReshapeOp::create(
          b, loc,
          type.clone(ArrayRef<int64_t>(load.getBlockShape()).take_back(2)),
          rows);
    }
    auto blockType = cast<RankedTensorType>(block->getResult(0).getType());
    Value transposed =
        PermuteOp::create(b, loc, blockType, rows, ArrayRef<int64_t>{1, 0});
    block->getResult(0).replaceAllUsesWith(transposed);
    if (block != load)
      block->erase();
    load->erase();
  }
}
