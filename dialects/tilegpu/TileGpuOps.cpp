//===- TileGpuOps.cpp - tilegpu op verifiers ------------------------------===//
#include "dialects/tilegpu/TileGpuDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::tilegpu;

#define GET_OP_CLASSES
#include "dialects/tilegpu/TileGpuOps.cpp.inc"

LogicalResult AllocSharedOp::verify() {
  if (auto offset = getOffset()) {
    int64_t align = getType().getAlignment();
    if (*offset < 0 || *offset % align)
      return emitOpError() << "offset " << *offset
                           << " is not a multiple of the buffer's alignment ("
                           << align << " bytes)";
  }
  return success();
}

LogicalResult AllocMBarriersOp::verify() {
  if (auto offset = getOffset(); offset && (*offset < 0 || *offset % 8))
    return emitOpError() << "offset " << *offset
                         << " is not a multiple of 8 bytes";
  return success();
}

LogicalResult SlotOp::verify() {
  if (getType() != getRing().getType().withSlots(1))
    return emitOpError() << "result must be the ring's block with one slot, "
                         << getRing().getType().withSlots(1);
  return success();
}

/// A one-slot buffer, as copies and mmas take.
static LogicalResult verifyOneSlot(Operation *op, SharedBufferType type,
                                   StringRef what) {
  if (type.getSlots() != 1)
    return op->emitOpError() << what << " must be one slot (use tilegpu.slot), "
                             << "not " << type.getSlots();
  return success();
}

/// `buffer` is one unswizzled slot of `tile`'s shape and element type, and
/// `tile` (the op's `what`) is 2-d: threads move its elements in and out
/// of the buffer's rows.
static LogicalResult verifyRowMajorBuffer(Operation *op,
                                          SharedBufferType buffer,
                                          RankedTensorType tile,
                                          StringRef what) {
  if (failed(verifyOneSlot(op, buffer, "buffer")))
    return failure();
  if (buffer.getSwizzle() || tile.getRank() != 2 ||
      buffer.getShape() != tile.getShape() ||
      buffer.getElementType() != tile.getElementType())
    return op->emitOpError() << "needs a 2-d " << what
                             << " and a row-major buffer of its shape and "
                                "element type";
  return success();
}

LogicalResult AsyncCopyOp::verify() {
  auto array = getArray().getType();
  auto block = cast<RankedTensorType>(getBlock());
  SharedBufferType dst = getDst().getType();
  if (failed(verifyOneSlot(*this, dst, "the destination")))
    return failure();
  // Copies move bytes: the buffer may view them as another type of the
  // same width (fp8 data in a uint8 array).
  if (block.getElementType() != array.getElementType())
    return emitOpError() << "the block's element type must be the array's ("
                         << array.getElementType() << ")";
  if (dst.getElementBytes() != SharedBufferType::get(getContext(), {1, 1},
                                                     array.getElementType(), 1,
                                                     0, 0)
                                   .getElementBytes())
    return emitOpError() << "the buffer's elements (" << dst.getElementType()
                         << ") are not as wide as the array's ("
                         << array.getElementType() << ")";
  unsigned rank = array.getRank();
  if (block.getRank() != rank || getIndices().size() != rank)
    return emitOpError() << "needs a block and indices of the array's rank "
                         << rank;
  if (rank < 2)
    return emitOpError() << "copies 2-d blocks";
  for (unsigned d = 0; d + 2 < rank; ++d)
    if (block.getDimSize(d) != 1)
      return emitOpError() << "block dimensions before the last two must be 1";
  if (block.getShape().take_back(2) != dst.getShape())
    return emitOpError() << "block " << block
                         << " does not match the buffer's block";
  return success();
}

LogicalResult TmaLoadOp::verify() {
  TensorMapType map = getMap().getType();
  SharedBufferType dst = getDst().getType();
  if (failed(verifyOneSlot(*this, dst, "the destination")))
    return failure();
  if (getCoords().size() != map.getBox().size())
    return emitOpError() << "needs " << map.getBox().size() << " coordinates";
  if (map.getElementType() != dst.getElementType())
    return emitOpError() << "element types of the map and the buffer differ";
  // Rows: the box's dimensions before the last; the block is one box, or
  // swizzled panels as wide as the box and its swizzle.
  ArrayRef<int64_t> box = map.getBox();
  int64_t rows = 1, width = box.back();
  for (int64_t d : box.drop_back())
    rows *= d;
  bool oneBox = rows == dst.getRows() && width == dst.getCols();
  bool panels = rows == dst.getRows() && dst.getSwizzle() &&
                width * dst.getElementBytes() == dst.getSwizzle() &&
                dst.getCols() % width == 0;
  if ((!oneBox && !panels) || dst.getRowStride() ||
      dst.getSwizzle() != map.getSwizzle())
    return emitOpError() << "the buffer's block must be the map's box with "
                            "its swizzle, unpadded";
  if (bool(getCtaMask()) != bool(getClusterRank()) ||
      bool(getCtaMask()) != getClusterSize().has_value())
    return emitOpError() << "a multicast needs its mask, the CTA's rank and "
                            "cluster_size together";
  return success();
}

LogicalResult TmaStoreOp::verify() {
  TensorMapType map = getMap().getType();
  SharedBufferType src = getSrc().getType();
  if (failed(verifyOneSlot(*this, src, "the source")))
    return failure();
  if (getCoords().size() != map.getBox().size())
    return emitOpError() << "needs " << map.getBox().size() << " coordinates";
  if (map.getElementType() != src.getElementType())
    return emitOpError() << "element types of the map and the buffer differ";
  if (src.getRowStride() || src.getSwizzle() != map.getSwizzle())
    return emitOpError() << "the buffer must be unpadded with the map's "
                            "swizzle";
  return success();
}

RankedTensorType MmaOp::getATileType() {
  if (auto tile = dyn_cast<RankedTensorType>(getA().getType()))
    return tile;
  auto buffer = cast<SharedBufferType>(getA().getType());
  SmallVector<int64_t> shape(buffer.getShape());
  if (getATransposed())
    std::swap(shape[0], shape[1]);
  return RankedTensorType::get(shape, buffer.getElementType());
}

RankedTensorType MmaOp::getBTileType() {
  SharedBufferType buffer = getB().getType();
  SmallVector<int64_t> shape(buffer.getShape());
  if (getBTransposed())
    std::swap(shape[0], shape[1]);
  return RankedTensorType::get(shape, buffer.getElementType());
}

LogicalResult StageLayoutOp::verify() {
  auto from = cast<RankedTensorType>(getValue().getType());
  auto to = cast<RankedTensorType>(getResult().getType());
  SharedBufferType buffer = getBuffer().getType();
  if (from.getShape() != to.getShape() ||
      from.getElementType() != to.getElementType())
    return emitOpError("changes only the layout: the result must have the "
                       "value's shape and element type");
  return verifyRowMajorBuffer(*this, buffer, from, "value");
}

LogicalResult ReadSharedOp::verify() {
  return verifyRowMajorBuffer(*this, getBuffer().getType(),
                              cast<RankedTensorType>(getResult().getType()),
                              "result");
}

LogicalResult BulkReduceAddOp::verify() {
  auto value = cast<RankedTensorType>(getValue().getType());
  SharedBufferType buffer = getBuffer().getType();
  TensorMapType map = getMap().getType();
  if (failed(verifyOneSlot(*this, buffer, "buffer")))
    return failure();
  if (value.getRank() != 2 || !value.getElementType().isF32() ||
      map.getElementType() != value.getElementType() ||
      buffer.getElementType() != value.getElementType() ||
      buffer.getShape() != value.getShape() || buffer.getSwizzle() != 128)
    return emitOpError("needs a 2-d f32 value, a 128-byte swizzled buffer "
                       "of its shape and an f32 tensor map");
  if (getCoords().size() != map.getBox().size())
    return emitOpError("needs one coordinate per dimension of the map");
  if (getInnerAxis() < 0 || getInnerAxis() > 1 || getOuterDim() < 1 ||
      getOuterDim() >= int64_t(getCoords().size()))
    return emitOpError("inner_axis must be 0 or 1 and outer_dim a coordinate "
                       "other than the innermost");
  return success();
}

LogicalResult StageOperandOp::verify() {
  auto value = cast<RankedTensorType>(getValue().getType());
  SharedBufferType buffer = getBuffer().getType();
  if (failed(verifyOneSlot(*this, buffer, "buffer")))
    return failure();
  if (value.getRank() != 2 || buffer.getShape() != value.getShape() ||
      buffer.getElementType() != value.getElementType() ||
      buffer.getSwizzle() != 128)
    return emitOpError("needs a 2-d value and a 128-byte swizzled buffer of "
                       "its shape and element type");
  return success();
}

LogicalResult MmaOp::verify() {
  if (auto a = getASharedBuffer())
    if (failed(verifyOneSlot(*this, a.getType(), "A")))
      return failure();
  if (getATransposed() &&
      (!getASharedBuffer() || !getTiling() || !getTiling()->isWarpgroup()))
    return emitOpError() << "a_transposed needs A in shared memory and a "
                            "warpgroup (wgmma) tiling";
  if (failed(verifyOneSlot(*this, getB().getType(), "B")))
    return failure();
  RankedTensorType a = getATileType(), b = getBTileType();
  auto acc = cast<RankedTensorType>(getAcc().getType());
  if (a.getRank() != 2 || acc.getRank() != 2)
    return emitOpError() << "takes a 2-d A and accumulator";
  if (a.getDimSize(1) != b.getDimSize(0) ||
      a.getDimSize(0) != acc.getDimSize(0) ||
      b.getDimSize(1) != acc.getDimSize(1))
    return emitOpError() << "shapes do not chain: A " << a << ", B " << b
                         << (getBTransposed() ? " (transposed)" : "")
                         << ", accumulator " << acc;
  if (a.getElementType() != b.getElementType())
    return emitOpError() << "A and B element types differ";
  // The lowering reads the accumulator's fragments off an mma layout; a
  // pass that re-mapped it (tile-map-threads on pipelined IR) broke that.
  if (acc.getEncoding() && !isa<mlir::tile::MmaLayoutAttr>(acc.getEncoding()))
    return emitOpError() << "needs its accumulator in an mma layout, not "
                         << acc.getEncoding();
  if (getInFlight() && !(getTiling() && getTiling()->isWarpgroup()))
    return emitOpError() << "in_flight needs a warpgroup (wgmma) tiling";
  if (getDeferred() &&
      (getInFlight() || !(getTiling() && getTiling()->isWarpgroup())))
    return emitOpError() << "deferred needs a warpgroup (wgmma) tiling and "
                            "excludes in_flight";
  return success();
}

LogicalResult WaitMmaOp::verify() {
  if (getAccs().getTypes() != getResults().getTypes())
    return emitOpError() << "results must have the accumulators' types";
  return success();
}
