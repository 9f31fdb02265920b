//===- TileGpuTypes.cpp - shared buffers, tokens, mbarriers, tensor maps --===//
#include "dialects/tilegpu/TileGpuDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tilegpu;

#define GET_TYPEDEF_CLASSES
#include "dialects/tilegpu/TileGpuTypes.cpp.inc"

void TileGpuDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/tilegpu/TileGpuTypes.cpp.inc"
      >();
}

/// Bytes of `type` in memory (i1 as a byte).
static int64_t bytesOf(Type type) {
  return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
}

/// Parses `<RxCxT` then `, key = value` pairs up to `>`; `keys` lists the
/// accepted keys, `values` gets them (0 when absent).
static ParseResult parseShapeAndKeys(AsmParser &parser,
                                     SmallVectorImpl<int64_t> &shape,
                                     Type &elementType,
                                     ArrayRef<StringRef> keys,
                                     MutableArrayRef<int64_t> values) {
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/false) ||
      parser.parseType(elementType))
    return failure();
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    SMLoc at = parser.getCurrentLocation();
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return failure();
    const StringRef *it = llvm::find(keys, key);
    if (it == keys.end())
      return parser.emitError(at) << "unknown key '" << key << "'";
    if (parser.parseInteger(values[it - keys.begin()]))
      return failure();
  }
  return parser.parseGreater();
}

static void printShape(AsmPrinter &printer, ArrayRef<int64_t> shape,
                       Type elementType) {
  for (int64_t d : shape)
    printer << d << "x";
  printer << elementType;
}

// !tilegpu.shared<128x64xf16, slots = 4, swizzle = 128>
Type SharedBufferType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  int64_t values[3] = {1, 0, 0};
  if (parseShapeAndKeys(parser, shape, elementType,
                        {"slots", "swizzle", "row_stride"}, values))
    return {};
  return parser.getChecked<SharedBufferType>(
      parser.getContext(), shape, elementType, values[0], values[1], values[2]);
}

void SharedBufferType::print(AsmPrinter &printer) const {
  printer << "<";
  printShape(printer, getShape(), getElementType());
  printer << ", slots = " << getSlots();
  if (getSwizzle())
    printer << ", swizzle = " << getSwizzle();
  if (getRowStride())
    printer << ", row_stride = " << getRowStride();
  printer << ">";
}

LogicalResult
SharedBufferType::verify(function_ref<InFlightDiagnostic()> emitError,
                         ArrayRef<int64_t> shape, Type elementType,
                         int64_t slots, int64_t swizzle, int64_t rowStride) {
  if (shape.size() != 2 || llvm::any_of(shape, [](int64_t d) { return d < 1; }))
    return emitError() << "a shared buffer holds 2-d blocks of static shape";
  if (!elementType.isIntOrFloat())
    return emitError() << "a shared buffer holds integers or floats, not "
                       << elementType;
  if (slots < 1)
    return emitError() << "a shared buffer has at least one slot";
  if (swizzle != 0 && swizzle != 64 && swizzle != 128)
    return emitError() << "swizzle must be 64 or 128 bytes, not " << swizzle;
  if (swizzle && rowStride)
    return emitError() << "a swizzled buffer has no row stride";
  if (swizzle && (shape[1] * bytesOf(elementType)) % swizzle)
    return emitError() << "rows of " << shape[1] * bytesOf(elementType)
                       << " bytes do not fill " << swizzle
                       << "-byte swizzled panels";
  if (rowStride && rowStride < shape[1])
    return emitError() << "row_stride " << rowStride
                       << " is shorter than a row of " << shape[1];
  return success();
}

int64_t SharedBufferType::getElementBytes() const {
  return bytesOf(getElementType());
}

int64_t SharedBufferType::getSlotBytes() const {
  return (getRows() * getRowPitch() * getElementBytes() + 15) / 16 * 16;
}

SharedBufferType SharedBufferType::withSlots(int64_t n) const {
  return SharedBufferType::get(getContext(), getShape(), getElementType(), n,
                               getSwizzle(), getRowStride());
}

LogicalResult
MBarriersType::verify(function_ref<InFlightDiagnostic()> emitError,
                      int64_t count) {
  if (count < 1)
    return emitError() << "at least one mbarrier";
  return success();
}

// !tilegpu.tensor_map<128x64xf16, swizzle = 128>
Type TensorMapType::parse(AsmParser &parser) {
  SmallVector<int64_t> box;
  Type elementType;
  int64_t values[1] = {0};
  if (parseShapeAndKeys(parser, box, elementType, {"swizzle"}, values))
    return {};
  return parser.getChecked<TensorMapType>(parser.getContext(), box, elementType,
                                          values[0]);
}

void TensorMapType::print(AsmPrinter &printer) const {
  printer << "<";
  printShape(printer, getBox(), getElementType());
  if (getSwizzle())
    printer << ", swizzle = " << getSwizzle();
  printer << ">";
}

LogicalResult
TensorMapType::verify(function_ref<InFlightDiagnostic()> emitError,
                      ArrayRef<int64_t> box, Type elementType,
                      int64_t swizzle) {
  if (box.empty() || box.size() > 5)
    return emitError() << "a TMA box has 1 to 5 dimensions";
  // cuTensorMapEncodeTiled: each box extent at most 256 elements.
  if (llvm::any_of(box, [](int64_t d) { return d < 1 || d > 256; }))
    return emitError() << "TMA box extents are 1 to 256 elements";
  if (!elementType.isIntOrFloat())
    return emitError() << "a tensor map holds integers or floats";
  if (swizzle != 0 && swizzle != 32 && swizzle != 64 && swizzle != 128)
    return emitError() << "TMA swizzle is 0, 32, 64 or 128 bytes";
  int64_t innerBytes = box.back() * bytesOf(elementType);
  if (innerBytes % 16)
    return emitError() << "the box's inner extent is " << innerBytes
                       << " bytes, not a multiple of 16";
  if (swizzle && innerBytes > swizzle)
    return emitError() << "the box's inner extent (" << innerBytes
                       << " bytes) exceeds the " << swizzle
                       << "-byte swizzle span";
  return success();
}
