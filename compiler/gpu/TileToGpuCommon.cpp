//===- TileToGpuCommon.cpp - shared pieces of convert-tile-to-gpu ---------===//
#include "compiler/gpu/TileToGpuCommon.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;
using namespace mlir::tile;

TileGpuTypeConverter::TileGpuTypeConverter(MLIRContext *ctx) {
  addConversion([](Type type) { return type; });
  addConversion([](RankedTensorType type) -> std::optional<Type> {
    FailureOr<LinearLayout> layout = toLinearLayout(type);
    if (failed(layout))
      return std::nullopt;
    return VectorType::get({layout->getNumRegs()}, type.getElementType());
  });
  // Shared buffers and mbarriers are their address in the shared window; a
  // tensor map the generic address of its __grid_constant__ parameter. A
  // token orders nothing once lowered: a constant the canonicalizer drops.
  addConversion([ctx](tilegpu::SharedBufferType) -> Type {
    return LLVM::LLVMPointerType::get(ctx, 3);
  });
  addConversion([ctx](tilegpu::MBarriersType) -> Type {
    return LLVM::LLVMPointerType::get(ctx, 3);
  });
  addConversion([ctx](tilegpu::TensorMapType) -> Type {
    return LLVM::LLVMPointerType::get(ctx);
  });
  addConversion(
      [ctx](tilegpu::TokenType) -> Type { return IntegerType::get(ctx, 32); });
}

FailureOr<ArrayParts> mlir::tile::getArrayParts(Value array) {
  auto def = array.getDefiningOp<UnrealizedConversionCastOp>();
  if (!def || !isa<ArrayType>(array.getType()))
    return failure();
  unsigned rank = cast<ArrayType>(array.getType()).getRank();
  if (def.getNumOperands() != 1 + 2 * rank)
    return failure();
  ArrayParts parts;
  parts.ptr = def.getOperand(0);
  for (unsigned d = 0; d < rank; ++d) {
    parts.extents.push_back(def.getOperand(1 + d));
    parts.strides.push_back(def.getOperand(1 + rank + d));
  }
  return parts;
}

Value mlir::tile::constI32(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI32IntegerAttr(v));
}
Value mlir::tile::constI64(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(v));
}
Value mlir::tile::threadIdX(OpBuilder &b, Location loc) {
  return NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
}
Value mlir::tile::threadIdXInPlace(OpBuilder &b, Location loc) {
  return LLVM::InlineAsmOp::create(
             b, loc, b.getI32Type(), ValueRange{}, "mov.u32 $0, %tid.x;", "=r",
             /*has_side_effects=*/true, /*is_align_stack=*/false,
             LLVM::tailcallkind::TailCallKind::None,
             LLVM::AsmDialectAttr::get(b.getContext(),
                                       LLVM::AsmDialect::AD_ATT),
             ArrayAttr())
      .getResult(0);
}
Value mlir::tile::laneId(OpBuilder &b, Location loc) {
  return arith::AndIOp::create(b, loc, threadIdX(b, loc), constI32(b, loc, 31));
}
Value mlir::tile::warpId(OpBuilder &b, Location loc) {
  return arith::ShRUIOp::create(b, loc, threadIdX(b, loc), constI32(b, loc, 5));
}

/// Sum over the bits of `id` of the bases' `d` components.
static Value bitsToCoord(OpBuilder &b, Location loc, Value id,
                         ArrayRef<LinearLayout::Basis> bases, unsigned d) {
  Value sum;
  for (auto [bit, basis] : llvm::enumerate(bases)) {
    if (basis[d] == 0)
      continue;
    // ((id >> bit) & 1) << log2(basis): lowered to and/shift by LLVM.
    Value one = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, id, constI32(b, loc, bit)),
        constI32(b, loc, 1));
    Value term = arith::ShLIOp::create(
        b, loc, one, constI32(b, loc, llvm::Log2_64(basis[d])));
    sum = sum ? arith::OrIOp::create(b, loc, sum, term).getResult() : term;
  }
  return sum ? sum : constI32(b, loc, 0);
}

SmallVector<Value> mlir::tile::threadCoords(OpBuilder &b, Location loc,
                                            const LinearLayout &layout,
                                            bool inPlace) {
  Value lane = laneId(b, loc), warp = warpId(b, loc);
  if (inPlace) {
    Value tid = threadIdXInPlace(b, loc);
    lane = arith::AndIOp::create(b, loc, tid, constI32(b, loc, 31));
    warp = arith::ShRUIOp::create(b, loc, tid, constI32(b, loc, 5));
  }
  SmallVector<Value> coords;
  for (unsigned d = 0; d < layout.getRank(); ++d)
    coords.push_back(
        arith::OrIOp::create(b, loc, bitsToCoord(b, loc, lane, layout.lanes, d),
                             bitsToCoord(b, loc, warp, layout.warps, d)));
  return coords;
}

Value mlir::tile::isFirstReplica(OpBuilder &b, Location loc,
                                 const LinearLayout &layout) {
  unsigned laneMask = layout.laneReplicaMask();
  unsigned warpMask = layout.warpReplicaMask();
  Value ok = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
  Value zero = constI32(b, loc, 0);
  if (laneMask) {
    Value bits = arith::AndIOp::create(b, loc, laneId(b, loc),
                                       constI32(b, loc, laneMask));
    ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, bits, zero);
  }
  if (warpMask) {
    Value bits = arith::AndIOp::create(b, loc, warpId(b, loc),
                                       constI32(b, loc, warpMask));
    Value w =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, bits, zero);
    ok = arith::AndIOp::create(b, loc, ok, w);
  }
  return ok;
}

int64_t mlir::tile::getContiguity(const LinearLayout &layout, unsigned dim) {
  int64_t n = 1;
  for (const auto &basis : layout.regs) {
    bool next = basis[dim] == n;
    for (unsigned d = 0; d < layout.getRank(); ++d)
      if (d != dim && basis[d] != 0)
        next = false;
    if (!next)
      break;
    n *= 2;
  }
  return n;
}

SmallVector<Value> mlir::tile::unpackVector(OpBuilder &b, Location loc,
                                            Value vec) {
  auto type = cast<VectorType>(vec.getType());
  SmallVector<Value> elems;
  for (int64_t i = 0; i < type.getNumElements(); ++i)
    elems.push_back(
        vector::ExtractOp::create(b, loc, vec, ArrayRef<int64_t>{i}));
  return elems;
}

Value mlir::tile::packVector(OpBuilder &b, Location loc, Type vecType,
                             ValueRange elems) {
  return vector::FromElementsOp::create(b, loc, cast<VectorType>(vecType),
                                        elems);
}

Value mlir::tile::sharedWindow(OpBuilder &b, Location loc) {
  return LLVM::AddressOfOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext(), 3), kSharedSymbol);
}

int64_t mlir::tile::scratchOffset(OpBuilder &b) {
  Block *block = b.getInsertionBlock();
  if (!block)
    return 0;
  Block::iterator it = b.getInsertionPoint();
  while (true) {
    for (Block::iterator begin = block->begin(); it != begin;)
      if (auto marker = dyn_cast<tilegpu::ScratchBaseOp>(*--it))
        return marker.getOffset();
    Operation *parent = block->getParentOp();
    if (!parent)
      return 0;
    if (isa<gpu::GPUFuncOp, func::FuncOp>(parent)) {
      auto reserved = parent->getAttrOfType<IntegerAttr>(kSharedBytesAttr);
      return reserved ? reserved.getInt() : 0;
    }
    block = parent->getBlock();
    if (!block)
      return 0;
    it = Block::iterator(parent);
  }
}

void mlir::tile::GpuLoweringState::needShared(OpBuilder &b, int64_t bytes) {
  sharedMem = std::max(sharedMem, scratchOffset(b) + bytes);
}

Value mlir::tile::sharedBase(OpBuilder &b, Location loc) {
  Value window = sharedWindow(b, loc);
  int64_t offset = scratchOffset(b);
  if (!offset)
    return window;
  return LLVM::GEPOp::create(
      b, loc, window.getType(), b.getI8Type(), window,
      ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(offset)});
}

void mlir::tile::barrier(OpBuilder &b, Location loc) {
  gpu::BarrierOp::create(b, loc);
}

std::optional<WarpRole> mlir::tile::warpRoleOf(Region *region) {
  for (; region; region = region->getParentRegion()) {
    Operation *parent = region->getParentOp();
    auto roles = parent->getAttrOfType<tilegpu::WarpSpecializedAttr>(
        tilegpu::WarpSpecializedAttr::getAttrName());
    if (roles && isa<scf::IfOp>(parent))
      return WarpRole{roles, region->getRegionNumber() == 0};
  }
  return std::nullopt;
}

bool mlir::tile::isConsumerLoop(Operation *loop, bool nested) {
  if (nested)
    while (isa_and_nonnull<scf::ForOp>(loop->getParentOp()))
      loop = loop->getParentOp();
  auto branch = dyn_cast_or_null<scf::IfOp>(loop->getParentOp());
  return branch &&
         branch->hasAttr(tilegpu::WarpSpecializedAttr::getAttrName()) &&
         loop->getParentRegion() == &branch.getElseRegion();
}

int64_t mlir::tile::blockWarps(Operation *func, int64_t numWarps) {
  func->walk([&](scf::IfOp ifOp) {
    if (auto roles = ifOp->getAttrOfType<tilegpu::WarpSpecializedAttr>(
            tilegpu::WarpSpecializedAttr::getAttrName()))
      numWarps = roles.getConsumers() + roles.getProducers();
  });
  return numWarps;
}

Value mlir::tile::isIssuingThread(OpBuilder &b, Location loc) {
  int64_t first = 0;
  if (Block *block = b.getInsertionBlock())
    if (std::optional<WarpRole> role = warpRoleOf(block->getParent()))
      first = role->firstThread();
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                               threadIdX(b, loc), constI32(b, loc, first));
}

void mlir::tile::narrowRegionBarriers(Operation *root) {
  SmallVector<gpu::BarrierOp> barriers;
  root->walk([&](gpu::BarrierOp op) { barriers.push_back(op); });
  for (gpu::BarrierOp op : barriers) {
    std::optional<WarpRole> role = warpRoleOf(op->getParentRegion());
    if (!role)
      continue;
    OpBuilder b(op);
    Location loc = op.getLoc();
    NVVM::BarrierOp::create(b, loc, TypeRange{},
                            constI32(b, loc, role->producer ? 2 : 1),
                            constI32(b, loc, role->threads()), {}, Value());
    op.erase();
  }
}

SmallVector<int64_t> mlir::tile::rowMajorStrides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int d = static_cast<int>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

int64_t mlir::tile::storageBytes(Type type) {
  return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
}

/// The type an element has in memory (i1 and fp8 are kept as i8).
static Type memType(Type elemType) {
  // fp8 as its bytes: LLVM has no fp8 type.
  if (elemType.isInteger(1) ||
      (isa<FloatType>(elemType) && elemType.getIntOrFloatBitWidth() == 8))
    return IntegerType::get(elemType.getContext(), 8);
  return elemType;
}

/// An element as its shared-memory type (memType) and back.
static Value toMemType(OpBuilder &b, Location loc, Value e, Type mem) {
  if (e.getType() == mem)
    return e;
  if (isa<FloatType>(e.getType()))
    return arith::BitcastOp::create(b, loc, mem, e);
  return arith::ExtUIOp::create(b, loc, mem, e);
}
static Value fromMemType(OpBuilder &b, Location loc, Value e, Type elemType) {
  if (e.getType() == elemType)
    return e;
  if (isa<FloatType>(elemType))
    return arith::BitcastOp::create(b, loc, elemType, e);
  return arith::TruncIOp::create(b, loc, elemType, e);
}

/// Vector width for shared accesses of `layout` with `strides`.
static int64_t sharedVectorWidth(const LinearLayout &layout, Type elemType,
                                 ArrayRef<int64_t> strides) {
  // Along whichever dimension is unit-stride (a transposed staging too).
  unsigned rank = layout.getRank();
  unsigned unit = rank;
  for (unsigned d = 0; d < rank; ++d)
    if (strides[d] == 1)
      unit = d;
  if (unit == rank)
    return 1;
  int64_t v = std::min<int64_t>(getContiguity(layout, unit),
                                16 / storageBytes(elemType));
  for (unsigned d = 0; d < rank; ++d)
    while (d != unit && v > 1 && strides[d] % v)
      v /= 2;
  return std::max<int64_t>(v, 1);
}

static Value threadOffset(OpBuilder &b, Location loc,
                          const LinearLayout &layout,
                          ArrayRef<int64_t> strides) {
  SmallVector<Value> coords = threadCoords(b, loc, layout);
  Value off = constI32(b, loc, 0);
  for (unsigned d = 0; d < layout.getRank(); ++d) {
    if (strides[d] == 0)
      continue;
    off = arith::AddIOp::create(
        b, loc, off,
        arith::MulIOp::create(b, loc, coords[d], constI32(b, loc, strides[d])));
  }
  return off;
}

static Value sharedAddress(OpBuilder &b, Location loc, Value base,
                           Value threadOff, int64_t constOff, Type elemType) {
  Value off =
      arith::AddIOp::create(b, loc, threadOff, constI32(b, loc, constOff));
  return LLVM::GEPOp::create(b, loc, base.getType(), memType(elemType), base,
                             ValueRange{off});
}

void mlir::tile::storeShared(OpBuilder &b, Location loc, Value base,
                             ValueRange elems, Type elemType,
                             const LinearLayout &layout,
                             ArrayRef<int64_t> strides) {
  int64_t v = sharedVectorWidth(layout, elemType, strides);
  Value threadOff = threadOffset(b, loc, layout, strides);
  Type mem = memType(elemType);
  for (int64_t r = 0; r < layout.getNumRegs(); r += v) {
    SmallVector<int64_t, 4> coord = layout.regCoord(r);
    int64_t constOff = 0;
    for (unsigned d = 0; d < layout.getRank(); ++d)
      constOff += coord[d] * strides[d];
    SmallVector<Value> chunk;
    for (int64_t i = 0; i < v; ++i)
      chunk.push_back(toMemType(b, loc, elems[r + i], mem));
    Value value = v == 1 ? chunk[0]
                         : packVector(b, loc, VectorType::get({v}, mem), chunk);
    Value addr = sharedAddress(b, loc, base, threadOff, constOff, elemType);
    LLVM::StoreOp::create(b, loc, value, addr, v * storageBytes(elemType));
  }
}

SmallVector<Value> mlir::tile::loadShared(OpBuilder &b, Location loc,
                                          Value base, Type elemType,
                                          const LinearLayout &layout,
                                          ArrayRef<int64_t> strides) {
  int64_t v = sharedVectorWidth(layout, elemType, strides);
  Value threadOff = threadOffset(b, loc, layout, strides);
  Type mem = memType(elemType);
  SmallVector<Value> elems;
  for (int64_t r = 0; r < layout.getNumRegs(); r += v) {
    SmallVector<int64_t, 4> coord = layout.regCoord(r);
    int64_t constOff = 0;
    for (unsigned d = 0; d < layout.getRank(); ++d)
      constOff += coord[d] * strides[d];
    Value addr = sharedAddress(b, loc, base, threadOff, constOff, elemType);
    Type type = v == 1 ? mem : VectorType::get({v}, mem);
    Value value =
        LLVM::LoadOp::create(b, loc, type, addr, v * storageBytes(elemType));
    SmallVector<Value> chunk =
        v == 1 ? SmallVector<Value>{value} : unpackVector(b, loc, value);
    for (Value e : chunk)
      elems.push_back(fromMemType(b, loc, e, elemType));
  }
  return elems;
}

SmallVector<Value> mlir::tile::convertLayout(OpBuilder &b, Location loc,
                                             ValueRange elems, Type elemType,
                                             const LinearLayout &from,
                                             const LinearLayout &to,
                                             GpuLoweringState &state) {
  if (from == to)
    return SmallVector<Value>(elems);
  if (from.lanes == to.lanes && from.warps == to.warps &&
      from.getNumRegs() == to.getNumRegs()) {
    // Same threads hold the same elements: permute registers.
    DenseMap<SmallVector<int64_t, 4>, int64_t> where;
    for (int64_t r = 0; r < from.getNumRegs(); ++r)
      where[from.regCoord(r)] = r;
    SmallVector<Value> out;
    for (int64_t r = 0; r < to.getNumRegs(); ++r) {
      auto it = where.find(to.regCoord(r));
      if (it == where.end())
        break;
      out.push_back(elems[it->second]);
    }
    if (static_cast<int64_t>(out.size()) == to.getNumRegs())
      return out;
  }
  int64_t numElems = 1;
  for (int64_t s : from.shape)
    numElems *= s;
  state.needShared(b, numElems * storageBytes(elemType));
  SmallVector<int64_t> strides = rowMajorStrides(from.shape);
  Value base = sharedBase(b, loc);
  barrier(b, loc);
  storeShared(b, loc, base, elems, elemType, from, strides);
  barrier(b, loc);
  return loadShared(b, loc, base, elemType, to, strides);
}

Value mlir::tile::shuffleXor(OpBuilder &b, Location loc, Value v,
                             unsigned mask) {
  Type type = v.getType();
  unsigned bits = type.getIntOrFloatBitWidth();
  auto shfl32 = [&](Value x) -> Value {
    return gpu::ShuffleOp::create(b, loc, x, mask, 32, gpu::ShuffleMode::XOR)
        .getShuffleResult();
  };
  if (bits == 32)
    return shfl32(v);
  Type intType = b.getIntegerType(bits);
  Value asInt = isa<FloatType>(type)
                    ? arith::BitcastOp::create(b, loc, intType, v).getResult()
                    : v;
  Value result;
  if (bits < 32) {
    Value wide = arith::ExtUIOp::create(b, loc, b.getI32Type(), asInt);
    result = arith::TruncIOp::create(b, loc, intType, shfl32(wide));
  } else {
    Type i64 = b.getI64Type();
    Value lo = arith::TruncIOp::create(b, loc, b.getI32Type(), asInt);
    Value hi = arith::TruncIOp::create(
        b, loc, b.getI32Type(),
        arith::ShRUIOp::create(b, loc, asInt, constI64(b, loc, 32)));
    Value slo = arith::ExtUIOp::create(b, loc, i64, shfl32(lo));
    Value shi = arith::ExtUIOp::create(b, loc, i64, shfl32(hi));
    result = arith::OrIOp::create(
        b, loc, slo, arith::ShLIOp::create(b, loc, shi, constI64(b, loc, 32)));
  }
  if (isa<FloatType>(type))
    result = arith::BitcastOp::create(b, loc, type, result);
  return result;
}

SmallVector<Value> mlir::tile::applyCombiner(OpBuilder &b, Location loc,
                                             Region &combiner, ValueRange acc,
                                             ValueRange next) {
  return cloneCombiner(b, combiner, acc, next);
}

MmaSmemLayout mlir::tile::getMmaSmemLayout(int64_t m, int64_t n, int64_t k,
                                           int64_t elemBytes,
                                           bool bTransposed) {
  // Rows padded by 16 bytes: the eight row addresses of an ldmatrix fall in
  // distinct banks.
  int64_t pad = 16 / elemBytes;
  auto align16 = [](int64_t bytes) { return (bytes + 15) / 16 * 16; };
  MmaSmemLayout l;
  l.aStride = k + pad;
  l.bStride = bTransposed ? k + pad : n + pad;
  l.aBytes = align16(m * l.aStride * elemBytes);
  l.bBytes = align16((bTransposed ? n : k) * l.bStride * elemBytes);
  return l;
}

Value mlir::tile::swizzledOffset(OpBuilder &b, Location loc, Value row,
                                 Value col, int64_t rows, int64_t elemBytes,
                                 int64_t swizzle) {
  int64_t width = swizzle / elemBytes; // columns per panel
  auto c = [&](int64_t v) { return constI32(b, loc, v); };
  Value panel = arith::DivUIOp::create(b, loc, col, c(width));
  Value inPanel = arith::RemUIOp::create(b, loc, col, c(width));
  Value chunk = arith::DivUIOp::create(
      b, loc, arith::MulIOp::create(b, loc, inPanel, c(elemBytes)), c(16));
  // The XOR pattern is bits 7.. of the row's byte offset: row % 8 for
  // 128-byte rows, (row / 2) % 4 for 64-byte ones.
  Value pattern = arith::RemUIOp::create(
      b, loc, arith::DivUIOp::create(b, loc, row, c(128 / swizzle)),
      c(swizzle / 16));
  Value swizzled = arith::XOrIOp::create(b, loc, chunk, pattern);
  Value offset = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, panel, c(rows * swizzle)),
      arith::MulIOp::create(b, loc, row, c(swizzle)));
  return arith::AddIOp::create(b, loc, offset,
                               arith::MulIOp::create(b, loc, swizzled, c(16)));
}

void mlir::tile::storeSwizzled(
    OpBuilder &b, Location loc, Value base, ArrayRef<Value> elems,
    Type elemType, const LinearLayout &layout, int64_t vector, int64_t rows,
    int64_t swizzle, function_ref<std::pair<Value, Value>(Value, Value)> place,
    bool inPlace) {
  int64_t eb = storageBytes(elemType);
  SmallVector<Value> thread = threadCoords(b, loc, layout, inPlace);
  for (int64_t r = 0; r < layout.getNumRegs(); r += vector) {
    SmallVector<int64_t, 4> reg = layout.regCoord(r);
    Value row =
        arith::XOrIOp::create(b, loc, thread[0], constI32(b, loc, reg[0]));
    Value col =
        arith::XOrIOp::create(b, loc, thread[1], constI32(b, loc, reg[1]));
    if (place)
      std::tie(row, col) = place(row, col);
    // The 16-byte chunk's offset, then the element's within it.
    Value within = arith::MulIOp::create(
        b, loc,
        arith::RemUIOp::create(b, loc, col, constI32(b, loc, 16 / eb)),
        constI32(b, loc, eb));
    Value offset = arith::AddIOp::create(
        b, loc, swizzledOffset(b, loc, row, col, rows, eb, swizzle), within);
    Value addr = LLVM::GEPOp::create(b, loc, base.getType(), b.getI8Type(),
                                     base, ValueRange{offset});
    ArrayRef<Value> chunk = elems.slice(r, vector);
    Value value = vector == 1 ? chunk[0]
                              : packVector(b, loc,
                                           VectorType::get({vector}, elemType),
                                           chunk);
    LLVM::StoreOp::create(b, loc, value, addr, vector * eb);
  }
}
