//===- TileLayouts.cpp - layout encodings and tile.convert_layout ---------===//
#include "dialects/tile/TileDialect.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::tile;

static unsigned product(ArrayRef<unsigned> values) {
  unsigned p = 1;
  for (unsigned v : values)
    p *= v;
  return p;
}

static bool isPowerOfTwo(unsigned v) { return v && llvm::isPowerOf2_32(v); }

LogicalResult
mlir::tile::verifyLayoutShape(Attribute layout, ArrayRef<int64_t> shape,
                              function_ref<InFlightDiagnostic()> emitError) {
  unsigned rank = cast<LayoutAttrInterface>(layout).getRank();
  if (shape.size() != rank)
    return emitError() << "layout " << layout << " is for rank " << rank
                       << ", not for a tensor of rank " << shape.size();
  for (int64_t extent : shape)
    if (ShapedType::isDynamic(extent) || extent <= 0 ||
        !llvm::isPowerOf2_64(extent))
      return emitError() << "a tensor with a layout needs static power-of-two "
                            "extents";
  return success();
}

namespace {
/// Builds a layout bit by bit, as the layouts are defined: each new basis of
/// dimension d is the next power of two of d, zero (or dropped, for
/// registers) beyond the shape.
struct LayoutBuilder {
  LinearLayout layout;
  SmallVector<int64_t, 4> next;
  explicit LayoutBuilder(ArrayRef<int64_t> shape) : next(shape.size(), 1) {
    layout.shape.assign(shape.begin(), shape.end());
  }
  void add(SmallVector<LinearLayout::Basis> &list, unsigned d, int64_t value,
           bool isReg) {
    LinearLayout::Basis basis(layout.shape.size(), 0);
    if (value < layout.shape[d])
      basis[d] = value;
    if (!isReg || basis[d] != 0)
      list.push_back(basis);
  }
  void addNext(SmallVector<LinearLayout::Basis> &list, unsigned d, bool isReg) {
    add(list, d, next[d], isReg);
    next[d] *= 2;
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// #tile.blocked
//===----------------------------------------------------------------------===//

LogicalResult
BlockedLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                          ArrayRef<unsigned> sizePerThread,
                          ArrayRef<unsigned> threadsPerWarp,
                          ArrayRef<unsigned> warpsPerCTA,
                          ArrayRef<unsigned> order) {
  size_t rank = sizePerThread.size();
  if (threadsPerWarp.size() != rank || warpsPerCTA.size() != rank ||
      order.size() != rank)
    return emitError() << "blocked layout parameters must have one rank";
  unsigned threads = 1;
  for (unsigned t : threadsPerWarp)
    threads *= t;
  if (threads != 32)
    return emitError() << "threadsPerWarp must multiply to 32, got " << threads;
  SmallVector<bool> seen(rank, false);
  for (unsigned o : order) {
    if (o >= rank || seen[o])
      return emitError() << "order must be a permutation of [0, " << rank
                         << ")";
    seen[o] = true;
  }
  if (!llvm::all_of(sizePerThread, isPowerOfTwo) ||
      !llvm::all_of(threadsPerWarp, isPowerOfTwo) ||
      !llvm::all_of(warpsPerCTA, isPowerOfTwo))
    return emitError() << "blocked layout sizes must be powers of two";
  return success();
}

unsigned BlockedLayoutAttr::getRank() const { return getOrder().size(); }

int BlockedLayoutAttr::getNumWarps() const { return product(getWarpsPerCTA()); }

// Registers first (the sizePerThread box), then lanes, then warps, each
// filling the dimensions in `order`; the registers that remain repeat the
// pattern over the rest of the tile.
FailureOr<LinearLayout>
BlockedLayoutAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  if (getRank() != shape.size())
    return failure();
  LayoutBuilder b(shape);
  ArrayRef<unsigned> order = getOrder();
  for (unsigned d : order)
    for (unsigned i = 0; i < llvm::Log2_32(getSizePerThread()[d]); ++i)
      b.addNext(b.layout.regs, d, /*isReg=*/true);
  for (unsigned d : order)
    for (unsigned i = 0; i < llvm::Log2_32(getThreadsPerWarp()[d]); ++i)
      b.addNext(b.layout.lanes, d, false);
  for (unsigned d : order)
    for (unsigned i = 0; i < llvm::Log2_32(getWarpsPerCTA()[d]); ++i)
      b.addNext(b.layout.warps, d, false);
  for (unsigned d : order)
    while (b.next[d] < shape[d])
      b.addNext(b.layout.regs, d, true);
  return b.layout;
}

LogicalResult BlockedLayoutAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type,
    function_ref<InFlightDiagnostic()> emitError) const {
  return verifyShape(shape, emitError);
}

//===----------------------------------------------------------------------===//
// #tile.slice
//===----------------------------------------------------------------------===//

LogicalResult
SliceLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                        unsigned dim, Attribute parent) {
  auto layout = dyn_cast_or_null<LayoutAttrInterface>(parent);
  if (!layout)
    return emitError() << "slice parent must be a layout, got " << parent;
  if (dim >= layout.getRank())
    return emitError() << "slice dim " << dim << " is out of range for a "
                       << "parent of rank " << layout.getRank();
  return success();
}

unsigned SliceLayoutAttr::getRank() const {
  return cast<LayoutAttrInterface>(getParent()).getRank() - 1;
}

int SliceLayoutAttr::getNumWarps() const {
  return cast<LayoutAttrInterface>(getParent()).getNumWarps();
}

// The parent's layout over the shape with a size-1 `dim` inserted, `dim`
// then removed: threads that differed along it hold the same elements.
FailureOr<LinearLayout>
SliceLayoutAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  if (getDim() > shape.size())
    return failure();
  SmallVector<int64_t> parentShape(shape);
  parentShape.insert(parentShape.begin() + getDim(), 1);
  FailureOr<LinearLayout> parent =
      cast<LayoutAttrInterface>(getParent()).toLinearLayout(parentShape);
  if (failed(parent))
    return failure();
  return parent->sliced(getDim());
}

LogicalResult SliceLayoutAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type,
    function_ref<InFlightDiagnostic()> emitError) const {
  return verifyShape(shape, emitError);
}

//===----------------------------------------------------------------------===//
// #tile.mma
//===----------------------------------------------------------------------===//

LogicalResult
MmaLayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      unsigned version, ArrayRef<unsigned> warpsPerCTA) {
  if (version != 2)
    return emitError() << "mma layout version " << version
                       << " is not supported (2: m16n8 accumulators)";
  if (warpsPerCTA.size() != 2)
    return emitError() << "mma layout needs 2 warpsPerCTA (M, N), got "
                       << warpsPerCTA.size();
  if (!llvm::all_of(warpsPerCTA, isPowerOfTwo))
    return emitError() << "mma layout warps must be powers of two";
  return success();
}

unsigned MmaLayoutAttr::getRank() const { return 2; }

int MmaLayoutAttr::getNumWarps() const { return product(getWarpsPerCTA()); }

// Lane l of a warp holds, of each 16x8 instruction tile, rows l/4 and
// l/4 + 8 (register bit 1) and columns 2*(l%4) + (register bit 0); warps
// tile the instruction grid, further registers repeat it (N first).
FailureOr<LinearLayout>
MmaLayoutAttr::toLinearLayout(ArrayRef<int64_t> shape) const {
  if (shape.size() != 2 || getWarpsPerCTA().size() != 2)
    return failure();
  LayoutBuilder b(shape);
  unsigned wm = getWarpsPerCTA()[0], wn = getWarpsPerCTA()[1];
  b.add(b.layout.regs, 1, 1, true);
  b.add(b.layout.regs, 0, 8, true);
  b.add(b.layout.lanes, 1, 2, false);
  b.add(b.layout.lanes, 1, 4, false);
  b.add(b.layout.lanes, 0, 1, false);
  b.add(b.layout.lanes, 0, 2, false);
  b.add(b.layout.lanes, 0, 4, false);
  for (unsigned i = 0; (1u << i) < wm; ++i)
    b.add(b.layout.warps, 0, int64_t(16) << i, false);
  for (unsigned i = 0; (1u << i) < wn; ++i)
    b.add(b.layout.warps, 1, int64_t(8) << i, false);
  for (int64_t v = 8 * wn; v < shape[1]; v *= 2)
    b.add(b.layout.regs, 1, v, true);
  for (int64_t v = 16 * wm; v < shape[0]; v *= 2)
    b.add(b.layout.regs, 0, v, true);
  return b.layout;
}

LogicalResult MmaLayoutAttr::verifyEncoding(
    ArrayRef<int64_t> shape, Type,
    function_ref<InFlightDiagnostic()> emitError) const {
  return verifyShape(shape, emitError);
}

//===----------------------------------------------------------------------===//
// Tiling attributes and tile.convert_layout
//===----------------------------------------------------------------------===//

LogicalResult
MmaTilingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      ArrayRef<int64_t> warps, ArrayRef<int64_t> warpTile,
                      ArrayRef<int64_t> instr) {
  if (warps.size() != 2 || warpTile.size() != 2 || instr.size() != 3)
    return emitError() << "mma tiling needs 2 warps, 2 warp_tile and 3 instr "
                          "sizes";
  auto positive = [](int64_t v) { return v > 0; };
  if (!llvm::all_of(warpTile, positive) || !llvm::all_of(instr, positive))
    return emitError() << "mma tiling sizes must be positive";
  if (!llvm::all_of(warps,
                    [](int64_t w) { return w > 0 && llvm::isPowerOf2_64(w); }))
    return emitError() << "mma tiling warps must be powers of two";
  return success();
}

OpFoldResult ConvertLayoutOp::fold(FoldAdaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  // convert(convert(x)) == convert(x): only the final layout matters.
  if (auto inner = getSrc().getDefiningOp<ConvertLayoutOp>()) {
    if (inner.getSrc().getType() == getType())
      return inner.getSrc();
    getSrcMutable().assign(inner.getSrc());
    return getResult();
  }
  return {};
}
