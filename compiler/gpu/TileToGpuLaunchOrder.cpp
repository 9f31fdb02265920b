//===- TileToGpuLaunchOrder.cpp - grid dependency control on the GPU -----===//
//
// tile.grid_dependency_control becomes PTX griddepcontrol (nvvm.griddepcontrol,
// sm_90+). Targets before sm_90 have no programmatic dependent launch (a
// kernel always starts after its predecessor), so translateToPtx drops the
// op there.
//
//===----------------------------------------------------------------------===//
#include "compiler/gpu/TileToGpuCommon.h"

#include "dialects/tile/TileDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

struct GridDependencyControlPattern
    : OpConversionPattern<GridDependencyControlOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GridDependencyControlOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto kind = op.getAction() == GridDependencyAction::wait
                    ? NVVM::GridDepActionKind::wait
                    : NVVM::GridDepActionKind::launch_dependents;
    rewriter.replaceOpWithNewOp<NVVM::GriddepcontrolOp>(op, kind);
    return success();
  }
};

} // namespace

void mlir::tile::populateTileToGpuLaunchOrderPatterns(
    TypeConverter &converter, RewritePatternSet &patterns,
    GpuLoweringState &state) {
  patterns.add<GridDependencyControlPattern>(converter, patterns.getContext());
}
