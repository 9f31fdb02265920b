//===- HostMemoryPatterns.cpp - tile memory ops to memref/tensor ops ------===//
//
// A load reads its block in place (a strided view) when no write can come
// before the tile's last read (findInPlaceLoads); otherwise it copies the
// block into a fresh buffer, so that a later store to the same memory cannot
// change the tile. Blocks fully in bounds take the static-size path; the
// others get a buffer filled with the padding plus a copy of the part inside
// the array. Stores write only that part. Element-indexed ops check bounds
// and masks lane by lane; atomics are real atomic instructions.
//
//===----------------------------------------------------------------------===//
#include "compiler/cpu/HostPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/CallInterfaces.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::host;

namespace {

/// Where a tile-indexed block sits in its array.
struct BlockBounds {
  SmallVector<Value> origin; // index of the block's first element, per dim
  SmallVector<Value> extent; // the array's extents
  Value inBounds;            // i1: the whole block lies inside the array
};

BlockBounds computeBounds(OpBuilder &b, Location loc, Value mem,
                          ValueRange indices, ArrayRef<int64_t> block) {
  BlockBounds bounds;
  Value zero = indexConst(b, loc, 0);
  for (auto [d, idx] : llvm::enumerate(indices)) {
    Value origin = arith::MulIOp::create(b, loc, toIndex(b, loc, idx),
                                         indexConst(b, loc, block[d]));
    Value extent = memref::DimOp::create(b, loc, mem, d);
    Value end =
        arith::AddIOp::create(b, loc, origin, indexConst(b, loc, block[d]));
    Value lowOk = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                        origin, zero);
    Value highOk = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                         end, extent);
    Value ok = arith::AndIOp::create(b, loc, lowOk, highOk);
    bounds.inBounds = bounds.inBounds
                          ? arith::AndIOp::create(b, loc, bounds.inBounds, ok)
                          : ok;
    bounds.origin.push_back(origin);
    bounds.extent.push_back(extent);
  }
  if (!bounds.inBounds) // rank 0
    bounds.inBounds = arith::ConstantIntOp::create(b, loc, 1, 1);
  return bounds;
}

/// The part of a partially out-of-bounds block inside the array: per dim, the
/// first in-bounds position relative to the block and the number of them.
struct BlockPart {
  SmallVector<OpFoldResult> lo, size, arrayOffset;
};

BlockPart computePart(OpBuilder &b, Location loc, const BlockBounds &bounds,
                      ArrayRef<int64_t> block) {
  BlockPart part;
  Value zero = indexConst(b, loc, 0);
  for (auto [d, n] : llvm::enumerate(block)) {
    Value full = indexConst(b, loc, n);
    auto clamp = [&](Value v) {
      return arith::MinSIOp::create(b, loc,
                                    arith::MaxSIOp::create(b, loc, v, zero),
                                    full);
    };
    Value origin = bounds.origin[d];
    Value lo = clamp(arith::SubIOp::create(b, loc, zero, origin));
    Value hi =
        clamp(arith::SubIOp::create(b, loc, bounds.extent[d], origin));
    Value size = arith::MaxSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, hi, lo), zero);
    part.lo.push_back(lo);
    part.size.push_back(size);
    part.arrayOffset.push_back(
        arith::AddIOp::create(b, loc, origin, lo).getResult());
  }
  return part;
}

bool isIdentity(ArrayRef<int64_t> perm) {
  for (auto [i, p] : llvm::enumerate(perm))
    if (static_cast<int64_t>(i) != p)
      return false;
  return true;
}

/// The type of an in-place load's view of `mem`: its subview's strided type,
/// with the static strides that disagree with `bufType`'s made dynamic, so
/// that a partial block's buffer can be cast to it. Only a size-1 dimension
/// (a column vector: strides [1, 1]) or overlapping strides can disagree;
/// otherwise the type is the subview's own.
MemRefType inPlaceViewType(Value mem, ArrayRef<int64_t> block,
                           MemRefType bufType) {
  unsigned rank = block.size();
  auto viewType = memref::SubViewOp::inferResultType(
      cast<MemRefType>(mem.getType()),
      SmallVector<int64_t>(rank, ShapedType::kDynamic), block,
      SmallVector<int64_t>(rank, 1));
  auto [viewStrides, viewOffset] = viewType.getStridesAndOffset();
  auto [bufStrides, bufOffset] = bufType.getStridesAndOffset();
  SmallVector<int64_t> strides(viewStrides);
  bool changed = false;
  for (auto [view, buf] : llvm::zip(strides, bufStrides)) {
    if (!ShapedType::isDynamic(view) && view != buf) {
      view = ShapedType::kDynamic;
      changed = true;
    }
  }
  if (!changed)
    return viewType;
  auto layout = StridedLayoutAttr::get(mem.getContext(), viewOffset, strides);
  return MemRefType::get(block, viewType.getElementType(), layout,
                         viewType.getMemorySpace());
}

/// Copies `src` (block axes) into `dst` (result axes, `dst` axis i being
/// `src` axis perm[i]).
void copyBlock(OpBuilder &b, Location loc, Value src, Value dst,
               ArrayRef<int64_t> perm) {
  if (isIdentity(perm))
    linalg::CopyOp::create(b, loc, ValueRange{src}, ValueRange{dst});
  else
    linalg::TransposeOp::create(b, loc, src, dst, perm);
}

struct LoadLowering : OpConversionPattern<LoadOp> {
  LoadLowering(TypeConverter &converter, MLIRContext *ctx,
               const DenseSet<Operation *> &inPlace)
      : OpConversionPattern(converter, ctx), inPlace(inPlace) {}

  LogicalResult
  matchAndRewrite(LoadOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value mem = adaptor.getArray();
    auto resultType = cast<RankedTensorType>(op.getType());
    Type elem = resultType.getElementType();
    SmallVector<int64_t> block = op.getBlockShape();
    SmallVector<int64_t> perm;
    if (auto order = op.getOrder())
      perm = llvm::to_vector(*order);
    else
      perm = llvm::to_vector(llvm::seq<int64_t>(0, block.size()));
    unsigned rank = block.size();
    BlockBounds bounds =
        computeBounds(rewriter, loc, mem, adaptor.getIndices(), block);
    Value pad;
    if (auto padding = op.getPaddingAttr())
      pad = arith::ConstantOp::create(rewriter, loc, elem, padding);
    else
      pad = zeroOf(rewriter, loc, elem);
    auto bufType = MemRefType::get(resultType.getShape(), elem);

    // The partial block: the padding everywhere, then the in-bounds part.
    auto fillPartial = [&](OpBuilder &b, Location loc, Value buf) {
      linalg::FillOp::create(b, loc, ValueRange{pad}, ValueRange{buf});
      BlockPart part = computePart(b, loc, bounds, block);
      Value src = memref::SubViewOp::create(b, loc, mem, part.arrayOffset,
                                            part.size, unitStrides(b, rank));
      SmallVector<OpFoldResult> dstOffsets, dstSizes;
      for (int64_t p : perm) {
        dstOffsets.push_back(part.lo[p]);
        dstSizes.push_back(part.size[p]);
      }
      Value dst = memref::SubViewOp::create(b, loc, buf, dstOffsets, dstSizes,
                                            unitStrides(b, rank));
      copyBlock(b, loc, src, dst, perm);
    };
    SmallVector<OpFoldResult> offsets(bounds.origin.begin(),
                                      bounds.origin.end());

    if (inPlace.contains(op)) {
      // Reads the array where it is when the block is inside it; the partial
      // block's buffer is cast to the same strided type.
      MemRefType viewType = inPlaceViewType(mem, block, bufType);
      auto ifOp = scf::IfOp::create(
          rewriter, loc, bounds.inBounds,
          [&](OpBuilder &b, Location loc) {
            Value view = memref::SubViewOp::create(b, loc, mem, offsets,
                                                   staticSizes(b, block),
                                                   unitStrides(b, rank));
            if (view.getType() != viewType)
              view = memref::CastOp::create(b, loc, viewType, view);
            scf::YieldOp::create(
                b, loc,
                bufferization::ToTensorOp::create(b, loc, resultType, view,
                                                  /*restrict=*/true)
                    .getResult());
          },
          [&](OpBuilder &b, Location loc) {
            Value buf = memref::AllocOp::create(b, loc, bufType,
                                                b.getI64IntegerAttr(64));
            fillPartial(b, loc, buf);
            Value cast = memref::CastOp::create(b, loc, viewType, buf);
            scf::YieldOp::create(
                b, loc,
                bufferization::ToTensorOp::create(b, loc, resultType, cast,
                                                  /*restrict=*/true)
                    .getResult());
          });
      rewriter.replaceOp(op, ifOp.getResults());
      return success();
    }

    Value buf = memref::AllocOp::create(rewriter, loc, bufType,
                                        rewriter.getI64IntegerAttr(64));
    scf::IfOp::create(
        rewriter, loc, bounds.inBounds,
        [&](OpBuilder &b, Location loc) {
          Value src = memref::SubViewOp::create(b, loc, mem, offsets,
                                                staticSizes(b, block),
                                                unitStrides(b, rank));
          copyBlock(b, loc, src, buf, perm);
          scf::YieldOp::create(b, loc);
        },
        [&](OpBuilder &b, Location loc) {
          fillPartial(b, loc, buf);
          scf::YieldOp::create(b, loc);
        });
    Value result = bufferization::ToTensorOp::create(
        rewriter, loc, resultType, buf, /*restrict=*/true, /*writable=*/true);
    rewriter.replaceOp(op, result);
    return success();
  }

private:
  const DenseSet<Operation *> &inPlace;
};

struct StoreLowering : OpConversionPattern<StoreOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(StoreOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value mem = adaptor.getArray();
    Value value = adaptor.getValue();
    auto valueType = cast<RankedTensorType>(value.getType());
    ArrayRef<int64_t> block = valueType.getShape();
    unsigned rank = block.size();
    BlockBounds bounds =
        computeBounds(rewriter, loc, mem, adaptor.getIndices(), block);
    scf::IfOp::create(
        rewriter, loc, bounds.inBounds,
        [&](OpBuilder &b, Location loc) {
          SmallVector<OpFoldResult> offsets(bounds.origin.begin(),
                                            bounds.origin.end());
          Value dst = memref::SubViewOp::create(b, loc, mem, offsets,
                                                staticSizes(b, block),
                                                unitStrides(b, rank));
          bufferization::MaterializeInDestinationOp::create(
              b, loc, Type(), value, dst, /*restrict=*/true,
              /*writable=*/true);
          scf::YieldOp::create(b, loc);
        },
        [&](OpBuilder &b, Location loc) {
          BlockPart part = computePart(b, loc, bounds, block);
          Value slice = tensor::ExtractSliceOp::create(
              b, loc, value, part.lo, part.size, unitStrides(b, rank));
          Value dst = memref::SubViewOp::create(b, loc, mem, part.arrayOffset,
                                                part.size,
                                                unitStrides(b, rank));
          bufferization::MaterializeInDestinationOp::create(
              b, loc, Type(), slice, dst, /*restrict=*/true,
              /*writable=*/true);
          scf::YieldOp::create(b, loc);
        });
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Loads that need no copy
//===----------------------------------------------------------------------===//

bool isMemoryWrite(Operation *op) {
  return isa<StoreOp, ScatterOp, AtomicRMWOp, AtomicCASOp, CallOpInterface>(
      op);
}

/// Whether `op` or an op nested in it may write memory.
bool mayWriteMemory(Operation *op) {
  WalkResult result = op->walk([](Operation *inner) {
    return isMemoryWrite(inner) ? WalkResult::interrupt()
                                : WalkResult::advance();
  });
  return result.wasInterrupted();
}

/// Ops whose result may share the operand's buffer after bufferization.
bool isView(Operation *op) {
  return isa<ReshapeOp, ExpandDimsOp, ConvertLayoutOp, tensor::ExtractSliceOp,
             tensor::ExpandShapeOp, tensor::CollapseShapeOp, tensor::CastOp>(
      op);
}

/// A load may read the array in place (a view instead of a copy) when no
/// write can come between it and the last read of the data. Reads happen
/// wherever a value computed from the load is used, since later passes may
/// fuse a computation into its consumers; values are followed through the
/// block, into nested regions (whose op then counts as the use), and views
/// must not escape through terminators or feed writes (which could then
/// copy between overlapping arrays).
bool canLoadInPlace(LoadOp load) {
  if (load.getOrder())
    return false; // a transposing copy is needed anyway
  Block *block = load->getBlock();
  Operation *last = load;
  SmallVector<std::pair<Value, bool>> work{{load.getResult(), true}};
  DenseSet<Value> seen;
  while (!work.empty()) {
    auto [value, isViewOfLoad] = work.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    for (Operation *user : value.getUsers()) {
      if (isViewOfLoad && (isMemoryWrite(user) ||
                           user->hasTrait<OpTrait::IsTerminator>()))
        return false;
      Operation *anchor = block->findAncestorOpInBlock(*user);
      if (!anchor)
        return false;
      if (last->isBeforeInBlock(anchor))
        last = anchor;
      bool view = isViewOfLoad && anchor == user && isView(user);
      for (Value result : anchor->getResults())
        work.push_back({result, view});
    }
  }
  if (last != load && last->getNumRegions() > 0 && mayWriteMemory(last))
    return false;
  for (Operation *op = load->getNextNode(); op && op != last;
       op = op->getNextNode())
    if (mayWriteMemory(op))
      return false;
  return true;
}

} // namespace

DenseSet<Operation *> host::findInPlaceLoads(ModuleOp module) {
  DenseSet<Operation *> loads;
  module.walk([&](LoadOp load) {
    if (canLoadInPlace(load))
      loads.insert(load);
  });
  return loads;
}

namespace {

//===----------------------------------------------------------------------===//
// Element-indexed access
//===----------------------------------------------------------------------===//

/// One lane of an element-indexed access: its coordinates in the array and
/// whether it is performed (in bounds and not masked off).
struct Lane {
  SmallVector<Value> coords;
  Value active;
};

Lane computeLane(OpBuilder &b, Location loc, ValueRange indexTiles,
                 ArrayRef<Value> extents, Value mask, ValueRange ivs) {
  Lane lane;
  Value zero = indexConst(b, loc, 0);
  if (mask)
    lane.active = tensor::ExtractOp::create(b, loc, mask, ivs);
  for (auto [d, tile] : llvm::enumerate(indexTiles)) {
    Value c = toIndex(b, loc, tensor::ExtractOp::create(b, loc, tile, ivs));
    Value lowOk =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, c, zero);
    Value highOk = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, c,
                                         extents[d]);
    Value ok = arith::AndIOp::create(b, loc, lowOk, highOk);
    lane.active =
        lane.active ? arith::AndIOp::create(b, loc, lane.active, ok) : ok;
    lane.coords.push_back(c);
  }
  return lane;
}

SmallVector<Value> arrayExtents(OpBuilder &b, Location loc, Value mem) {
  SmallVector<Value> extents;
  for (int64_t d = 0, e = cast<MemRefType>(mem.getType()).getRank(); d < e;
       ++d)
    extents.push_back(memref::DimOp::create(b, loc, mem, d));
  return extents;
}

struct GatherLowering : OpConversionPattern<GatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(GatherOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value mem = adaptor.getArray();
    Type elem = getElementTypeOrSelf(op.getType());
    SmallVector<Value> extents = arrayExtents(rewriter, loc, mem);
    Value mask = adaptor.getMask(), other = adaptor.getOther();
    ValueRange indices = adaptor.getIndices();
    auto gen = tensor::GenerateOp::create(
        rewriter, loc, op.getType(), ValueRange{},
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          Lane lane = computeLane(b, loc, indices, extents, mask, ivs);
          auto ifOp = scf::IfOp::create(
              b, loc, lane.active,
              [&](OpBuilder &b, Location loc) {
                Value v = memref::LoadOp::create(b, loc, mem, lane.coords);
                scf::YieldOp::create(b, loc, v);
              },
              [&](OpBuilder &b, Location loc) {
                Value v = other ? tensor::ExtractOp::create(b, loc, other, ivs)
                                      .getResult()
                                : zeroOf(b, loc, elem);
                scf::YieldOp::create(b, loc, v);
              });
          tensor::YieldOp::create(b, loc, ifOp.getResult(0));
        });
    rewriter.replaceOp(op, gen.getResult());
    return success();
  }
};

struct ScatterLowering : OpConversionPattern<ScatterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ScatterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value mem = adaptor.getArray();
    Value value = adaptor.getValue(), mask = adaptor.getMask();
    SmallVector<Value> extents = arrayExtents(rewriter, loc, mem);
    ValueRange indices = adaptor.getIndices();
    auto shape = cast<RankedTensorType>(value.getType()).getShape();
    buildLoopNest(rewriter, loc, shape,
                  [&](OpBuilder &b, Location loc, ValueRange ivs) {
                    Lane lane =
                        computeLane(b, loc, indices, extents, mask, ivs);
                    auto ifOp = scf::IfOp::create(b, loc, lane.active);
                    OpBuilder::InsertionGuard guard(b);
                    b.setInsertionPointToStart(ifOp.thenBlock());
                    Value v = tensor::ExtractOp::create(b, loc, value, ivs);
                    memref::StoreOp::create(b, loc, v, mem, lane.coords);
                  });
    rewriter.eraseOp(op);
    return success();
  }
};

std::string casFunctionName(unsigned bits) {
  return "__tile_cas_" + std::to_string(bits);
}

/// The memref.atomic_rmw kind of a tile atomic on `type` elements. Integer
/// max/min are signed, umax/umin unsigned: the IR's integers are signless.
arith::AtomicRMWKind rmwKind(AtomicKind kind, Type type) {
  bool isFloat = isa<FloatType>(type);
  switch (kind) {
  case AtomicKind::add:
    return isFloat ? arith::AtomicRMWKind::addf : arith::AtomicRMWKind::addi;
  case AtomicKind::max:
    return isFloat ? arith::AtomicRMWKind::maximumf
                   : arith::AtomicRMWKind::maxs;
  case AtomicKind::min:
    return isFloat ? arith::AtomicRMWKind::minimumf
                   : arith::AtomicRMWKind::mins;
  case AtomicKind::umax:
    return arith::AtomicRMWKind::maxu;
  case AtomicKind::umin:
    return arith::AtomicRMWKind::minu;
  case AtomicKind::xchg:
    return arith::AtomicRMWKind::assign;
  case AtomicKind::and_:
    return arith::AtomicRMWKind::andi;
  case AtomicKind::or_:
    return arith::AtomicRMWKind::ori;
  case AtomicKind::xor_:
    return arith::AtomicRMWKind::xori;
  }
  llvm_unreachable("unknown atomic kind");
}

/// Atomics run lane by lane, recording old values in a zero-filled buffer
/// (lanes not performed read 0).
template <typename OpTy>
struct AtomicLowering : OpConversionPattern<OpTy> {
  using OpConversionPattern<OpTy>::OpConversionPattern;
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  /// Emits values the lanes share, once, before the loops.
  virtual SmallVector<Value> prepare(OpBuilder &b, Location loc,
                                     Value mem) const {
    return {};
  }
  /// Updates `mem[coords]` for lane `ivs`; returns the old value.
  virtual Value update(OpBuilder &b, Location loc, OpAdaptor adaptor,
                       Value mem, ArrayRef<Value> shared, ValueRange coords,
                       ValueRange ivs) const = 0;
  virtual Value getMask(OpAdaptor adaptor) const { return Value(); }

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value mem = adaptor.getArray();
    auto type = cast<RankedTensorType>(op.getType());
    SmallVector<Value> extents = arrayExtents(rewriter, loc, mem);
    SmallVector<Value> shared = prepare(rewriter, loc, mem);
    auto bufType = MemRefType::get(type.getShape(), type.getElementType());
    Value buf = memref::AllocOp::create(rewriter, loc, bufType,
                                        rewriter.getI64IntegerAttr(64));
    linalg::FillOp::create(rewriter, loc,
                           ValueRange{zeroOf(rewriter, loc,
                                             type.getElementType())},
                           ValueRange{buf});
    Value mask = getMask(adaptor);
    ValueRange indices = adaptor.getIndices();
    buildLoopNest(rewriter, loc, type.getShape(),
                  [&](OpBuilder &b, Location loc, ValueRange ivs) {
                    Lane lane =
                        computeLane(b, loc, indices, extents, mask, ivs);
                    auto ifOp = scf::IfOp::create(b, loc, lane.active);
                    OpBuilder::InsertionGuard guard(b);
                    b.setInsertionPointToStart(ifOp.thenBlock());
                    Value old = update(b, loc, adaptor, mem, shared,
                                       lane.coords, ivs);
                    memref::StoreOp::create(b, loc, old, buf, ivs);
                  });
    Value result = bufferization::ToTensorOp::create(
        rewriter, loc, type, buf, /*restrict=*/true, /*writable=*/true);
    rewriter.replaceOp(op, result);
    return success();
  }
};

struct AtomicRMWLowering : AtomicLowering<AtomicRMWOp> {
  using AtomicLowering::AtomicLowering;
  Value getMask(OpAdaptor adaptor) const override { return adaptor.getMask(); }
  Value update(OpBuilder &b, Location loc, OpAdaptor adaptor, Value mem,
               ArrayRef<Value>, ValueRange coords,
               ValueRange ivs) const override {
    Value v = tensor::ExtractOp::create(b, loc, adaptor.getValue(), ivs);
    return memref::AtomicRMWOp::create(
        b, loc, rmwKind(adaptor.getKind(), v.getType()), v, mem, coords);
  }
};

/// Compare-and-swap through the runtime's __tile_cas_<bits>(address, cmp,
/// value): the memref dialect's only CAS, generic_atomic_rmw, has a region
/// buffer deallocation cannot analyze, and it rejects llvm.cmpxchg's unknown
/// memory effects.
struct AtomicCASLowering : AtomicLowering<AtomicCASOp> {
  using AtomicLowering::AtomicLowering;

  /// The aligned base address, the offset, then the strides.
  SmallVector<Value> prepare(OpBuilder &b, Location loc,
                             Value mem) const override {
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, mem);
    SmallVector<Value> shared{
        memref::ExtractAlignedPointerAsIndexOp::create(b, loc, mem),
        meta.getOffset()};
    llvm::append_range(shared, meta.getStrides());
    return shared;
  }

  Value update(OpBuilder &b, Location loc, OpAdaptor adaptor, Value mem,
               ArrayRef<Value> shared, ValueRange coords,
               ValueRange ivs) const override {
    Value base = shared[0], offset = shared[1];
    ArrayRef<Value> strides = shared.drop_front(2);
    Type elem = cast<MemRefType>(mem.getType()).getElementType();
    unsigned bits = elem.getIntOrFloatBitWidth();
    Value linear = offset;
    for (auto [c, stride] : llvm::zip(coords, strides))
      linear = arith::AddIOp::create(
          b, loc, linear, arith::MulIOp::create(b, loc, c, stride));
    Value address = arith::AddIOp::create(
        b, loc, base,
        arith::MulIOp::create(b, loc, linear, indexConst(b, loc, bits / 8)));
    address = arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
    Value cmp = tensor::ExtractOp::create(b, loc, adaptor.getCmp(), ivs);
    Value v = tensor::ExtractOp::create(b, loc, adaptor.getValue(), ivs);
    // CAS compares bits: floats go through integers of their width.
    Type bitsType = b.getIntegerType(bits);
    if (isa<FloatType>(elem)) {
      cmp = arith::BitcastOp::create(b, loc, bitsType, cmp);
      v = arith::BitcastOp::create(b, loc, bitsType, v);
    }
    // Declared by declareCasFunctions before the conversion.
    Value old = func::CallOp::create(b, loc, casFunctionName(bits),
                                     TypeRange{bitsType},
                                     ValueRange{address, cmp, v})
                    .getResult(0);
    if (isa<FloatType>(elem))
      old = arith::BitcastOp::create(b, loc, elem, old);
    return old;
  }
};

//===----------------------------------------------------------------------===//
// Array metadata
//===----------------------------------------------------------------------===//

struct DimLowering : OpConversionPattern<DimOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(DimOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Value extent = memref::DimOp::create(rewriter, op.getLoc(),
                                         adaptor.getArray(), op.getDim());
    rewriter.replaceOpWithNewOp<arith::IndexCastOp>(op, op.getType(), extent);
    return success();
  }
};

struct StrideLowering : OpConversionPattern<StrideOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(StrideOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto meta = memref::ExtractStridedMetadataOp::create(
        rewriter, op.getLoc(), adaptor.getArray());
    rewriter.replaceOpWithNewOp<arith::IndexCastOp>(
        op, op.getType(), meta.getStrides()[op.getDim()]);
    return success();
  }
};

/// `array_slice`: a memref.subview at the clamped [start, stop) of the axis.
struct ArraySliceLowering : OpConversionPattern<ArraySliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ArraySliceOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value mem = adaptor.getArray();
    auto type = cast<MemRefType>(mem.getType());
    int64_t axis = op.getAxis();
    Value zero = indexConst(rewriter, loc, 0);
    Value extent = memref::DimOp::create(rewriter, loc, mem, axis);
    auto clamp = [&](Value v, Value lo) -> Value {
      v = arith::MaxSIOp::create(rewriter, loc, toIndex(rewriter, loc, v), lo);
      return arith::MinSIOp::create(rewriter, loc, v, extent);
    };
    Value start = clamp(adaptor.getStart(), zero);
    Value stop = clamp(adaptor.getStop(), start);
    SmallVector<OpFoldResult> offsets, sizes,
        strides(type.getRank(), rewriter.getIndexAttr(1));
    for (int64_t d = 0; d < type.getRank(); ++d) {
      bool sliced = d == axis;
      offsets.push_back(sliced ? OpFoldResult(start)
                               : rewriter.getIndexAttr(0));
      sizes.push_back(
          sliced
              ? OpFoldResult(arith::SubIOp::create(rewriter, loc, stop, start)
                                 .getResult())
              : OpFoldResult(
                    memref::DimOp::create(rewriter, loc, mem, d).getResult()));
    }
    Value view =
        memref::SubViewOp::create(rewriter, loc, mem, offsets, sizes, strides);
    Type want = getTypeConverter()->convertType(op.getType());
    if (view.getType() != want)
      view = memref::CastOp::create(rewriter, loc, want, view);
    rewriter.replaceOp(op, view);
    return success();
  }
};

/// `raw_view`: the memref reinterpreted as 1-d from its offset, unbounded.
struct RawViewLowering : OpConversionPattern<RawViewOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(RawViewOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto meta = memref::ExtractStridedMetadataOp::create(rewriter, loc,
                                                         adaptor.getArray());
    auto want = cast<MemRefType>(getTypeConverter()->convertType(op.getType()));
    rewriter.replaceOpWithNewOp<memref::ReinterpretCastOp>(
        op, want, adaptor.getArray(), OpFoldResult(meta.getOffset()),
        ArrayRef<OpFoldResult>{
            rewriter.getIndexAttr(std::numeric_limits<int64_t>::max())},
        ArrayRef<OpFoldResult>{rewriter.getIndexAttr(1)});
    return success();
  }
};

/// `array_select`: a chain of memref selects, element k taken when
/// index >= k, which clamps the index into the list.
struct ArraySelectLowering : OpConversionPattern<ArraySelectOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ArraySelectOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value index = adaptor.getIndex();
    ValueRange arrays = adaptor.getArrays();
    Value chosen = arrays.front();
    for (auto [k, mem] : llvm::enumerate(arrays.drop_front())) {
      Value bound = arith::ConstantOp::create(
          rewriter, loc, rewriter.getIntegerAttr(index.getType(), k + 1));
      Value take = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::sge, index, bound);
      chosen = arith::SelectOp::create(rewriter, loc, take, mem, chosen);
    }
    rewriter.replaceOp(op, chosen);
    return success();
  }
};

} // namespace

void host::declareCasFunctions(ModuleOp module) {
  SmallVector<unsigned> widths;
  module.walk([&](AtomicCASOp op) {
    unsigned bits = op.getArray().getType().getElementType().getIntOrFloatBitWidth();
    if (!llvm::is_contained(widths, bits))
      widths.push_back(bits);
  });
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  for (unsigned bits : widths) {
    std::string name = casFunctionName(bits);
    if (module.lookupSymbol(name))
      continue;
    Type t = b.getIntegerType(bits);
    auto decl = func::FuncOp::create(
        b, module.getLoc(), name,
        b.getFunctionType({b.getI64Type(), t, t}, {t}));
    decl.setPrivate();
  }
}

void host::populateMemoryPatterns(TypeConverter &converter,
                                  RewritePatternSet &patterns,
                                  const DenseSet<Operation *> &inPlaceLoads) {
  patterns.add<LoadLowering>(converter, patterns.getContext(), inPlaceLoads);
  patterns.add<StoreLowering, GatherLowering, ScatterLowering,
               AtomicRMWLowering, AtomicCASLowering, DimLowering,
               StrideLowering, ArraySliceLowering, RawViewLowering,
               ArraySelectLowering>(converter, patterns.getContext());
}
