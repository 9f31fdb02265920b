//===- TileTypes.cpp - the !tile.array type -------------------------------===//
#include "dialects/tile/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::tile;

#define GET_TYPEDEF_CLASSES
#include "dialects/tile/TileTypes.cpp.inc"

void TileDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/tile/TileTypes.cpp.inc"
      >();
}

static void printDynList(AsmPrinter &printer, ArrayRef<int64_t> values) {
  llvm::interleaveComma(values, printer, [&](int64_t v) {
    if (ShapedType::isDynamic(v))
      printer << "?";
    else
      printer << v;
  });
}

// !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>
Type ArrayType::parse(AsmParser &parser) {
  SmallVector<int64_t> shape;
  Type elementType;
  if (parser.parseLess() ||
      parser.parseDimensionList(shape, /*allowDynamic=*/true) ||
      parser.parseType(elementType))
    return {};
  SmallVector<int64_t> strides(shape.size(), ShapedType::kDynamic);
  int64_t alignment = 1, divisibility = 1;
  while (succeeded(parser.parseOptionalComma())) {
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (key == "strides") {
      strides.clear();
      auto parseOne = [&]() -> ParseResult {
        if (succeeded(parser.parseOptionalQuestion())) {
          strides.push_back(ShapedType::kDynamic);
          return success();
        }
        return parser.parseInteger(strides.emplace_back());
      };
      if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                         parseOne))
        return {};
    } else if (key == "align") {
      if (parser.parseInteger(alignment))
        return {};
    } else if (key == "div") {
      if (parser.parseInteger(divisibility))
        return {};
    } else {
      parser.emitError(parser.getCurrentLocation(),
                       "expected 'strides', 'align' or 'div', got '")
          << key << "'";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  return parser.getChecked<ArrayType>(parser.getContext(), shape, elementType,
                                      strides, alignment, divisibility);
}

void ArrayType::print(AsmPrinter &printer) const {
  printer << "<";
  for (int64_t d : getShape()) {
    if (ShapedType::isDynamic(d))
      printer << "?";
    else
      printer << d;
    printer << "x";
  }
  printer << getElementType();
  if (llvm::any_of(getStrides(),
                   [](int64_t s) { return !ShapedType::isDynamic(s); })) {
    printer << ", strides = [";
    printDynList(printer, getStrides());
    printer << "]";
  }
  if (getAlignment() != 1)
    printer << ", align = " << getAlignment();
  if (getDivisibility() != 1)
    printer << ", div = " << getDivisibility();
  printer << ">";
}

LogicalResult
ArrayType::verify(function_ref<InFlightDiagnostic()> emitError,
                  ArrayRef<int64_t> shape, Type elementType,
                  ArrayRef<int64_t> strides, int64_t alignment,
                  int64_t divisibility) {
  if (!elementType.isIntOrFloat())
    return emitError() << "array element type must be an integer or float, got "
                       << elementType;
  if (shape.size() != strides.size())
    return emitError() << "array of rank " << shape.size() << " has "
                       << strides.size() << " strides";
  for (int64_t d : shape)
    if (!ShapedType::isDynamic(d) && d < 0)
      return emitError() << "array extents must be non-negative";
  if (alignment < 1 || !llvm::isPowerOf2_64(alignment))
    return emitError() << "array alignment must be a power of two, got "
                       << alignment;
  if (divisibility < 1)
    return emitError() << "array divisibility must be positive, got "
                       << divisibility;
  return success();
}
