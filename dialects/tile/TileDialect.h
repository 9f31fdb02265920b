//===- TileDialect.h - the tile dialect -------------------------*- C++ -*-===//
#ifndef TILE_DIALECT_TILEDIALECT_H
#define TILE_DIALECT_TILEDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/tile/LinearLayout.h"
#include "mlir/IR/TensorEncoding.h"

#include "dialects/tile/TileDialect.h.inc"
#include "dialects/tile/TileEnums.h.inc"

namespace mlir::tile {
/// LayoutAttrInterface::verifyShape's default: `shape` has the layout's rank
/// (`layout` implements the interface) and static power-of-two extents.
LogicalResult verifyLayoutShape(Attribute layout, ArrayRef<int64_t> shape,
                                function_ref<InFlightDiagnostic()> emitError);
} // namespace mlir::tile

#include "dialects/tile/TileAttrInterfaces.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/tile/TileAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/tile/TileTypes.h.inc"

#define GET_OP_CLASSES
#include "dialects/tile/TileOps.h.inc"

namespace mlir::tile {
/// Largest number of elements a tile may hold (the language's contract).
constexpr int64_t kMaxTileElements = int64_t(1) << 20;

/// Checks the language's shape rules for a tile type: static, every extent a
/// power of two, at most kMaxTileElements elements. Emits through `emitError`.
LogicalResult verifyTileShape(function_ref<InFlightDiagnostic()> emitError,
                              ShapedType type, StringRef what);

/// The ordering and scope of a memory op (load, store, gather, scatter,
/// atomic): its `memory_order`/`memory_scope` attributes, else the defaults
/// (weak/none for loads and stores, acq_rel/device for atomics).
MemoryOrder getMemoryOrder(Operation *op);
MemoryScope getMemoryScope(Operation *op);

/// Clones `combiner` (a tile.reduce/scan region taking the accumulated values
/// then the new ones) at the builder's insertion point with its arguments
/// bound to `acc` and `next`; `onClone` sees each cloned op. Returns the
/// yielded values.
SmallVector<Value>
cloneCombiner(OpBuilder &b, Region &combiner, ValueRange acc, ValueRange next,
              function_ref<void(Operation *)> onClone = nullptr);
} // namespace mlir::tile

#endif // TILE_DIALECT_TILEDIALECT_H
