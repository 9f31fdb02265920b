//===- TileEmitPtx.cpp - print (or attach) the PTX of each gpu.module -----===//
#include "compiler/Passes.h"
#include "compiler/gpu/GpuTarget.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/ToolOutputFile.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEEMITPTX
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {
struct TileEmitPtxPass : tile::impl::TileEmitPtxBase<TileEmitPtxPass> {
  using TileEmitPtxBase::TileEmitPtxBase;
  void runOnOperation() override {
    std::string all;
    for (auto gpuModule : getOperation().getOps<gpu::GPUModuleOp>()) {
      PtxOptions options;
      options.chip = chip;
      options.optLevel = optLevel;
      options.registerScheduling = registerScheduling;
      FailureOr<std::string> ptx = translateToPtx(gpuModule, options);
      if (failed(ptx))
        return signalPassFailure();
      if (attach)
        gpuModule->setAttr("tile.ptx", StringAttr::get(&getContext(), *ptx));
      else
        all += *ptx;
    }
    if (attach)
      return;
    if (output == "-") {
      llvm::outs() << all;
      llvm::outs().flush();
      return;
    }
    std::error_code ec;
    llvm::raw_fd_ostream os(output, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      getOperation().emitError() << "cannot write " << output << ": "
                                 << ec.message();
      return signalPassFailure();
    }
    os << all;
  }
};
} // namespace
