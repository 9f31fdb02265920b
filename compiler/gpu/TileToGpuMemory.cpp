//===- TileToGpuMemory.cpp - global loads, stores, gathers, atomics -------===//
//
// Tile-indexed accesses: each thread touches the elements its layout gives
// it, in runs of up to 16 bytes (ld.global.v4.b32) where the array type
// proves a unit inner stride, enough alignment and an extent divisible by
// the run (so a run is wholly in or out of bounds). Accesses are predicated
// PTX as Triton emits them (tile.ptx.ld_global/st_global, TileGpuAsmOps.td):
// out-of-bounds lanes read the padding.
//
//===----------------------------------------------------------------------===//
#include "compiler/gpu/TileToGpuCommon.h"
#include "dialects/tile/TileGpuAsmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// NVPTX's sync scope of a tile scope ("" is the system).
StringRef syncScope(MemoryScope scope) {
  return scope == MemoryScope::block ? "block"
         : scope == MemoryScope::sys ? ""
                                     : "device";
}

/// The memory_order and memory_scope of an ordered ld/st; nulls for a weak
/// access.
struct Ordering {
  MemoryOrderAttr order;
  MemoryScopeAttr scope;
};
Ordering accessOrdering(Operation *op) {
  MemoryOrder order = getMemoryOrder(op);
  if (order == MemoryOrder::weak)
    return {};
  MLIRContext *ctx = op->getContext();
  return {MemoryOrderAttr::get(ctx, order),
          MemoryScopeAttr::get(ctx, getMemoryScope(op))};
}

bool releases(MemoryOrder o) {
  return o == MemoryOrder::release || o == MemoryOrder::acq_rel;
}
bool acquires(MemoryOrder o) {
  return o == MemoryOrder::acquire || o == MemoryOrder::acq_rel;
}

/// The integer words a run of `bytes` moves as: n x i32, or one i16/i8.
struct WordShape {
  int64_t count;
  unsigned bits;
};
WordShape wordsFor(int64_t bytes) {
  if (bytes >= 4)
    return {bytes / 4, 32};
  return {1, static_cast<unsigned>(bytes * 8)};
}

/// Memory type of an element: i1 is a byte.
Type memType(Type t) {
  return t.isInteger(1) ? IntegerType::get(t.getContext(), 8) : t;
}

/// The bits of `pad` (an element) in word `word` of a run of `bits`-wide
/// words: the element repeated over the word, or for elements wider than a
/// word (i64, f64 in b32 words) the word's part of it.
uint64_t padWord(Attribute pad, Type elemType, unsigned bits, int64_t word) {
  if (!pad)
    return 0;
  APInt v;
  if (auto f = dyn_cast<FloatAttr>(pad))
    v = f.getValue().bitcastToAPInt();
  else if (auto i = dyn_cast<IntegerAttr>(pad))
    v = i.getValue();
  else
    return 0;
  unsigned eb = std::max(8u, elemType.getIntOrFloatBitWidth());
  uint64_t e = v.zextOrTrunc(eb).getZExtValue(), w = 0;
  if (eb > bits) // each word held the element's low half: i64 1 read 2^32 + 1
    return (e >> (bits * (word % (eb / bits)))) & ((uint64_t(1) << bits) - 1);
  for (unsigned s = 0; s < bits; s += eb)
    w |= e << s;
  return bits == 64 ? w : w & ((uint64_t(1) << bits) - 1);
}

/// `@pred ld.global` of `bytes` at `addr`; lanes off `pred` read `pad`.
/// Returns the run's elements.
SmallVector<Value> predicatedLoad(OpBuilder &b, Location loc, Value addr,
                                  Value pred, Type elemType, int64_t count,
                                  Attribute pad, Ordering ordering = {}) {
  Type mem = memType(elemType);
  int64_t bytes = count * storageBytes(elemType);
  WordShape ws = wordsFor(bytes);
  Type wordType = b.getIntegerType(ws.bits == 8 ? 16 : ws.bits);
  SmallVector<int64_t> pads;
  for (int64_t i = 0; i < ws.count; ++i)
    pads.push_back(padWord(pad, elemType, ws.bits, i));
  auto ld = PtxLoadGlobalOp::create(
      b, loc, SmallVector<Type>(ws.count, wordType), addr, pred, pads,
      /*byte=*/ws.bits == 8, ordering.order, ordering.scope);
  SmallVector<Value> words(ld.getWords());
  SmallVector<Value> elems;
  auto finish = [&](Value e) {
    // A byte arrives in a b16 register: narrow it (then bitcast an fp8).
    unsigned memBits = mem.getIntOrFloatBitWidth();
    if (isa<IntegerType>(e.getType()) &&
        e.getType().getIntOrFloatBitWidth() > memBits)
      e = arith::TruncIOp::create(b, loc, b.getIntegerType(memBits), e);
    if (e.getType() != mem)
      e = arith::BitcastOp::create(b, loc, mem, e);
    if (mem != elemType)
      e = arith::TruncIOp::create(b, loc, elemType, e);
    elems.push_back(e);
  };
  if (ws.bits < 32) {
    if (count == 1) {
      finish(words[0]);
      return elems;
    }
    // Two 1-byte elements in one b16 word.
    Value word = packVector(b, loc, VectorType::get({1}, wordType), words);
    Value cast =
        vector::BitCastOp::create(b, loc, VectorType::get({count}, mem), word);
    for (Value e : unpackVector(b, loc, cast))
      finish(e);
    return elems;
  }
  Value packed =
      packVector(b, loc, VectorType::get({ws.count}, wordType), words);
  Value cast =
      vector::BitCastOp::create(b, loc, VectorType::get({count}, mem), packed);
  for (Value e : unpackVector(b, loc, cast))
    finish(e);
  return elems;
}

/// `@pred st.global` of the run `elems` at `addr`.
void predicatedStore(OpBuilder &b, Location loc, Value addr, Value pred,
                     Type elemType, ValueRange elems, Ordering ordering = {}) {
  Type mem = memType(elemType);
  int64_t count = elems.size();
  WordShape ws = wordsFor(count * storageBytes(elemType));
  SmallVector<Value> memElems;
  for (Value e : elems)
    memElems.push_back(mem != elemType ? arith::ExtUIOp::create(b, loc, mem, e)
                                       : e);
  SmallVector<Value> words;
  if (ws.bits == 32) {
    Value vec = packVector(b, loc, VectorType::get({count}, mem), memElems);
    Value cast = vector::BitCastOp::create(
        b, loc, VectorType::get({ws.count}, b.getI32Type()), vec);
    words = unpackVector(b, loc, cast);
  } else if (count > 1) { // two 1-byte elements in one b16 word
    Value vec = packVector(b, loc, VectorType::get({count}, mem), memElems);
    Value cast = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, b.getI16Type()), vec);
    words = unpackVector(b, loc, cast);
  } else {
    Value e = memElems[0];
    if (!isa<IntegerType>(e.getType()))
      e = arith::BitcastOp::create(b, loc, b.getIntegerType(ws.bits), e);
    if (ws.bits == 8)
      e = arith::ExtUIOp::create(b, loc, b.getI16Type(), e);
    words.push_back(e);
  }
  PtxStoreGlobalOp::create(b, loc, addr, pred, words, /*byte=*/ws.bits == 8,
                           ordering.order, ordering.scope);
}

Value globalAddress(OpBuilder &b, Location loc, const ArrayParts &parts,
                    Type elemType, Value offset) {
  // fp8 has no LLVM IR type (the translation would crash): its bytes.
  Type mem = isa<Float8E4M3FNType, Float8E5M2Type>(elemType)
                 ? b.getI8Type()
                 : memType(elemType);
  return LLVM::GEPOp::create(b, loc, parts.ptr.getType(), mem, parts.ptr,
                             ValueRange{offset});
}

/// Walks the runs of a tile-indexed access: calls `fn(firstReg, count,
/// address, inBounds)` for each run of `count` registers.
template <typename AccessOp>
LogicalResult
forEachRun(OpBuilder &b, AccessOp op, Value array, ValueRange indices,
           RankedTensorType tileType, ArrayRef<int64_t> blockShape,
           std::optional<ArrayRef<int64_t>> order,
           function_ref<void(int64_t, int64_t, Value, Value)> fn) {
  Location loc = op.getLoc();
  FailureOr<ArrayParts> parts = getArrayParts(array);
  if (failed(parts))
    return op.emitOpError("array is not a kernel argument");
  FailureOr<LinearLayout> layout = toLinearLayout(tileType);
  if (failed(layout))
    return op.emitOpError("tile has no layout; run tile-map-threads");
  auto arrayType = cast<ArrayType>(array.getType());
  unsigned rank = arrayType.getRank();
  Type elemType = arrayType.getElementType();
  int64_t eb = storageBytes(elemType);
  auto arrayDim = [&](unsigned i) -> unsigned {
    return order ? (*order)[i] : i;
  };

  // Vector width: contiguous registers along the array's inner dimension.
  int64_t vec = 1;
  if (rank && arrayType.getStrides()[rank - 1] == 1) {
    for (unsigned i = 0; i < rank; ++i)
      if (arrayDim(i) == rank - 1)
        vec = getContiguity(*layout, i);
    vec = std::min<int64_t>(vec, 16 / eb);
    int64_t extent = arrayType.getShape()[rank - 1];
    int64_t div =
        ShapedType::isDynamic(extent) ? arrayType.getDivisibility() : extent;
    while (vec > 1 && (arrayType.getAlignment() % (vec * eb) || div % vec))
      vec /= 2;
  }

  Type i64 = b.getI64Type();
  SmallVector<Value> origins(rank), extents(rank), strides(rank);
  for (unsigned d = 0; d < rank; ++d) {
    Value idx = arith::ExtSIOp::create(b, loc, i64, indices[d]);
    origins[d] =
        arith::MulIOp::create(b, loc, idx, constI64(b, loc, blockShape[d]));
    int64_t se = arrayType.getShape()[d], ss = arrayType.getStrides()[d];
    extents[d] =
        ShapedType::isDynamic(se) ? parts->extents[d] : constI64(b, loc, se);
    strides[d] =
        ShapedType::isDynamic(ss) ? parts->strides[d] : constI64(b, loc, ss);
  }
  SmallVector<Value> tc = threadCoords(b, loc, *layout);
  SmallVector<Value> base(rank);
  for (unsigned i = 0; i < rank; ++i)
    base[arrayDim(i)] =
        arith::AddIOp::create(b, loc, origins[arrayDim(i)],
                              arith::ExtUIOp::create(b, loc, i64, tc[i]));
  for (int64_t r = 0; r < layout->getNumRegs(); r += vec) {
    SmallVector<int64_t, 4> rc = layout->regCoord(r);
    Value inBounds, offset;
    for (unsigned i = 0; i < rank; ++i) {
      unsigned d = arrayDim(i);
      Value coord =
          arith::AddIOp::create(b, loc, base[d], constI64(b, loc, rc[i]));
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, coord,
                                       extents[d]);
      inBounds = inBounds
                     ? arith::AndIOp::create(b, loc, inBounds, ok).getResult()
                     : ok;
      Value term =
          arrayType.getStrides()[d] == 1
              ? coord
              : arith::MulIOp::create(b, loc, coord, strides[d]).getResult();
      offset = offset ? arith::AddIOp::create(b, loc, offset, term).getResult()
                      : term;
    }
    if (!offset) {
      offset = constI64(b, loc, 0);
      inBounds = arith::ConstantOp::create(b, loc, b.getBoolAttr(true));
    }
    fn(r, vec, globalAddress(b, loc, *parts, elemType, offset), inBounds);
  }
  return success();
}

struct LoadPattern : OpConversionPattern<LoadOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<RankedTensorType>(op.getType());
    Type elemType = type.getElementType();
    Type vecType = getTypeConverter()->convertType(type);
    SmallVector<Value> elems;
    std::optional<ArrayRef<int64_t>> order;
    if (op.getOrder())
      order = *op.getOrder();
    Ordering ordering = accessOrdering(op);
    if (failed(forEachRun(rewriter, op, adaptor.getArray(),
                          adaptor.getIndices(), type, op.getBlockShape(), order,
                          [&](int64_t, int64_t count, Value addr, Value pred) {
                            llvm::append_range(
                                elems,
                                predicatedLoad(rewriter, op.getLoc(), addr,
                                               pred, elemType, count,
                                               op.getPaddingAttr(), ordering));
                          })))
      return failure();
    // An acquire orders the block's later accesses: every thread's follow
    // its own acquire, the barrier puts the others' after it.
    if (acquires(getMemoryOrder(op)))
      barrier(rewriter, op.getLoc());
    rewriter.replaceOp(op, packVector(rewriter, op.getLoc(), vecType, elems));
    return success();
  }
};

struct StorePattern : OpConversionPattern<StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getValue().getType());
    FailureOr<LinearLayout> layout = toLinearLayout(type);
    if (failed(layout))
      return failure();
    SmallVector<Value> elems = unpackVector(rewriter, loc, adaptor.getValue());
    Value owner = isFirstReplica(rewriter, loc, *layout);
    // A release orders the block's earlier accesses before each st.release.
    if (releases(getMemoryOrder(op)))
      barrier(rewriter, loc);
    Ordering ordering = accessOrdering(op);
    if (failed(forEachRun(
            rewriter, op, adaptor.getArray(), adaptor.getIndices(), type,
            type.getShape(), std::nullopt,
            [&](int64_t first, int64_t count, Value addr, Value pred) {
              Value p = arith::AndIOp::create(rewriter, loc, pred, owner);
              predicatedStore(rewriter, loc, addr, p, type.getElementType(),
                              ArrayRef<Value>(elems).slice(first, count),
                              ordering);
            })))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

/// Element-indexed accesses: per element an address and a predicate (mask
/// and bounds).
struct ElementAccess {
  SmallVector<Value> addrs, preds;
};
FailureOr<ElementAccess> elementAccess(OpBuilder &b, Operation *op, Value array,
                                       ValueRange indices, Value mask,
                                       int64_t n) {
  Location loc = op->getLoc();
  FailureOr<ArrayParts> parts = getArrayParts(array);
  if (failed(parts))
    return op->emitOpError("array is not a kernel argument");
  auto arrayType = cast<ArrayType>(array.getType());
  SmallVector<SmallVector<Value>> idx;
  for (Value i : indices)
    idx.push_back(unpackVector(b, loc, i));
  SmallVector<Value> masks;
  if (mask)
    masks = unpackVector(b, loc, mask);
  Type i64 = b.getI64Type();
  ElementAccess acc;
  for (int64_t e = 0; e < n; ++e) {
    Value pred = mask ? masks[e]
                      : arith::ConstantOp::create(b, loc, b.getBoolAttr(true))
                            .getResult();
    Value offset = constI64(b, loc, 0);
    for (unsigned d = 0; d < arrayType.getRank(); ++d) {
      Value coord = idx[d][e];
      coord = coord.getType() == i64
                  ? coord
                  : arith::ExtSIOp::create(b, loc, i64, coord).getResult();
      Value ok = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, coord,
                                       parts->extents[d]);
      pred = arith::AndIOp::create(b, loc, pred, ok);
      offset = arith::AddIOp::create(
          b, loc, offset,
          arith::MulIOp::create(b, loc, coord, parts->strides[d]));
    }
    acc.preds.push_back(pred);
    acc.addrs.push_back(
        globalAddress(b, loc, *parts, arrayType.getElementType(), offset));
  }
  return acc;
}

struct GatherPattern : OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto vecType =
        cast<VectorType>(getTypeConverter()->convertType(op.getType()));
    Type elemType = vecType.getElementType();
    int64_t n = vecType.getNumElements();
    FailureOr<ElementAccess> acc =
        elementAccess(rewriter, op, adaptor.getArray(), adaptor.getIndices(),
                      adaptor.getMask(), n);
    if (failed(acc))
      return failure();
    SmallVector<Value> others;
    if (adaptor.getOther())
      others = unpackVector(rewriter, loc, adaptor.getOther());
    SmallVector<Value> elems;
    Ordering ordering = accessOrdering(op);
    for (int64_t e = 0; e < n; ++e) {
      Value v = predicatedLoad(rewriter, loc, acc->addrs[e], acc->preds[e],
                               elemType, 1, Attribute(), ordering)[0];
      if (!others.empty())
        v = arith::SelectOp::create(rewriter, loc, acc->preds[e], v, others[e]);
      elems.push_back(v);
    }
    if (acquires(getMemoryOrder(op)))
      barrier(rewriter, loc);
    rewriter.replaceOp(op, packVector(rewriter, loc, vecType, elems));
    return success();
  }
};

struct ScatterPattern : OpConversionPattern<ScatterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScatterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getValue().getType());
    FailureOr<LinearLayout> layout = toLinearLayout(type);
    if (failed(layout))
      return failure();
    SmallVector<Value> values = unpackVector(rewriter, loc, adaptor.getValue());
    FailureOr<ElementAccess> acc =
        elementAccess(rewriter, op, adaptor.getArray(), adaptor.getIndices(),
                      adaptor.getMask(), values.size());
    if (failed(acc))
      return failure();
    Value owner = isFirstReplica(rewriter, loc, *layout);
    if (releases(getMemoryOrder(op)))
      barrier(rewriter, loc);
    Ordering ordering = accessOrdering(op);
    for (auto [e, v] : llvm::enumerate(values)) {
      Value p = arith::AndIOp::create(rewriter, loc, acc->preds[e], owner);
      predicatedStore(rewriter, loc, acc->addrs[e], p, type.getElementType(),
                      ValueRange{v}, ordering);
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// Runs `body` (returning the old value) where `pred` holds, else zero.
Value ifElseZero(OpBuilder &b, Location loc, Value pred, Type type,
                 function_ref<Value(OpBuilder &)> body) {
  auto ifOp = scf::IfOp::create(
      b, loc, pred,
      [&](OpBuilder &then, Location l) {
        scf::YieldOp::create(then, l, body(then));
      },
      [&](OpBuilder &otherwise, Location l) {
        Value zero = arith::ConstantOp::create(otherwise, l, type,
                                               otherwise.getZeroAttr(type));
        scf::YieldOp::create(otherwise, l, zero);
      });
  return ifOp.getResult(0);
}

LLVM::AtomicBinOp atomicBinOp(AtomicKind kind, Type type) {
  bool isFloat = isa<FloatType>(type);
  switch (kind) {
  case AtomicKind::add:
    return isFloat ? LLVM::AtomicBinOp::fadd : LLVM::AtomicBinOp::add;
  case AtomicKind::max:
    return isFloat ? LLVM::AtomicBinOp::fmax : LLVM::AtomicBinOp::max;
  case AtomicKind::min:
    return isFloat ? LLVM::AtomicBinOp::fmin : LLVM::AtomicBinOp::min;
  case AtomicKind::umax:
    return LLVM::AtomicBinOp::umax;
  case AtomicKind::umin:
    return LLVM::AtomicBinOp::umin;
  case AtomicKind::xchg:
    return LLVM::AtomicBinOp::xchg;
  case AtomicKind::and_:
    return LLVM::AtomicBinOp::_and;
  case AtomicKind::or_:
    return LLVM::AtomicBinOp::_or;
  case AtomicKind::xor_:
    return LLVM::AtomicBinOp::_xor;
  }
  llvm_unreachable("unknown atomic kind");
}

/// Replaces an element-indexed atomic (`values` unpacked from its value
/// operand) by the old values. Element e runs `atomic(b, e, addr)` where it is
/// in bounds, unmasked and held by the first replica of its lane (replicas
/// share the address and must apply the update once); the other replicas get
/// its old value through shared memory, so every thread sees the same tile.
///
/// The op is one operation of the block with its memory order: a release
/// has a barrier first, so that every thread's earlier accesses precede the
/// releasing atomic of whichever thread issues it; an acquire one after it
/// (the broadcast's, when there is one), so that the acquiring atomic
/// precedes every thread's later accesses. A scalar atomic_cas taken in a
/// loop is then a lock the block holds. With `fenced`, the atomics are
/// relaxed and the ordering is fences of the op's scope around them: NVPTX
/// drops the ordering of atomicrmw (even seq_cst prints as a relaxed atom),
/// while cmpxchg keeps its own. A relaxed op has neither.
LogicalResult
replaceByAtomics(ConversionPatternRewriter &rewriter, Operation *op,
                 const LinearLayout &layout, Value array, ValueRange indices,
                 Value mask, Value packedValues, ArrayRef<Value> values,
                 GpuLoweringState &state, bool fenced,
                 function_ref<Value(OpBuilder &, unsigned, Value)> atomic) {
  Location loc = op->getLoc();
  Type elemType = getElementTypeOrSelf(op->getResult(0).getType());
  MemoryOrder order = getMemoryOrder(op);
  FailureOr<ElementAccess> acc =
      elementAccess(rewriter, op, array, indices, mask, values.size());
  if (failed(acc))
    return failure();
  Value owner = isFirstReplica(rewriter, loc, layout);
  auto fence = [&] {
    LLVM::FenceOp::create(rewriter, loc, LLVM::AtomicOrdering::acq_rel,
                          syncScope(getMemoryScope(op)));
  };
  bool replicated = layout.laneReplicaMask() || layout.warpReplicaMask();
  bool broadcast = replicated && !op->getResult(0).use_empty();
  // A broadcast also waits for earlier readers of the shared buffer.
  if (releases(order) || broadcast)
    barrier(rewriter, loc);
  if (fenced && releases(order))
    fence();
  SmallVector<Value> old;
  for (unsigned e = 0; e < values.size(); ++e) {
    Value p = arith::AndIOp::create(rewriter, loc, acc->preds[e], owner);
    Value addr = acc->addrs[e];
    old.push_back(ifElseZero(rewriter, loc, p, elemType,
                             [&](OpBuilder &b) { return atomic(b, e, addr); }));
  }
  if (fenced && acquires(order))
    fence();
  if (broadcast) {
    int64_t numElems = 1;
    for (int64_t s : layout.shape)
      numElems *= s;
    state.needShared(rewriter, numElems * storageBytes(elemType));
    SmallVector<int64_t> strides = rowMajorStrides(layout.shape);
    Value base = sharedBase(rewriter, loc);
    scf::IfOp::create(rewriter, loc, owner, [&](OpBuilder &b, Location l) {
      storeShared(b, l, base, old, elemType, layout, strides);
      scf::YieldOp::create(b, l);
    });
    barrier(rewriter, loc);
    old = loadShared(rewriter, loc, base, elemType, layout, strides);
  } else if (acquires(order)) {
    barrier(rewriter, loc);
  }
  rewriter.replaceOp(op,
                     packVector(rewriter, loc, packedValues.getType(), old));
  return success();
}

/// `atom.relaxed.{cta,sys}.global.<op>` where PTX has the instruction for
/// the element type (NVPTX prints every atomicrmw at gpu scope), else null.
Value scopedAtom(OpBuilder &b, Location loc, AtomicKind kind, Value addr,
                 Value v, MemoryScope scope) {
  if (!PtxAtomGlobalOp::supports(kind, v.getType()))
    return Value();
  MLIRContext *ctx = b.getContext();
  return PtxAtomGlobalOp::create(b, loc, v.getType(),
                                 AtomicKindAttr::get(ctx, kind), addr, v,
                                 MemoryScopeAttr::get(ctx, scope));
}

LLVM::AtomicOrdering llvmOrdering(MemoryOrder order) {
  switch (order) {
  case MemoryOrder::acquire:
    return LLVM::AtomicOrdering::acquire;
  case MemoryOrder::release:
    return LLVM::AtomicOrdering::release;
  case MemoryOrder::acq_rel:
    return LLVM::AtomicOrdering::acq_rel;
  default:
    return LLVM::AtomicOrdering::monotonic;
  }
}

struct AtomicRMWPattern : StatefulPattern<AtomicRMWOp> {
  using StatefulPattern::StatefulPattern;
  LogicalResult
  matchAndRewrite(AtomicRMWOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    FailureOr<LinearLayout> layout = toLinearLayout(type);
    if (failed(layout))
      return failure();
    Type elemType = type.getElementType();
    SmallVector<Value> values = unpackVector(rewriter, loc, adaptor.getValue());
    LLVM::AtomicBinOp bin = atomicBinOp(op.getKind(), elemType);
    MemoryScope scope = getMemoryScope(op);
    return replaceByAtomics(
        rewriter, op, *layout, adaptor.getArray(), adaptor.getIndices(),
        adaptor.getMask(), adaptor.getValue(), values, state, /*fenced=*/true,
        [&](OpBuilder &b, unsigned e, Value addr) -> Value {
          if (scope != MemoryScope::device)
            if (Value r =
                    scopedAtom(b, loc, op.getKind(), addr, values[e], scope))
              return r;
          // Else a CAS loop (which keeps the scope), or atom at gpu scope.
          return LLVM::AtomicRMWOp::create(b, loc, bin, addr, values[e],
                                           LLVM::AtomicOrdering::monotonic,
                                           syncScope(scope))
              .getResult();
        });
  }
};

struct AtomicCASPattern : StatefulPattern<AtomicCASOp> {
  using StatefulPattern::StatefulPattern;
  LogicalResult
  matchAndRewrite(AtomicCASOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto type = cast<RankedTensorType>(op.getType());
    FailureOr<LinearLayout> layout = toLinearLayout(type);
    if (failed(layout))
      return failure();
    Type elemType = type.getElementType();
    SmallVector<Value> cmps = unpackVector(rewriter, loc, adaptor.getCmp());
    SmallVector<Value> values = unpackVector(rewriter, loc, adaptor.getValue());
    Type intType = rewriter.getIntegerType(elemType.getIntOrFloatBitWidth());
    return replaceByAtomics(
        rewriter, op, *layout, adaptor.getArray(), adaptor.getIndices(),
        Value(), adaptor.getValue(), values, state, /*fenced=*/false,
        [&](OpBuilder &b, unsigned e, Value addr) -> Value {
          // cmpxchg compares bits: floats go through integers.
          auto asInt = [&](Value x) -> Value {
            return x.getType() == intType
                       ? x
                       : arith::BitcastOp::create(b, loc, intType, x)
                             .getResult();
          };
          // A failed compare only reads: relaxed (a lock spins on it).
          auto cas = LLVM::AtomicCmpXchgOp::create(
              b, loc, addr, asInt(cmps[e]), asInt(values[e]),
              llvmOrdering(getMemoryOrder(op)), LLVM::AtomicOrdering::monotonic,
              syncScope(getMemoryScope(op)));
          Value r = LLVM::ExtractValueOp::create(b, loc, cas.getResult(),
                                                 ArrayRef<int64_t>{0});
          return r.getType() == elemType
                     ? r
                     : arith::BitcastOp::create(b, loc, elemType, r)
                           .getResult();
        });
  }
};

} // namespace

LogicalResult mlir::tile::forEachCopyRun(
    OpBuilder &b, tilegpu::AsyncCopyOp op, Value array, ValueRange indices,
    function_ref<void(int64_t, int64_t, Value, Value)> fn) {
  auto block = cast<RankedTensorType>(op.getBlock());
  return forEachRun(b, op, array, indices, block, block.getShape(),
                    std::nullopt, fn);
}

void mlir::tile::populateTileToGpuMemoryPatterns(TypeConverter &converter,
                                                 RewritePatternSet &patterns,
                                                 GpuLoweringState &state) {
  patterns.add<LoadPattern, StorePattern, GatherPattern, ScatterPattern>(
      converter, patterns.getContext());
  patterns.add<AtomicRMWPattern, AtomicCASPattern>(
      converter, patterns.getContext(), state);
  populateTileToGpuViewPatterns(converter, patterns);
}
