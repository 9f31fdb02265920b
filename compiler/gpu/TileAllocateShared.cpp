//===- TileAllocateShared.cpp - offsets of a kernel's shared buffers ------===//
//
// The tile-allocate-shared pass. A buffer is live from its allocation to
// the last op that reads or writes it, counted in the kernel body's
// top-level ops (a use inside a loop keeps the buffer for the whole loop).
// Buffers whose live ranges do not overlap share bytes: the rings of two
// loops one after the other (tile-pipeline-mma waits for every copy and
// passes a barrier after each loop, so the next loop's copies cannot
// overtake the last reads). Each buffer starts at its type's alignment; the
// end goes on the kernel as kSharedBytesAttr, where convert-tile-to-gpu's
// scratch (reductions, layout conversions, staged mma operands) starts.
//
//===----------------------------------------------------------------------===//
#include "compiler/Passes.h"
#include "compiler/gpu/TileToGpuCommon.h"
#include "dialects/tilegpu/TileGpuDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEALLOCATESHARED
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

struct Buffer {
  Operation *alloc;
  int64_t bytes, align;
  int64_t first, last; // live range in top-level ops of the kernel body
  int64_t offset = 0;
};

/// Index of the top-level op of `func`'s body that contains `op`.
int64_t topLevelIndex(func::FuncOp func, Operation *op,
                      const DenseMap<Operation *, int64_t> &index) {
  Block *body = &func.getBody().front();
  Operation *top = body->findAncestorOpInBlock(*op);
  return top ? index.lookup(top) : 0;
}

/// The last top-level index at which `value` (or a slot of it) is used.
int64_t lastUse(func::FuncOp func, Value value, int64_t from,
                const DenseMap<Operation *, int64_t> &index) {
  int64_t last = from;
  for (Operation *user : value.getUsers()) {
    last = std::max(last, topLevelIndex(func, user, index));
    if (auto slot = dyn_cast<tilegpu::SlotOp>(user))
      last = std::max(last, lastUse(func, slot.getResult(), last, index));
  }
  return last;
}

void allocate(func::FuncOp func) {
  if (func.isExternal())
    return;
  DenseMap<Operation *, int64_t> index;
  for (auto [i, op] : llvm::enumerate(func.getBody().front()))
    index[&op] = i;
  SmallVector<Buffer> buffers;
  func.walk([&](Operation *op) {
    int64_t bytes = 0, align = 0;
    if (auto alloc = dyn_cast<tilegpu::AllocSharedOp>(op)) {
      bytes = alloc.getType().getTotalBytes();
      align = alloc.getType().getAlignment();
    } else if (auto bars = dyn_cast<tilegpu::AllocMBarriersOp>(op)) {
      bytes = 8 * bars.getType().getCount();
      align = 8;
    } else {
      return;
    }
    int64_t first = topLevelIndex(func, op, index);
    buffers.push_back({op, bytes, align, first,
                       lastUse(func, op->getResult(0), first, index)});
  });
  // First fit in program order, around the buffers still live.
  int64_t end = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    Buffer &b = buffers[i];
    SmallVector<std::pair<int64_t, int64_t>> taken;
    for (size_t j = 0; j < i; ++j)
      if (buffers[j].last >= b.first && b.last >= buffers[j].first)
        taken.push_back(
            {buffers[j].offset, buffers[j].offset + buffers[j].bytes});
    llvm::sort(taken);
    int64_t offset = 0;
    for (auto [lo, hi] : taken) {
      if (llvm::alignTo(offset, b.align) + b.bytes <= lo)
        break;
      offset = std::max(offset, hi);
    }
    b.offset = llvm::alignTo(offset, b.align);
    b.alloc->setAttr(
        "offset",
        IntegerAttr::get(IntegerType::get(func.getContext(), 64), b.offset));
    end = std::max(end, b.offset + b.bytes);
  }
  if (end)
    func->setAttr(kSharedBytesAttr,
                  IntegerAttr::get(IntegerType::get(func.getContext(), 64),
                                   llvm::alignTo(end, 16)));
}

struct TileAllocateSharedPass
    : tile::impl::TileAllocateSharedBase<TileAllocateSharedPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      allocate(func);
  }
};

} // namespace
