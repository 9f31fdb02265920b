//===- TileAllocateShared.cpp - offsets of a kernel's shared buffers ------===//
//
// The tile-allocate-shared pass. Every tilegpu.alloc_shared /
// alloc_mbarriers of a kernel lives for the whole kernel (rings are
// refilled while the loop runs), so the buffers are laid out one after the
// other, each at its type's alignment. The end goes on the kernel as
// kSharedBytesAttr: convert-tile-to-gpu's scratch (reductions, layout
// conversions, staged mma operands) starts there.
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

struct TileAllocateSharedPass
    : tile::impl::TileAllocateSharedBase<TileAllocateSharedPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      int64_t end = 0;
      auto place = [&](Operation *op, int64_t bytes, int64_t align) {
        int64_t offset = llvm::alignTo(end, align);
        op->setAttr(
            "offset",
            IntegerAttr::get(IntegerType::get(op->getContext(), 64), offset));
        end = offset + bytes;
      };
      func.walk([&](Operation *op) {
        if (auto alloc = dyn_cast<tilegpu::AllocSharedOp>(op))
          place(op, alloc.getType().getTotalBytes(),
                alloc.getType().getAlignment());
        else if (auto bars = dyn_cast<tilegpu::AllocMBarriersOp>(op))
          place(op, 8 * bars.getType().getCount(), 8);
      });
      if (end)
        func->setAttr(kSharedBytesAttr,
                      IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                       llvm::alignTo(end, 16)));
    }
  }
};

} // namespace
