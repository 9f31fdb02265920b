//===- TileAllocateShared.cpp - offsets of a kernel's shared buffers ------===//
//
// The tile-allocate-shared pass. A buffer is live from its allocation to
// the last op that reads or writes it, counted in SharedLiveness's steps
// (the kernel body's top-level ops, a warp-specialized kernel's consumer
// ops; a use inside a loop keeps the buffer for the whole loop). Buffers
// whose live ranges do not overlap share bytes: the rings of two loops one
// after the other (tile-pipeline-mma waits for every copy and passes a
// barrier after each loop, so the next loop's copies cannot overtake the
// last reads), or a ring and the staging buffer of the store after its
// loop. Each buffer starts at its type's alignment; the end goes on the
// kernel as kSharedBytesAttr.
//
// convert-tile-to-gpu's scratch (reductions, layout conversions, staged mma
// operands) goes past the buffers live where it is used or later: a
// `tilegpu.scratch_base` before each step whose live buffers end elsewhere
// than the step before says where. After an attention loop, the
// epilogue's conversions reuse the ring's bytes instead of growing the
// kernel past them. A producer region's scratch stays past every buffer.
//
// Buffers that end past what a block can have are an error at the largest
// (a ring: fewer stages or smaller tiles help), not a launch that fails.
//
//===----------------------------------------------------------------------===//
#include "compiler/Passes.h"
#include "compiler/gpu/SharedLiveness.h"
#include "compiler/gpu/TilePipelineMma.h"
#include "compiler/gpu/TileToGpuCommon.h"
#include "dialects/tilegpu/TileGpuDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

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
  int64_t first, last; // live range in SharedLiveness steps
  int64_t offset = 0;
};

/// Where scratch may start at each step: past the buffers live there or
/// later. Only a dead buffer's bytes are reused: a scratch use begins with
/// a barrier, so every thread is done with the buffer, but ends without
/// one, so a buffer allocated after it could be overwritten too soon.
void markScratchBases(func::FuncOp func, const SharedLiveness &liveness,
                      ArrayRef<Buffer> buffers, int64_t kernelEnd) {
  OpBuilder b(func.getContext());
  Block *block = nullptr;
  int64_t current = 0;
  for (auto [step, op] : llvm::enumerate(liveness.getSteps())) {
    int64_t end = 0;
    for (const Buffer &buffer : buffers)
      if (int64_t(step) <= buffer.last)
        end = std::max(end, buffer.offset + buffer.bytes);
    end = llvm::alignTo(end, 16);
    if (op->getBlock() == block && end == current)
      continue;
    block = op->getBlock();
    current = end;
    b.setInsertionPoint(op);
    tilegpu::ScratchBaseOp::create(b, op->getLoc(), end);
  }
  // The producer runs beside every consumer step.
  func.walk([&](scf::IfOp ifOp) {
    if (!ifOp->hasAttr(tilegpu::WarpSpecializedAttr::getAttrName()))
      return;
    Block &producer = ifOp.getThenRegion().front();
    b.setInsertionPointToStart(&producer);
    tilegpu::ScratchBaseOp::create(b, ifOp.getLoc(), kernelEnd);
  });
}

LogicalResult allocate(func::FuncOp func) {
  if (func.isExternal())
    return success();
  // Markers of an earlier run would hide this run's.
  func.walk([](tilegpu::ScratchBaseOp marker) { marker.erase(); });
  SharedLiveness liveness(func);
  SmallVector<Buffer> buffers;
  func.walk([&](Operation *op) {
    int64_t bytes = SharedLiveness::getBufferBytes(op);
    if (!bytes)
      return;
    int64_t align = 8;
    if (auto alloc = dyn_cast<tilegpu::AllocSharedOp>(op))
      align = alloc.getType().getAlignment();
    auto [first, last] = liveness.getLiveRange(op);
    buffers.push_back({op, bytes, align, first, last});
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
  if (!end)
    return success();
  end = llvm::alignTo(end, 16);
  if (end > pipeline::kMaxSharedBytes) {
    const Buffer &largest =
        *llvm::max_element(buffers, [](const Buffer &x, const Buffer &y) {
          return x.bytes < y.bytes;
        });
    return largest.alloc->emitError()
           << "this kernel's shared-memory buffers need " << end
           << " bytes, more than the " << pipeline::kMaxSharedBytes
           << " a block can have; the largest, for this op, takes "
           << largest.bytes
           << ": use fewer stages (num_stages) or smaller tiles";
  }
  func->setAttr(kSharedBytesAttr,
                IntegerAttr::get(IntegerType::get(func.getContext(), 64), end));
  markScratchBases(func, liveness, buffers, end);
  return success();
}

struct TileAllocateSharedPass
    : tile::impl::TileAllocateSharedBase<TileAllocateSharedPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(allocate(func)))
        return signalPassFailure();
  }
};

} // namespace
