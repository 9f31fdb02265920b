//===- TileOps.cpp - tile dialect verifiers and folders -------------------===//
#include "dialects/tile/TileDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::tile;

//===----------------------------------------------------------------------===//
// Shared rules
//===----------------------------------------------------------------------===//

LogicalResult
mlir::tile::verifyTileShape(function_ref<InFlightDiagnostic()> emitError,
                            ShapedType type, StringRef what) {
  int64_t total = 1;
  for (int64_t d : type.getShape()) {
    if (d <= 0 || !llvm::isPowerOf2_64(d))
      return emitError() << what << " has shape " << type
                         << ": every tile dimension must be a power of two";
    total *= d;
  }
  if (total > kMaxTileElements)
    return emitError() << what << " has " << total
                       << " elements; a tile holds at most 2^20";
  return success();
}

static LogicalResult verifyTile(Operation *op, Type type, StringRef what) {
  return verifyTileShape([&] { return op->emitOpError(); },
                         cast<ShapedType>(type), what);
}

/// Checks that `perm` is a permutation of [0, rank).
static LogicalResult verifyPermutation(Operation *op, ArrayRef<int64_t> perm,
                                       int64_t rank, StringRef what) {
  if (static_cast<int64_t>(perm.size()) != rank)
    return op->emitOpError() << what << " has " << perm.size()
                             << " entries but the tile has rank " << rank;
  SmallVector<bool> seen(rank, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= rank || seen[p])
      return op->emitOpError() << what << " must be a permutation of [0, "
                               << rank << ")";
    seen[p] = true;
  }
  return success();
}

/// Checks element-indexed accesses: one index tile per array dimension, all
/// of one shape, which is also the shape of each of `others` (when present).
static LogicalResult verifyElementIndexed(Operation *op, ArrayType array,
                                          ValueRange indices,
                                          ArrayRef<Value> others) {
  if (indices.size() != array.getRank())
    return op->emitOpError() << "needs one index tile per array dimension: "
                             << array.getRank() << " expected, "
                             << indices.size() << " given";
  ArrayRef<int64_t> shape = cast<ShapedType>(indices[0].getType()).getShape();
  for (Value idx : indices)
    if (cast<ShapedType>(idx.getType()).getShape() != shape)
      return op->emitOpError()
             << "index tiles must have one shape; broadcast them first";
  for (Value other : others)
    if (other && cast<ShapedType>(other.getType()).getShape() != shape)
      return op->emitOpError() << "operand of type " << other.getType()
                               << " must have the index tiles' shape";
  return success();
}

static LogicalResult verifyElementType(Operation *op, ArrayType array,
                                       Type type, StringRef what) {
  Type elem = getElementTypeOrSelf(type);
  if (elem != array.getElementType())
    return op->emitOpError() << what << " element type " << elem
                             << " differs from the array's "
                             << array.getElementType() << "; cast it first";
  return success();
}

static bool isAtomic(Operation *op) {
  return isa<AtomicRMWOp, AtomicCASOp>(op);
}

MemoryOrder mlir::tile::getMemoryOrder(Operation *op) {
  if (auto a = op->getAttrOfType<MemoryOrderAttr>("memory_order"))
    return a.getValue();
  return isAtomic(op) ? MemoryOrder::acq_rel : MemoryOrder::weak;
}

MemoryScope mlir::tile::getMemoryScope(Operation *op) {
  if (auto a = op->getAttrOfType<MemoryScopeAttr>("memory_scope"))
    return a.getValue();
  return isAtomic(op) ? MemoryScope::device : MemoryScope::none;
}

/// cuTile's rules: loads may be weak, relaxed or acquire, stores weak,
/// relaxed or release, atomics anything but weak; a scope exactly when the
/// ordering is not weak.
static LogicalResult verifyMemoryModel(Operation *op, bool reads, bool writes) {
  MemoryOrder order = getMemoryOrder(op);
  MemoryScope scope = getMemoryScope(op);
  bool ok =
      reads && writes ? order != MemoryOrder::weak
      : reads ? order != MemoryOrder::release && order != MemoryOrder::acq_rel
              : order != MemoryOrder::acquire && order != MemoryOrder::acq_rel;
  if (!ok)
    return op->emitOpError() << "memory order " << stringifyMemoryOrder(order)
                             << " is not valid for this access";
  if ((order == MemoryOrder::weak) != (scope == MemoryScope::none))
    return op->emitOpError()
           << "memory scope " << stringifyMemoryScope(scope)
           << (order == MemoryOrder::weak
                   ? " needs a non-weak memory order"
                   : " must name block, device or sys for a non-weak order");
  return success();
}

//===----------------------------------------------------------------------===//
// Block and array queries
//===----------------------------------------------------------------------===//

static LogicalResult verifyAxis(Operation *op, int32_t axis) {
  if (axis < 0 || axis > 2)
    return op->emitOpError() << "grid axis must be 0, 1 or 2, got " << axis;
  return success();
}
LogicalResult BidOp::verify() { return verifyAxis(*this, getAxis()); }
LogicalResult NumBlocksOp::verify() { return verifyAxis(*this, getAxis()); }

static LogicalResult verifyArrayDim(Operation *op, ArrayType array,
                                    int32_t dim) {
  if (dim < 0 || dim >= static_cast<int32_t>(array.getRank()))
    return op->emitOpError() << "dimension " << dim
                             << " is out of range for an array of rank "
                             << array.getRank();
  return success();
}
LogicalResult DimOp::verify() {
  return verifyArrayDim(*this, getArray().getType(), getDim());
}
LogicalResult StrideOp::verify() {
  return verifyArrayDim(*this, getArray().getType(), getDim());
}

static OpFoldResult foldStatic(MLIRContext *ctx, int64_t value) {
  if (ShapedType::isDynamic(value))
    return {};
  return IntegerAttr::get(IntegerType::get(ctx, 32), value);
}
OpFoldResult DimOp::fold(FoldAdaptor) {
  return foldStatic(getContext(), getArray().getType().getShape()[getDim()]);
}
OpFoldResult StrideOp::fold(FoldAdaptor) {
  return foldStatic(getContext(), getArray().getType().getStrides()[getDim()]);
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

SmallVector<int64_t> LoadOp::getBlockShape() {
  ArrayRef<int64_t> shape = getType().getShape();
  if (!getOrder())
    return llvm::to_vector(shape);
  SmallVector<int64_t> block(shape.size());
  for (auto [i, p] : llvm::enumerate(*getOrder()))
    block[p] = shape[i];
  return block;
}

LogicalResult LoadOp::verify() {
  ArrayType array = getArray().getType();
  auto type = cast<RankedTensorType>(getType());
  if (getIndices().size() != array.getRank())
    return emitOpError() << "needs one block index per array dimension: "
                         << array.getRank() << " expected, "
                         << getIndices().size() << " given";
  if (type.getRank() != static_cast<int64_t>(array.getRank()))
    return emitOpError() << "loads a rank-" << type.getRank()
                         << " tile from a rank-" << array.getRank()
                         << " array";
  if (failed(verifyElementType(*this, array, type, "result")) ||
      failed(verifyTile(*this, type, "loaded tile")))
    return failure();
  if (getOrder() &&
      failed(verifyPermutation(*this, *getOrder(), type.getRank(), "order")))
    return failure();
  if (auto padding = getPaddingAttr())
    if (padding.getType() != array.getElementType())
      return emitOpError() << "padding of type " << padding.getType()
                           << " must have the array's element type "
                           << array.getElementType();
  return verifyMemoryModel(*this, /*reads=*/true, /*writes=*/false);
}

LogicalResult StoreOp::verify() {
  ArrayType array = getArray().getType();
  auto type = cast<RankedTensorType>(getValue().getType());
  if (getIndices().size() != array.getRank())
    return emitOpError() << "needs one block index per array dimension: "
                         << array.getRank() << " expected, "
                         << getIndices().size() << " given";
  if (type.getRank() != static_cast<int64_t>(array.getRank()))
    return emitOpError() << "stores a rank-" << type.getRank()
                         << " tile into a rank-" << array.getRank()
                         << " array";
  if (failed(verifyElementType(*this, array, type, "stored")) ||
      failed(verifyMemoryModel(*this, /*reads=*/false, /*writes=*/true)))
    return failure();
  return verifyTile(*this, type, "stored tile");
}

LogicalResult GatherOp::verify() {
  ArrayType array = getArray().getType();
  if (failed(verifyElementIndexed(*this, array, getIndices(),
                                  {getResult(), getMask(), getOther()})) ||
      failed(verifyElementType(*this, array, getType(), "result")))
    return failure();
  if (getOther() && getOther().getType() != getType())
    return emitOpError() << "'other' must have the result type " << getType();
  return verifyMemoryModel(*this, /*reads=*/true, /*writes=*/false);
}

LogicalResult ScatterOp::verify() {
  ArrayType array = getArray().getType();
  if (failed(verifyElementIndexed(*this, array, getIndices(),
                                  {getValue(), getMask()})) ||
      failed(verifyMemoryModel(*this, /*reads=*/false, /*writes=*/true)))
    return failure();
  return verifyElementType(*this, array, getValue().getType(), "stored");
}

LogicalResult AtomicRMWOp::verify() {
  ArrayType array = getArray().getType();
  if (failed(verifyElementIndexed(*this, array, getIndices(),
                                  {getValue(), getMask()})) ||
      failed(verifyElementType(*this, array, getValue().getType(), "value")))
    return failure();
  if (getType() != getValue().getType())
    return emitOpError() << "returns the old values, so its type must be the "
                            "value's type "
                         << getValue().getType();
  Type elem = array.getElementType();
  bool bitwise = getKind() == AtomicKind::and_ ||
                 getKind() == AtomicKind::or_ || getKind() == AtomicKind::xor_;
  if (bitwise && !isa<IntegerType>(elem))
    return emitOpError() << "bitwise atomics need an integer array, got "
                         << elem;
  bool unsignedMinMax =
      getKind() == AtomicKind::umax || getKind() == AtomicKind::umin;
  if (unsignedMinMax && !isa<IntegerType>(elem))
    return emitOpError() << "umax/umin need an integer array, got " << elem;
  unsigned width = elem.getIntOrFloatBitWidth();
  if (width != 16 && width != 32 && width != 64)
    return emitOpError() << "atomics need 16, 32 or 64-bit elements, got "
                         << elem;
  return verifyMemoryModel(*this, /*reads=*/true, /*writes=*/true);
}

LogicalResult AtomicCASOp::verify() {
  ArrayType array = getArray().getType();
  if (failed(verifyElementIndexed(*this, array, getIndices(),
                                  {getCmp(), getValue()})) ||
      failed(verifyElementType(*this, array, getValue().getType(), "value")))
    return failure();
  if (getCmp().getType() != getValue().getType() ||
      getType() != getValue().getType())
    return emitOpError() << "'cmp', 'value' and the result must have one type";
  unsigned width = array.getElementType().getIntOrFloatBitWidth();
  if (width != 16 && width != 32 && width != 64)
    return emitOpError() << "atomics need 16, 32 or 64-bit elements, got "
                         << array.getElementType();
  return verifyMemoryModel(*this, /*reads=*/true, /*writes=*/true);
}

/// A view's type: the array's element type, a rank, and an alignment the
/// array's implies.
static LogicalResult verifyView(Operation *op, ArrayType array,
                                ArrayType view) {
  if (view.getElementType() != array.getElementType())
    return op->emitOpError()
           << "view element type " << view.getElementType()
           << " differs from the array's " << array.getElementType();
  if (array.getAlignment() % view.getAlignment())
    return op->emitOpError()
           << "view alignment " << view.getAlignment()
           << " is not implied by the array's " << array.getAlignment();
  return success();
}

LogicalResult ArraySliceOp::verify() {
  ArrayType array = getArray().getType(), view = getResult().getType();
  if (failed(verifyView(*this, array, view)))
    return failure();
  int64_t axis = static_cast<int32_t>(getAxis());
  if (axis < 0 || axis >= static_cast<int64_t>(array.getRank()))
    return emitOpError() << "axis " << axis
                         << " is out of range for an array of rank "
                         << array.getRank();
  if (view.getRank() != array.getRank() ||
      view.getStrides() != array.getStrides())
    return emitOpError() << "a slice keeps the array's rank and strides";
  for (unsigned d = 0; d < array.getRank(); ++d) {
    int64_t want = static_cast<int64_t>(d) == axis ? ShapedType::kDynamic
                                                   : array.getShape()[d];
    if (view.getShape()[d] != want)
      return emitOpError() << "slice extent " << d
                           << " must be the array's, and dynamic on the axis";
  }
  if (view.getDivisibility() != 1)
    return emitOpError() << "a slice's extents have no known divisibility";
  return success();
}

LogicalResult RawViewOp::verify() {
  ArrayType array = getArray().getType(), view = getResult().getType();
  if (failed(verifyView(*this, array, view)))
    return failure();
  if (view.getRank() != 1 || !ShapedType::isDynamic(view.getShape()[0]) ||
      view.getStrides()[0] != 1 || view.getDivisibility() != 1)
    return emitOpError() << "a raw view is !tile.array<?xT, strides = [1]>";
  return success();
}

// `tile.array_select`'s operands all have the result's type, printed once.
static ParseResult
parseSameArrayTypes(OpAsmParser &,
                    ArrayRef<OpAsmParser::UnresolvedOperand> arrays,
                    SmallVectorImpl<Type> &types, Type result) {
  types.assign(arrays.size(), result);
  return success();
}
static void printSameArrayTypes(OpAsmPrinter &, Operation *, OperandRange,
                                TypeRange, Type) {}

LogicalResult ArraySelectOp::verify() {
  if (getArrays().empty())
    return emitOpError() << "selects from a list of at least one array";
  for (auto [i, array] : llvm::enumerate(getArrays()))
    if (array.getType() != getType())
      return emitOpError() << "array #" << i << " has type " << array.getType()
                           << ", not the result's " << getType();
  return success();
}

OpFoldResult ArraySelectOp::fold(FoldAdaptor adaptor) {
  OperandRange arrays = getArrays();
  if (llvm::all_equal(arrays))
    return arrays.front();
  auto index = dyn_cast_if_present<IntegerAttr>(adaptor.getIndex());
  if (!index)
    return {};
  int64_t last = static_cast<int64_t>(arrays.size()) - 1;
  return arrays[std::clamp<int64_t>(index.getValue().getSExtValue(), 0, last)];
}

//===----------------------------------------------------------------------===//
// mma
//===----------------------------------------------------------------------===//

static bool isSupportedMma(Type in, Type acc) {
  if (in.isF16())
    return acc.isF32() || acc.isF16();
  if (in.isBF16())
    return acc.isF32();
  if (in.isF32() || in.isF64())
    return acc == in;
  if (in.isInteger(8))
    return acc.isInteger(32);
  if (isa<Float8E4M3FNType, Float8E5M2Type>(in))
    return acc.isF32();
  return false;
}

LogicalResult MmaOp::verify() {
  auto a = cast<RankedTensorType>(getA().getType());
  auto b = cast<RankedTensorType>(getB().getType());
  auto c = cast<RankedTensorType>(getAcc().getType());
  int64_t rank = a.getRank();
  if (rank != 2 && rank != 3)
    return emitOpError() << "operands must be 2-d or 3-d (batched), got rank "
                         << rank;
  if (b.getRank() != rank || c.getRank() != rank)
    return emitOpError() << "a, b and acc must have one rank";
  if (a.getElementType() != b.getElementType())
    return emitOpError() << "a and b must have one element type, got "
                         << a.getElementType() << " and "
                         << b.getElementType();
  if (!isSupportedMma(a.getElementType(), c.getElementType()))
    return emitOpError() << "unsupported mma: " << a.getElementType()
                         << " inputs with a " << c.getElementType()
                         << " accumulator (supported: f16/bf16 -> f32, "
                            "f16 -> f16, f32 -> f32, f64 -> f64, i8 -> i32)";
  auto as = a.getShape(), bs = b.getShape(), cs = c.getShape();
  int64_t o = rank - 2;
  if (rank == 3 && (as[0] != bs[0] || as[0] != cs[0]))
    return emitOpError() << "batch dimensions differ: " << as[0] << ", "
                         << bs[0] << ", " << cs[0];
  if (as[o + 1] != bs[o])
    return emitOpError() << "contraction dimensions differ: a is " << a
                         << " and b is " << b;
  if (cs[o] != as[o] || cs[o + 1] != bs[o + 1])
    return emitOpError() << "accumulator " << c << " must be "
                         << as[o] << "x" << bs[o + 1];
  if (MmaTilingAttr tiling = getTilingAttr())
    return verifyTiling(tiling);
  return success();
}

SmallVector<int64_t> MmaOp::getTensorCoreShape() {
  auto a = cast<RankedTensorType>(getA().getType());
  auto c = cast<RankedTensorType>(getAcc().getType());
  if (a.getRank() != 2)
    return {};
  int64_t m = a.getDimSize(0), k = a.getDimSize(1), n = c.getDimSize(1);
  Type in = a.getElementType(), acc = c.getElementType();
  int64_t kStep = 0;
  if ((in.isF16() && (acc.isF32() || acc.isF16())) ||
      (in.isBF16() && acc.isF32()))
    kStep = 16;
  else if (in.isF32() && acc.isF32() && getAllowTf32())
    kStep = 8;
  else if (in.isInteger(8) && acc.isInteger(32))
    kStep = 32;
  else if (isa<Float8E4M3FNType, Float8E5M2Type>(in) && acc.isF32())
    kStep = 32;
  if (!kStep || m % 16 || n % 8 || k % kStep)
    return {};
  return {16, 8, kStep};
}

LogicalResult MmaOp::verifyTiling(MmaTilingAttr tiling) {
  SmallVector<int64_t> instr = getTensorCoreShape();
  if (instr.empty())
    return emitOpError() << "has a tiling but no tensor-core instruction for "
                         << getA().getType() << " x " << getB().getType()
                         << " -> " << getAcc().getType();
  auto shape = cast<RankedTensorType>(getAcc().getType()).getShape();
  if (tiling.isWarpgroup())
    return verifyWarpgroupTiling(tiling);
  if (tiling.getInstr() != ArrayRef<int64_t>(instr))
    return emitOpError() << "tiling instruction shape [" << tiling.getInstr()
                         << "] is not the mma.sync shape [" << instr
                         << "] of its element types";
  for (int d = 0; d < 2; ++d) {
    int64_t warps = tiling.getWarps()[d], tile = tiling.getWarpTile()[d];
    if (shape[d] % tile || tile % instr[d])
      return emitOpError() << "warp tile [" << tiling.getWarpTile()
                           << "] must divide the block tile [" << shape
                           << "] and be a multiple of the instruction shape";
    if (tile != std::max(instr[d], shape[d] / warps))
      return emitOpError() << "warp tile [" << tiling.getWarpTile()
                           << "] is not what " << warps << " warps along dim "
                           << d << " of [" << shape << "] compute";
  }
  return success();
}

LogicalResult MmaOp::verifyWarpgroupTiling(MmaTilingAttr tiling) {
  // wgmma.m64nNk16: warps along M only, four per warpgroup, each warpgroup
  // computing 64-row blocks of all N columns, operands in 128-byte
  // swizzled shared-memory panels (64 f16 of K or N per row).
  auto a = cast<RankedTensorType>(getA().getType());
  auto c = cast<RankedTensorType>(getAcc().getType());
  Type in = a.getElementType();
  int64_t m = c.getDimSize(0), n = c.getDimSize(1), k = a.getDimSize(1);
  ArrayRef<int64_t> warps = tiling.getWarps(), warpTile = tiling.getWarpTile(),
                    instr = tiling.getInstr();
  bool fp8 = isa<Float8E4M3FNType, Float8E5M2Type>(in);
  bool tf32 = in.isF32() && getAllowTf32();
  bool int8 = in.isInteger(8) && c.getElementType().isInteger(32);
  if (!(((in.isF16() || in.isBF16() || fp8 || tf32) &&
         c.getElementType().isF32()) ||
        int8))
    return emitOpError() << "warpgroup tiling needs f16/bf16/fp8/tf32 inputs "
                            "and an f32 accumulator, or int8 inputs and an "
                            "i32 one";
  if (warps[1] != 1 || warps[0] % 4 || m % (16 * warps[0]))
    return emitOpError() << "warpgroup tiling needs warps [4w, 1] whose "
                            "16-row tiles divide M, got warps ["
                         << warps << "] for M = " << m;
  // 32 bytes of K per instruction; K in whole 128-byte panels or one
  // 64-byte one.
  int64_t elemBytes = in.getIntOrFloatBitWidth() / 8;
  int64_t kStep = 32 / elemBytes, kBytes = k * elemBytes;
  if (instr[1] != n || n % 64 || n > 256 || (kBytes % 128 && kBytes != 64) ||
      instr[2] != kStep)
    return emitOpError() << "warpgroup instruction [" << instr
                         << "] must be [64, N, " << kStep
                         << "] with N a multiple of 64 up to 256 and K "
                         << 64 / elemBytes << " or a multiple of "
                         << 128 / elemBytes << " (N = " << n << ", K = " << k
                         << ")";
  if (warpTile[0] != m / warps[0] || warpTile[1] != n)
    return emitOpError() << "warp tile [" << warpTile << "] is not what "
                         << warps[0] << " warps along M of [" << m << ", " << n
                         << "] compute";
  return success();
}

//===----------------------------------------------------------------------===//
// reduce and scan
//===----------------------------------------------------------------------===//

SmallVector<Value>
mlir::tile::cloneCombiner(OpBuilder &b, Region &combiner, ValueRange acc,
                          ValueRange next,
                          function_ref<void(Operation *)> onClone) {
  Block &block = combiner.front();
  IRMapping mapping;
  mapping.map(block.getArguments().take_front(acc.size()), acc);
  mapping.map(block.getArguments().drop_front(acc.size()), next);
  for (Operation &op : block.without_terminator()) {
    Operation *clone = b.clone(op, mapping);
    if (onClone)
      onClone(clone);
  }
  SmallVector<Value> results;
  for (Value v : block.getTerminator()->getOperands())
    results.push_back(mapping.lookupOrDefault(v));
  return results;
}

static LogicalResult verifyAxisOf(Operation *op, ValueRange srcs,
                                  int32_t axis) {
  if (srcs.empty())
    return op->emitOpError() << "needs at least one tile";
  auto shape = cast<ShapedType>(srcs[0].getType()).getShape();
  for (Value src : srcs)
    if (cast<ShapedType>(src.getType()).getShape() != shape)
      return op->emitOpError() << "tiles must have one shape";
  if (axis < 0 || axis >= static_cast<int32_t>(shape.size()))
    return op->emitOpError() << "axis " << axis
                             << " is out of range for a tile of rank "
                             << shape.size();
  return success();
}

/// The combiner takes (accumulated..., new...) scalars and yields scalars of
/// the sources' element types.
static LogicalResult verifyCombiner(Operation *op, Region &region,
                                    ValueRange srcs) {
  Block &block = region.front();
  size_t n = srcs.size();
  if (block.getNumArguments() != 2 * n)
    return op->emitOpError() << "combiner must take " << 2 * n
                             << " scalars, takes " << block.getNumArguments();
  for (size_t i = 0; i < 2 * n; ++i)
    if (block.getArgument(i).getType() !=
        getElementTypeOrSelf(srcs[i % n].getType()))
      return op->emitOpError() << "combiner argument " << i << " must be "
                               << getElementTypeOrSelf(srcs[i % n].getType());
  auto yield = cast<YieldOp>(block.getTerminator());
  if (yield.getValues().size() != n)
    return op->emitOpError() << "combiner must yield " << n << " values";
  for (size_t i = 0; i < n; ++i)
    if (yield.getValues()[i].getType() !=
        getElementTypeOrSelf(srcs[i].getType()))
      return op->emitOpError() << "combiner result " << i << " must be "
                               << getElementTypeOrSelf(srcs[i].getType());
  return success();
}

static void buildCombinerBlock(OpBuilder &builder, OperationState &state,
                               ValueRange srcs) {
  Region *region = state.addRegion();
  SmallVector<Type> argTypes;
  for (int rep = 0; rep < 2; ++rep)
    for (Value src : srcs)
      argTypes.push_back(getElementTypeOrSelf(src.getType()));
  SmallVector<Location> locs(argTypes.size(), state.location);
  OpBuilder::InsertionGuard guard(builder);
  builder.createBlock(region, {}, argTypes, locs);
}

void ReduceOp::build(OpBuilder &builder, OperationState &state,
                     ValueRange srcs, int axis) {
  state.addOperands(srcs);
  state.addAttribute(getAxisAttrName(state.name),
                     builder.getI32IntegerAttr(axis));
  for (Value src : srcs) {
    auto type = cast<RankedTensorType>(src.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape.erase(shape.begin() + axis);
    state.addTypes(RankedTensorType::get(shape, type.getElementType()));
  }
  buildCombinerBlock(builder, state, srcs);
}

LogicalResult ReduceOp::verify() {
  if (failed(verifyAxisOf(*this, getSrcs(), getAxis())))
    return failure();
  if (getResults().size() != getSrcs().size())
    return emitOpError() << "needs one result per tile";
  for (auto [src, res] : llvm::zip(getSrcs(), getResults())) {
    auto type = cast<RankedTensorType>(src.getType());
    SmallVector<int64_t> shape(type.getShape());
    shape.erase(shape.begin() + getAxis());
    auto expected = RankedTensorType::get(shape, type.getElementType());
    // Layout encodings (after tile-map-threads) are the result's own.
    auto resType = cast<RankedTensorType>(res.getType());
    if (resType.getShape() != expected.getShape() ||
        resType.getElementType() != expected.getElementType())
      return emitOpError() << "result " << res.getType() << " should be "
                           << expected << " (the source without axis "
                           << getAxis() << ")";
  }
  return success();
}
LogicalResult ReduceOp::verifyRegions() {
  return verifyCombiner(*this, getCombiner(), getSrcs());
}

void ScanOp::build(OpBuilder &builder, OperationState &state, ValueRange srcs,
                   int axis, bool reverse) {
  state.addOperands(srcs);
  state.addAttribute(getAxisAttrName(state.name),
                     builder.getI32IntegerAttr(axis));
  if (reverse)
    state.addAttribute(getReverseAttrName(state.name), builder.getUnitAttr());
  for (Value src : srcs)
    state.addTypes(src.getType());
  buildCombinerBlock(builder, state, srcs);
}

LogicalResult ScanOp::verify() {
  if (failed(verifyAxisOf(*this, getSrcs(), getAxis())))
    return failure();
  if (getResults().size() != getSrcs().size())
    return emitOpError() << "needs one result per tile";
  for (auto [src, res] : llvm::zip(getSrcs(), getResults()))
    if (src.getType() != res.getType())
      return emitOpError() << "results must have the sources' types";
  return success();
}
LogicalResult ScanOp::verifyRegions() {
  return verifyCombiner(*this, getCombiner(), getSrcs());
}

//===----------------------------------------------------------------------===//
// Shape ops
//===----------------------------------------------------------------------===//

LogicalResult BroadcastOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  auto dst = cast<RankedTensorType>(getType());
  if (src.getRank() != dst.getRank())
    return emitOpError() << "cannot broadcast " << src << " to " << dst
                         << ": ranks differ (use expand_dims first)";
  for (auto [s, d] : llvm::zip(src.getShape(), dst.getShape()))
    if (s != d && s != 1)
      return emitOpError() << "cannot broadcast " << src << " to " << dst
                           << ": only size-1 dimensions broadcast";
  return verifyTile(*this, dst, "broadcast result");
}

OpFoldResult BroadcastOp::fold(FoldAdaptor adaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getSrc()))
    return SplatElementsAttr::get(cast<ShapedType>(getType()),
                                  splat.getSplatValue<Attribute>());
  return {};
}

namespace {
/// broadcast(broadcast(x)) -> broadcast(x); broadcast(splat(s)) -> splat(s).
struct ComposeBroadcast : OpRewritePattern<BroadcastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(BroadcastOp op,
                                PatternRewriter &rewriter) const override {
    if (auto inner = op.getSrc().getDefiningOp<BroadcastOp>()) {
      rewriter.replaceOpWithNewOp<BroadcastOp>(op, op.getType(),
                                               inner.getSrc());
      return success();
    }
    if (auto splat = op.getSrc().getDefiningOp<SplatOp>()) {
      rewriter.replaceOpWithNewOp<SplatOp>(op, op.getType(), splat.getSrc());
      return success();
    }
    return rewriter.notifyMatchFailure(op, "source is not a broadcast/splat");
  }
};
} // namespace

void BroadcastOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                              MLIRContext *context) {
  results.add<ComposeBroadcast>(context);
}

LogicalResult ExpandDimsOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  int64_t axis = getAxis();
  if (axis < 0 || axis > src.getRank())
    return emitOpError() << "axis " << axis << " must be in [0, "
                         << src.getRank() << "]";
  SmallVector<int64_t> shape(src.getShape());
  shape.insert(shape.begin() + axis, 1);
  if (cast<RankedTensorType>(getType()).getShape() != ArrayRef(shape))
    return emitOpError() << "result " << getType()
                         << " must be the source with a 1 inserted at axis "
                         << axis;
  return success();
}

OpFoldResult ExpandDimsOp::fold(FoldAdaptor adaptor) {
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getSrc()))
    return SplatElementsAttr::get(cast<ShapedType>(getType()),
                                  splat.getSplatValue<Attribute>());
  return {};
}

LogicalResult ReshapeOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  auto dst = cast<RankedTensorType>(getType());
  if (src.getNumElements() != dst.getNumElements())
    return emitOpError() << "cannot reshape " << src << " (" 
                         << src.getNumElements() << " elements) to " << dst
                         << " (" << dst.getNumElements() << " elements)";
  return verifyTile(*this, dst, "reshape result");
}

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getSrc().getType() == getType())
    return getSrc();
  if (auto inner = getSrc().getDefiningOp<ReshapeOp>()) {
    getSrcMutable().assign(inner.getSrc());
    return getResult();
  }
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getSrc()))
    return SplatElementsAttr::get(cast<ShapedType>(getType()),
                                  splat.getSplatValue<Attribute>());
  return {};
}

LogicalResult PermuteOp::verify() {
  auto src = cast<RankedTensorType>(getSrc().getType());
  ArrayRef<int64_t> perm = getPerm();
  if (failed(verifyPermutation(*this, perm, src.getRank(), "perm")))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(src.getShape()[p]);
  if (cast<RankedTensorType>(getType()).getShape() != ArrayRef(shape))
    return emitOpError() << "result " << getType()
                         << " must have the source's shape permuted";
  return success();
}

OpFoldResult PermuteOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPerm();
  bool identity = llvm::all_of(llvm::enumerate(perm), [](auto it) {
    return static_cast<int64_t>(it.index()) == it.value();
  });
  if (identity)
    return getSrc();
  if (auto splat = dyn_cast_or_null<SplatElementsAttr>(adaptor.getSrc()))
    return SplatElementsAttr::get(cast<ShapedType>(getType()),
                                  splat.getSplatValue<Attribute>());
  // permute(permute(x, p), q) == permute(x, p[q[i]]).
  if (auto inner = getSrc().getDefiningOp<PermuteOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t q : perm)
      composed.push_back(inner.getPerm()[q]);
    getSrcMutable().assign(inner.getSrc());
    setPerm(composed);
    return getResult();
  }
  return {};
}

LogicalResult IotaOp::verify() {
  auto type = cast<RankedTensorType>(getType());
  if (type.getRank() != 1)
    return emitOpError() << "iota makes a 1-d tile, not " << type;
  return verifyTile(*this, type, "iota");
}

LogicalResult SplatOp::verify() {
  return verifyTile(*this, getType(), "splat");
}

OpFoldResult SplatOp::fold(FoldAdaptor adaptor) {
  Attribute value = adaptor.getSrc();
  if (!value || !isa<IntegerAttr, FloatAttr>(value))
    return {};
  return SplatElementsAttr::get(cast<ShapedType>(getType()), value);
}

#define GET_OP_CLASSES
#include "dialects/tile/TileOps.cpp.inc"
