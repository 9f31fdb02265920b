//===- ConvertTileToHost.cpp - tile IR to host tensors and buffers --------===//
//
// Kernels first gain their grid arguments (tile.bid and tile.num_blocks read
// them, print and assert report them), then a dialect conversion turns arrays
// into strided memrefs and every other tile op into upstream ops.
//
//===----------------------------------------------------------------------===//
#include "compiler/Passes.h"
#include "compiler/cpu/HostPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"

namespace mlir::tile {
#define GEN_PASS_DEF_CONVERTTILETOHOST
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

MemRefType host::getArrayMemRefType(ArrayType type) {
  auto layout = StridedLayoutAttr::get(type.getContext(), ShapedType::kDynamic,
                                       type.getStrides());
  return MemRefType::get(type.getShape(), type.getElementType(), layout);
}

Value host::indexConst(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value host::toIndex(OpBuilder &b, Location loc, Value intValue) {
  if (intValue.getType().isIndex())
    return intValue;
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), intValue);
}

Value host::zeroOf(OpBuilder &b, Location loc, Type type) {
  return arith::ConstantOp::create(b, loc, type, b.getZeroAttr(type));
}

SmallVector<OpFoldResult> host::staticSizes(OpBuilder &b,
                                            ArrayRef<int64_t> shape) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t n : shape)
    sizes.push_back(b.getIndexAttr(n));
  return sizes;
}

SmallVector<OpFoldResult> host::unitStrides(OpBuilder &b, unsigned rank) {
  return SmallVector<OpFoldResult>(rank, b.getIndexAttr(1));
}

void host::buildLoopNest(
    OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
    function_ref<void(OpBuilder &, Location, ValueRange)> body) {
  SmallVector<Value> ivs;
  OpBuilder::InsertionGuard guard(b);
  Value zero = indexConst(b, loc, 0), one = indexConst(b, loc, 1);
  for (int64_t extent : shape) {
    auto loop =
        scf::ForOp::create(b, loc, zero, indexConst(b, loc, extent), one);
    ivs.push_back(loop.getInductionVar());
    b.setInsertionPoint(loop.getBody()->getTerminator());
  }
  body(b, loc, ivs);
}

//===----------------------------------------------------------------------===//
// Grid arguments
//===----------------------------------------------------------------------===//

/// Appends the grid arguments to a kernel and replaces the block queries.
static void addGridArguments(func::FuncOp func) {
  MLIRContext *ctx = func.getContext();
  Type i32 = IntegerType::get(ctx, 32);
  unsigned n = func.getNumArguments();
  static const char *names[] = {"bid_x", "bid_y", "bid_z",
                                "num_blocks_x", "num_blocks_y",
                                "num_blocks_z"};
  SmallVector<unsigned> positions(host::kNumGridArgs, n);
  SmallVector<Type> types(host::kNumGridArgs, i32);
  SmallVector<DictionaryAttr> attrs;
  SmallVector<Location> locs(host::kNumGridArgs, func.getLoc());
  for (const char *name : names)
    attrs.push_back(DictionaryAttr::get(
        ctx, {NamedAttribute(StringAttr::get(ctx, "tile.grid"),
                             StringAttr::get(ctx, name))}));
  (void)func.insertArguments(positions, types, attrs, locs);
  ValueRange grid = func.getArguments().take_back(host::kNumGridArgs);
  func.walk([&](Operation *op) {
    if (auto bid = dyn_cast<BidOp>(op)) {
      bid.replaceAllUsesWith(grid[bid.getAxis()]);
      bid.erase();
    } else if (auto nb = dyn_cast<NumBlocksOp>(op)) {
      nb.replaceAllUsesWith(grid[3 + nb.getAxis()]);
      nb.erase();
    }
  });
}

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

namespace {
struct ConvertTileToHostPass
    : tile::impl::ConvertTileToHostBase<ConvertTileToHostPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();

    SmallVector<func::FuncOp> kernels;
    for (auto func : module.getOps<func::FuncOp>())
      if (func->hasAttr("tile.kernel") && !func.isExternal())
        kernels.push_back(func);
    for (func::FuncOp func : kernels) {
      // TMA is the GPU's: the host's memref arguments need no such mark.
      for (unsigned i = 0; i < func.getNumArguments(); ++i)
        func.removeArgAttr(i, TileDialect::getTmaOkAttrName());
      addGridArguments(func);
      if (failed(host::lowerDebugOps(func)))
        return signalPassFailure();
    }
    host::declareCasFunctions(module);
    // Host launches run one after another: a grid dependency is always met.
    module.walk([](GridDependencyControlOp op) { op.erase(); });
    WalkResult stray = module.walk([](Operation *op) {
      if (isa<BidOp, NumBlocksOp, PrintOp, AssertOp>(op)) {
        op->emitOpError("is only supported inside a tile.kernel function");
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (stray.wasInterrupted())
      return signalPassFailure();

    TypeConverter converter;
    converter.addConversion([](Type type) { return type; });
    converter.addConversion(
        [](ArrayType type) -> Type { return host::getArrayMemRefType(type); });

    DenseSet<Operation *> inPlaceLoads = host::findInPlaceLoads(module);
    RewritePatternSet patterns(ctx);
    host::populateMemoryPatterns(converter, patterns, inPlaceLoads);
    host::populateComputePatterns(converter, patterns);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   converter);
    populateCallOpTypeConversionPattern(patterns, converter);
    populateReturnOpTypeConversionPattern(patterns, converter);

    ConversionTarget target(*ctx);
    target.addIllegalDialect<TileDialect>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    target.addDynamicallyLegalOp<func::FuncOp>([&](func::FuncOp op) {
      return converter.isSignatureLegal(op.getFunctionType()) &&
             converter.isLegal(&op.getBody());
    });
    target.addDynamicallyLegalOp<func::CallOp, func::ReturnOp>(
        [&](Operation *op) { return converter.isLegal(op); });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
