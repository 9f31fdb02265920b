//===- HostPatterns.h - pieces of convert-tile-to-host ----------*- C++ -*-===//
//
// The conversion is split by op family (memory, compute, debugging); the pass
// itself lives in ConvertTileToHost.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_COMPILER_CPU_HOSTPATTERNS_H
#define TILE_COMPILER_CPU_HOSTPATTERNS_H

#include "dialects/tile/TileDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tile::host {

/// Number of trailing i32 arguments a kernel gains: bid x, y, z, then
/// num_blocks x, y, z.
constexpr unsigned kNumGridArgs = 6;

/// The memref an array lowers to: its static extents and strides kept,
/// the rest and the offset dynamic.
MemRefType getArrayMemRefType(ArrayType type);

/// Small builders shared by the patterns.
Value indexConst(OpBuilder &b, Location loc, int64_t v);
Value toIndex(OpBuilder &b, Location loc, Value intValue);
/// A scalar zero (or false) of `type`.
Value zeroOf(OpBuilder &b, Location loc, Type type);
/// Static slice sizes, one per extent of `shape`.
SmallVector<OpFoldResult> staticSizes(OpBuilder &b, ArrayRef<int64_t> shape);
/// Slice strides of 1 in each of `rank` dimensions.
SmallVector<OpFoldResult> unitStrides(OpBuilder &b, unsigned rank);

/// Emits a loop nest over `shape` (static, possibly rank 0) and calls `body`
/// with the induction variables at the innermost level.
void buildLoopNest(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   function_ref<void(OpBuilder &, Location, ValueRange)> body);


/// Declares the runtime's __tile_cas_<bits> for each tile.atomic_cas width.
void declareCasFunctions(ModuleOp module);

/// The loads that may read their array in place, without a copy (see
/// canLoadInPlace in HostMemoryPatterns.cpp).
DenseSet<Operation *> findInPlaceLoads(ModuleOp module);

/// `inPlaceLoads` must outlive the patterns.
void populateMemoryPatterns(TypeConverter &converter,
                            RewritePatternSet &patterns,
                            const DenseSet<Operation *> &inPlaceLoads);
void populateComputePatterns(TypeConverter &converter,
                             RewritePatternSet &patterns);

/// Lowers tile.print and tile.assert in `func` (a kernel with its grid
/// arguments already appended) to calls into the host runtime.
LogicalResult lowerDebugOps(func::FuncOp func);

} // namespace mlir::tile::host

#endif // TILE_COMPILER_CPU_HOSTPATTERNS_H
