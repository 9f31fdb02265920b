//===- TileBulkReduce.cpp - mma results added into arrays by TMA ----------===//
//
// The tile-bulk-reduce pass. The fused attention backward adds each
// iteration's dQ (a 64x128 f32 product) into an f32 array with relaxed
// atomics: 32 `red` instructions per thread, each a 4-byte update in L2.
// FlashAttention-3 writes dQ to shared memory and lets the TMA unit add the
// whole block (cp.reduce.async.bulk.tensor .add). Here an atomic add whose
// indices address a block of a TMA-describable array becomes
//
//   %buf = tilegpu.alloc_shared : !tilegpu.shared<128x64xf32, slots = 1,
//                                                 swizzle = 128>
//   scf.for ... {
//     tilegpu.bulk_reduce_add %dqt through %buf into %map[%d0, %q0, %h]
//   }
//   tilegpu.bulk_wait %buf
//
// with a tensor-map argument of 32-element (128-byte) inner boxes. An index
// is recognized as a splat (one coordinate) or a start plus `tile.iota`
// expanded and broadcast along one axis of the tile.
//
//===----------------------------------------------------------------------===//
#include "compiler/Passes.h"
#include "compiler/gpu/TilePipelineMma.h"
#include "compiler/gpu/TileToGpuCommon.h"
#include "dialects/tilegpu/TileGpuDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEBULKREDUCE
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

/// What one index tile of a block access is: the same coordinate for every
/// element (`axis` -1), or `start` plus the element's position along
/// `axis`.
struct BlockIndex {
  int axis = -1;
  Value start;
};

/// A 1-d `tile.iota` or `splat(s) + iota`: its start (an i32 scalar), or
/// null.
Value iotaStart(OpBuilder &b, Value v) {
  while (auto convert = v.getDefiningOp<ConvertLayoutOp>())
    v = convert.getSrc();
  if (auto iota = v.getDefiningOp<IotaOp>())
    return constI32(b, iota.getLoc(), 0);
  auto add = v.getDefiningOp<arith::AddIOp>();
  if (!add)
    return {};
  for (auto [lhs, rhs] : {std::pair(add.getLhs(), add.getRhs()),
                          std::pair(add.getRhs(), add.getLhs())}) {
    auto splat = lhs.getDefiningOp<SplatOp>();
    Value iota = rhs;
    while (auto convert = iota.getDefiningOp<ConvertLayoutOp>())
      iota = convert.getSrc();
    if (splat && iota.getDefiningOp<IotaOp>())
      return splat.getSrc();
  }
  return {};
}

/// The block index `v` (a 2-d index tile) is, if it is one.
std::optional<BlockIndex> blockIndex(OpBuilder &b, Value v) {
  while (true) {
    if (auto convert = v.getDefiningOp<ConvertLayoutOp>())
      v = convert.getSrc();
    else if (auto bcast = v.getDefiningOp<BroadcastOp>())
      v = bcast.getSrc();
    else
      break;
  }
  if (auto splat = v.getDefiningOp<SplatOp>())
    return BlockIndex{-1, splat.getSrc()};
  auto expand = v.getDefiningOp<ExpandDimsOp>();
  if (!expand)
    return std::nullopt;
  Value start = iotaStart(b, expand.getSrc());
  if (!start)
    return std::nullopt;
  // expand_dims(x, 1) runs x along axis 0, and the other way round.
  return BlockIndex{1 - int(expand.getAxis()), start};
}

/// Bytes of the buffers `func` allocates so far.
int64_t allocatedBytes(func::FuncOp func) {
  int64_t bytes = 0;
  func.walk([&](tilegpu::AllocSharedOp alloc) {
    auto type = cast<tilegpu::SharedBufferType>(alloc.getType());
    bytes += llvm::alignTo(type.getTotalBytes(), type.getAlignment());
  });
  return bytes;
}

/// `rmw` as a bulk reduction, when it is one; false when left alone.
bool rewrite(AtomicRMWOp rmw) {
  auto value = cast<RankedTensorType>(rmw.getValue().getType());
  auto mma = dyn_cast_or_null<MmaLayoutAttr>(value.getEncoding());
  auto array = dyn_cast<BlockArgument>(rmw.getArray());
  auto func = rmw->getParentOfType<func::FuncOp>();
  if (rmw.getKind() != AtomicKind::add || rmw.getMask() ||
      !rmw.getResult().use_empty() || !value.getElementType().isF32() ||
      value.getRank() != 2 || !mma || mma.getWarpsPerCTA()[1] != 1 ||
      getMemoryOrder(rmw) != MemoryOrder::relaxed || !array || !func ||
      array.getOwner() != &func.getBody().front() ||
      !func.getArgAttr(array.getArgNumber(), "tile.tma_ok"))
    return false;
  int64_t rows = value.getDimSize(0), cols = value.getDimSize(1);
  if (16 * int64_t(mma.getWarpsPerCTA()[0]) != rows || rows % 64 ||
      cols > 256)
    return false;
  // The loop at the kernel's top level the update runs in.
  Operation *loop = rmw;
  while (loop->getParentOp() != func)
    loop = loop->getParentOp();
  if (!isa<scf::ForOp>(loop))
    return false;
  OpBuilder b(rmw);
  SmallVector<BlockIndex> indices;
  for (Value index : rmw.getIndices()) {
    std::optional<BlockIndex> i = blockIndex(b, index);
    if (!i)
      return false;
    indices.push_back(*i);
  }
  // One array dimension along each axis, the innermost along one of them.
  int64_t rank = indices.size(), along[2] = {-1, -1};
  for (auto [dim, index] : llvm::enumerate(indices))
    if (index.axis >= 0) {
      if (along[index.axis] >= 0)
        return false;
      along[index.axis] = dim;
    }
  if (along[0] < 0 || along[1] < 0 ||
      (along[0] != rank - 1 && along[1] != rank - 1))
    return false;
  bool innerRows = along[0] == rank - 1;
  int64_t outerDim = innerRows ? along[1] : along[0];
  if (!innerRows && cols % 32)
    return false;
  int64_t bytes = rows * cols * 4;
  if (allocatedBytes(func) + bytes + 1024 + pipeline::kScratchSlack >
      pipeline::kMaxSharedBytes)
    return false;

  MLIRContext *ctx = rmw.getContext();
  SmallVector<int64_t> box(rank, 1);
  box[rank - 1] = 32;
  box[outerDim] = innerRows ? cols : 64;
  auto mapType = tilegpu::TensorMapType::get(ctx, box, value.getElementType(),
                                             /*swizzle=*/128);
  FailureOr<Value> map = pipeline::tensorMapArg(func, array, mapType);
  if (failed(map))
    return false;
  OpBuilder before(loop);
  auto bufferType = tilegpu::SharedBufferType::get(
      ctx, {rows, cols}, value.getElementType(), 1, /*swizzle=*/128, 0);
  Value buffer = tilegpu::AllocSharedOp::create(before, loop->getLoc(),
                                                bufferType, IntegerAttr());
  SmallVector<Value> coords; // innermost first
  for (int64_t dim = rank - 1; dim >= 0; --dim)
    coords.push_back(indices[dim].start);
  tilegpu::BulkReduceAddOp::create(b, rmw.getLoc(), rmw.getValue(), buffer,
                                   *map, coords, innerRows ? 0 : 1,
                                   rank - 1 - outerDim);
  OpBuilder after(loop->getContext());
  after.setInsertionPointAfter(loop);
  tilegpu::BulkWaitOp::create(after, loop->getLoc(), buffer);
  rmw.erase();
  return true;
}

struct TileBulkReducePass
    : tile::impl::TileBulkReduceBase<TileBulkReducePass> {
  void runOnOperation() override {
    SmallVector<AtomicRMWOp> updates;
    getOperation()->walk([&](AtomicRMWOp rmw) { updates.push_back(rmw); });
    for (AtomicRMWOp rmw : updates)
      rewrite(rmw);
  }
};

} // namespace
