//===- TileGpuAttrs.cpp - tilegpu attributes and their verifiers ----------===//
#include "dialects/tilegpu/TileGpuDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tilegpu;

#define GET_ATTRDEF_CLASSES
#include "dialects/tilegpu/TileGpuAttrs.cpp.inc"

void TileGpuDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/tilegpu/TileGpuAttrs.cpp.inc"
      >();
}

/// `tilegpu.tensor_map_of` on argument `argIndex` of a function: the
/// argument is a tensor map, the array it names a `tile.tma_ok` array of
/// the box's rank and the map's element width, and no argument other than
/// a tensor map follows it.
LogicalResult TileGpuDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                       unsigned argIndex,
                                                       NamedAttribute attr) {
  if (attr.getName() != TensorMapOfAttr::getArgAttrName())
    return op->emitError() << "unknown tilegpu argument attribute "
                           << attr.getName();
  auto of = dyn_cast<TensorMapOfAttr>(attr.getValue());
  if (!of)
    return op->emitError() << attr.getName()
                           << " takes a #tilegpu.tensor_map_of attribute";
  auto func = dyn_cast<FunctionOpInterface>(op);
  if (!func || argIndex >= func.getNumArguments())
    return op->emitError() << attr.getName() << " marks arguments of functions";
  ArrayRef<Type> types = func.getArgumentTypes();
  auto map = dyn_cast<TensorMapType>(types[argIndex]);
  if (!map)
    return op->emitError() << attr.getName()
                           << " marks a !tilegpu.tensor_map argument, not "
                           << types[argIndex];
  for (Type t : types.drop_front(argIndex + 1))
    if (!isa<TensorMapType>(t))
      return op->emitError() << "tensor-map argument " << argIndex
                             << " is followed by an argument of type " << t
                             << ": tensor maps come last";
  int64_t array = of.getArray();
  auto arrayType = array >= 0 && array < int64_t(types.size())
                       ? dyn_cast<tile::ArrayType>(types[array])
                       : tile::ArrayType();
  if (!arrayType)
    return op->emitError() << "tensor-map argument " << argIndex
                           << " names argument " << array
                           << ", which is not an array";
  if (!func.getArgAttr(array, tile::TileDialect::getTmaOkAttrName()))
    return op->emitError() << "tensor-map argument " << argIndex
                           << " describes array argument " << array
                           << ", which is not marked "
                           << tile::TileDialect::getTmaOkAttrName();
  if (int64_t(arrayType.getRank()) != int64_t(map.getBox().size()))
    return op->emitError() << "tensor-map argument " << argIndex << "'s box "
                           << "has " << map.getBox().size()
                           << " dimensions, its array " << arrayType.getRank();
  if (arrayType.getElementType().getIntOrFloatBitWidth() !=
      map.getElementType().getIntOrFloatBitWidth())
    return op->emitError() << "tensor-map argument " << argIndex << " moves "
                           << map.getElementType() << ", its array holds "
                           << arrayType.getElementType();
  return success();
}
