//===- TileDialect.cpp - tile dialect registration ------------------------===//
#include "dialects/tile/TileDialect.h"
#include "dialects/tile/TileGpuAsmOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tile;

#include "dialects/tile/TileDialect.cpp.inc"
#include "dialects/tile/TileEnums.cpp.inc"

#include "dialects/tile/TileAttrInterfaces.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/tile/TileAttrs.cpp.inc"

namespace {
/// Layout encodings print as #blocked, #slice, #mma aliases (as in Triton).
struct TileOpAsmInterface : OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;
  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    if (isa<BlockedLayoutAttr>(attr)) {
      os << "blocked";
      return AliasResult::FinalAlias;
    }
    if (isa<SliceLayoutAttr>(attr)) {
      os << "slice";
      return AliasResult::FinalAlias;
    }
    if (isa<MmaLayoutAttr>(attr)) {
      os << "mma";
      return AliasResult::FinalAlias;
    }
    return AliasResult::NoAlias;
  }
};
} // namespace

void TileDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/tile/TileOps.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "dialects/tile/TileGpuAsmOps.cpp.inc"
      >();
  registerTypes();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/tile/TileAttrs.cpp.inc"
      >();
  addInterfaces<TileOpAsmInterface>();
}

Operation *TileDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  if (auto typed = dyn_cast<TypedAttr>(value))
    if (arith::ConstantOp::isBuildableWith(typed, type))
      return arith::ConstantOp::create(builder, loc, type, typed);
  return nullptr;
}

LogicalResult TileDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  if (attr.getName() != getTmaOkAttrName())
    return success();
  if (!isa<UnitAttr>(attr.getValue()))
    return op->emitError() << attr.getName() << " is a unit attribute";
  auto func = dyn_cast<FunctionOpInterface>(op);
  auto array = func && argIndex < func.getNumArguments()
                   ? dyn_cast<ArrayType>(func.getArgumentTypes()[argIndex])
                   : ArrayType();
  if (!array)
    return op->emitError() << attr.getName()
                           << " marks array arguments of functions";
  if (array.getRank() < 1 || array.getRank() > 5 ||
      !array.hasUnitInnerStride() || array.getAlignment() % 16 ||
      llvm::count(array.getStrides(), 1) != 1)
    return op->emitError()
           << attr.getName() << " needs an array of rank 1 to 5 whose inner "
           << "stride alone is 1 and whose alignment is 16, not " << array;
  return success();
}
