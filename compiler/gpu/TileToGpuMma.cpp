//===- TileToGpuMma.cpp - tile.mma on tensor cores (or FMA) ---------------===//
//
// Operands go through shared memory (rows padded by 16 bytes so that the
// eight row addresses of an ldmatrix fall in distinct banks); each warp then
// loads its fragments with ldmatrix (16-bit and 8-bit inputs) or scalar
// loads (tf32) and issues mma.sync m16n8k{16,8,32} into the accumulator,
// which lives in the #tile.mma layout. Other cases use FMA from shared
// memory in the accumulator's blocked layout.
//
//===----------------------------------------------------------------------===//
#include "compiler/gpu/TileToGpuCommon.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <map>
#include <vector>

using namespace mlir;
using namespace mlir::tile;

namespace {

int64_t alignTo16(int64_t bytes) { return (bytes + 15) / 16 * 16; }

Value byteOffset(OpBuilder &b, Location loc, Value base, int64_t bytes) {
  return LLVM::GEPOp::create(
      b, loc, base.getType(), b.getI8Type(), base,
      ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(bytes)});
}

Value elemAddress(OpBuilder &b, Location loc, Value base, Type elemType,
                  Value index) {
  return LLVM::GEPOp::create(b, loc, base.getType(), elemType, base,
                             ValueRange{index});
}

/// Stages `value` (a distributed tile) into shared memory with `strides`.
void stage(OpBuilder &b, Location loc, Value base, Value value,
           RankedTensorType type, ArrayRef<int64_t> strides) {
  FailureOr<LinearLayout> layout = toLinearLayout(type);
  storeShared(b, loc, base, unpackVector(b, loc, value), type.getElementType(),
              *layout, strides);
}

/// The warp part of a coordinate: sum of the set warp bits' bases.
Value warpCoord(OpBuilder &b, Location loc, Value warp,
                const LinearLayout &layout, unsigned d) {
  Value sum = constI32(b, loc, 0);
  for (auto [bit, basis] : llvm::enumerate(layout.warps)) {
    if (basis[d] == 0)
      continue;
    Value one = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, warp, constI32(b, loc, bit)),
        constI32(b, loc, 1));
    sum = arith::OrIOp::create(
        b, loc, sum,
        arith::ShLIOp::create(b, loc, one,
                              constI32(b, loc, llvm::Log2_64(basis[d]))));
  }
  return sum;
}

/// The four 8-bit A fragment registers of rows `row0`.. (16 of them) and
/// columns `kk`..`kk` + 31 from a chained mma's result, which holds them
/// in the accumulator's layout: thread t of a quad has columns 2t, 2t + 1,
/// 8 + 2t and 9 + 2t of every 16, the fragment wants 4t..4t + 3. Each
/// thread packs its four bytes of a row and 16 columns into a word, takes
/// the words of quad threads 2t and 2t + 1 (mod 4), and keeps their low
/// halves (t < 2: columns 4t..4t + 3 lie in the first 8) or high halves.
static SmallVector<Value> fp8FragmentsFromAccumulator(
    OpBuilder &b, Location loc,
    const DenseMap<std::pair<int64_t, int64_t>, Value> &regs, int64_t row0,
    int64_t kk, Value t) {
  Type i8 = b.getI8Type(), i32 = b.getI32Type();
  Value lane = laneId(b, loc);
  Value quad = arith::AndIOp::create(b, loc, lane, constI32(b, loc, ~3));
  Value twoT = arith::ShLIOp::create(b, loc, t, constI32(b, loc, 1));
  auto sourceLane = [&](int64_t plus) -> Value {
    Value inQuad = arith::AndIOp::create(
        b, loc, arith::AddIOp::create(b, loc, twoT, constI32(b, loc, plus)),
        constI32(b, loc, 3));
    return arith::OrIOp::create(b, loc, quad, inQuad);
  };
  Value fromLo = sourceLane(0), fromHi = sourceLane(1);
  // prmt's byte selector: the low halves of both words (bytes 1,0 and 5,4)
  // for t < 2, the high halves (3,2 and 7,6) for t >= 2.
  Value selector = arith::AddIOp::create(
      b, loc, constI32(b, loc, 0x5410),
      arith::MulIOp::create(
          b, loc, arith::ShRUIOp::create(b, loc, t, constI32(b, loc, 1)),
          constI32(b, loc, 0x2222)));
  SmallVector<Value> frags;
  // a0: rows +0, columns +0; a1: rows +8; a2: columns +16; a3: both.
  for (int64_t reg = 0; reg < 4; ++reg) {
    int64_t row = row0 + 8 * (reg % 2), col = kk + 16 * (reg / 2);
    SmallVector<Value> bytes;
    for (int64_t c : {col, col + 1, col + 8, col + 9})
      bytes.push_back(
          arith::BitcastOp::create(b, loc, i8, regs.lookup({row, c})));
    Value word = LLVM::BitcastOp::create(
        b, loc, i32, packVector(b, loc, VectorType::get({4}, i8), bytes));
    auto shuffled = [&](Value from) -> Value {
      return gpu::ShuffleOp::create(b, loc, word, from, constI32(b, loc, 32),
                                    gpu::ShuffleMode::IDX)
          .getShuffleResult();
    };
    frags.push_back(NVVM::PermuteOp::create(b, loc, i32, shuffled(fromLo),
                                            shuffled(fromHi), selector,
                                            NVVM::PermuteMode::DEFAULT));
  }
  return frags;
}

struct TensorCoreMma {
  MmaKind kind;
  int64_t kStep; // k of one mma.sync
  NVVM::MMATypes ptxType;
  Type inType;
};

struct MmaPattern : StatefulPattern<MmaOp> {
  using StatefulPattern::StatefulPattern;

  LogicalResult
  matchAndRewrite(MmaOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MmaKind kind = getMmaKind(op);
    auto accType = cast<RankedTensorType>(op.getType());
    // A warpgroup tiling on registers runs as mma.sync with the same
    // layout (wgmma needs shared operands: tilegpu.mma).
    // fp8 runs only as wgmma from the ring (tile-tiling narrows the f16
    // mma of widened fp8 operands only where that path applies).
    if (kind == MmaKind::F8E4M3 || kind == MmaKind::F8E5M2)
      return op.emitOpError()
             << "with fp8 operands needs the sm_90 warpgroup path (A and B "
                "K-major in the cp.async ring); widen them to f16 otherwise";
    if (kind != MmaKind::Fma && isa<MmaLayoutAttr>(accType.getEncoding())) {
      TensorCoreOperands in;
      in.op = op;
      in.aType = cast<RankedTensorType>(op.getA().getType());
      in.bType = cast<RankedTensorType>(op.getB().getType());
      in.tiling = op.getTilingAttr();
      in.instrK = op.getTensorCoreShape()[2];
      in.a = adaptor.getA();
      in.b = adaptor.getB();
      in.acc = adaptor.getAcc();
      return lowerTensorCoreMma(in, kind, rewriter, *getTypeConverter(), state);
    }
    return lowerFma(op, adaptor, rewriter);
  }
  /// acc[i, j] += sum_k a[i, k] * b[k, j] per accumulator register, operands
  /// read from shared memory in a loop over k.
  LogicalResult lowerFma(MmaOp op, OpAdaptor adaptor,
                         ConversionPatternRewriter &rewriter) const {
    Location loc = op.getLoc();
    auto aType = cast<RankedTensorType>(op.getA().getType());
    auto bType = cast<RankedTensorType>(op.getB().getType());
    auto accType = cast<RankedTensorType>(op.getType());
    FailureOr<LinearLayout> accLayout = toLinearLayout(accType);
    if (failed(accLayout))
      return failure();
    unsigned rank = aType.getRank();
    unsigned o = rank - 2; // batch dims before
    int64_t k = aType.getDimSize(o + 1);
    Type inType = aType.getElementType(), accElem = accType.getElementType();
    // Narrow float accumulators add up in f32.
    Type compute = accElem;
    if (isa<FloatType>(accElem) && accElem.getIntOrFloatBitWidth() < 32)
      compute = rewriter.getF32Type();
    SmallVector<int64_t> aStrides = rowMajorStrides(aType.getShape());
    SmallVector<int64_t> bStrides = rowMajorStrides(bType.getShape());
    int64_t eb = storageBytes(inType);
    int64_t aBytes = alignTo16(aType.getNumElements() * eb);
    state.needShared(rewriter, aBytes + bType.getNumElements() * eb);
    Value base = sharedBase(rewriter, loc);
    Value aBase = base, bBase = byteOffset(rewriter, loc, base, aBytes);
    barrier(rewriter, loc);
    stage(rewriter, loc, aBase, adaptor.getA(), aType, aStrides);
    stage(rewriter, loc, bBase, adaptor.getB(), bType, bStrides);
    barrier(rewriter, loc);

    SmallVector<Value> tc = threadCoords(rewriter, loc, *accLayout);
    SmallVector<Value> init;
    for (Value v : unpackVector(rewriter, loc, adaptor.getAcc()))
      init.push_back(
          compute == accElem
              ? v
              : arith::ExtFOp::create(rewriter, loc, compute, v).getResult());
    auto extend = [&](OpBuilder &b, Value v) -> Value {
      if (v.getType() == compute)
        return v;
      if (isa<FloatType>(compute))
        return arith::ExtFOp::create(b, loc, compute, v);
      return arith::ExtSIOp::create(b, loc, compute, v);
    };
    auto loop = scf::ForOp::create(
        rewriter, loc, constI32(rewriter, loc, 0), constI32(rewriter, loc, k),
        constI32(rewriter, loc, 1), init,
        [&](OpBuilder &b, Location l, Value kv, ValueRange carried) {
          // Offsets of a[..., i, kv] and b[..., kv, j] per register; loads
          // are shared between registers with one row (column).
          std::map<std::vector<int64_t>, Value> aCache, bCache;
          SmallVector<Value> next;
          for (int64_t r = 0; r < accLayout->getNumRegs(); ++r) {
            auto rc = accLayout->regCoord(r);
            Value aOff = arith::MulIOp::create(b, l, kv,
                                               constI32(b, l, aStrides[o + 1]));
            Value bOff =
                arith::MulIOp::create(b, l, kv, constI32(b, l, bStrides[o]));
            std::vector<int64_t> aKey, bKey;
            for (unsigned d = 0; d < rank; ++d) {
              Value coord =
                  arith::AddIOp::create(b, l, tc[d], constI32(b, l, rc[d]));
              if (d < o || d == o) {
                aOff = arith::AddIOp::create(
                    b, l, aOff,
                    arith::MulIOp::create(b, l, coord,
                                          constI32(b, l, aStrides[d])));
                aKey.push_back(rc[d]);
              }
              if (d < o || d == o + 1) {
                unsigned bd = d < o ? d : o + 1;
                bOff = arith::AddIOp::create(
                    b, l, bOff,
                    arith::MulIOp::create(b, l, coord,
                                          constI32(b, l, bStrides[bd])));
                bKey.push_back(rc[d]);
              }
            }
            Value &av = aCache[aKey];
            if (!av)
              av = extend(
                  b, LLVM::LoadOp::create(
                         b, l, inType, elemAddress(b, l, aBase, inType, aOff)));
            Value &bv = bCache[bKey];
            if (!bv)
              bv = extend(
                  b, LLVM::LoadOp::create(
                         b, l, inType, elemAddress(b, l, bBase, inType, bOff)));
            Value c = carried[r];
            if (isa<FloatType>(compute))
              next.push_back(math::FmaOp::create(b, l, av, bv, c));
            else
              next.push_back(arith::AddIOp::create(
                  b, l, c, arith::MulIOp::create(b, l, av, bv)));
          }
          scf::YieldOp::create(b, l, next);
        });
    SmallVector<Value> out;
    for (Value v : loop.getResults())
      out.push_back(
          compute == accElem
              ? v
              : arith::TruncFOp::create(rewriter, loc, accElem, v).getResult());
    Type vecType = getTypeConverter()->convertType(accType);
    rewriter.replaceOp(op, packVector(rewriter, loc, vecType, out));
    return success();
  }
};

} // namespace

void mlir::tile::populateTileToGpuMmaPatterns(TypeConverter &converter,
                                              RewritePatternSet &patterns,
                                              GpuLoweringState &state) {
  patterns.add<MmaPattern>(converter, patterns.getContext(), state);
}

LogicalResult
mlir::tile::lowerTensorCoreMma(const TensorCoreOperands &in, MmaKind kind,
                               ConversionPatternRewriter &rewriter,
                               const TypeConverter &converter,
                               GpuLoweringState &state) {
  Operation *op = in.op;
  Location loc = op->getLoc();
  MLIRContext *ctx = rewriter.getContext();
  RankedTensorType aType = in.aType, bType = in.bType;
  auto accType = cast<RankedTensorType>(op->getResult(0).getType());
  FailureOr<LinearLayout> accLayout = toLinearLayout(accType);
  if (failed(accLayout))
    return failure();
  int64_t m = aType.getDimSize(0), k = aType.getDimSize(1),
          n = bType.getDimSize(1);
  Type inType = aType.getElementType();
  int64_t eb = storageBytes(inType);
  // The instruction shape tile-tiling recorded, else the types' own.
  MmaTilingAttr tiling = in.tiling;
  int64_t kStep = tiling ? tiling.getInstr()[2] : in.instrK;
  NVVM::MMATypes ptxType = kind == MmaKind::F16    ? NVVM::MMATypes::f16
                           : kind == MmaKind::BF16 ? NVVM::MMATypes::bf16
                           : kind == MmaKind::TF32 ? NVVM::MMATypes::tf32
                                                   : NVVM::MMATypes::s8;
  // Shared layout (getMmaSmemLayout): B transposed for int8 (ldmatrix
  // has no 8-bit transpose) and for 16-bit B whose registers run along k
  // (K^T in attention: stores stay vectorized, ldmatrix needs no .trans).
  FailureOr<LinearLayout> bLayout = toLinearLayout(bType);
  bool bTransposed =
      in.bShared
          ? in.bSharedTransposed
          : kind == MmaKind::I8 ||
                (kind != MmaKind::TF32 && succeeded(bLayout) &&
                 getContiguity(*bLayout, 0) > getContiguity(*bLayout, 1));
  MmaSmemLayout smem = getMmaSmemLayout(m, n, k, eb, bTransposed);
  int64_t aStride = smem.aStride, bStride = smem.bStride;
  int64_t aBytes = smem.aBytes;
  // Operands already in shared memory (tilegpu.mma): their buffers' rows.
  if (in.bShared)
    bStride = in.bStride;
  if (in.aShared)
    aStride = in.aStride;
  auto mmaAttr = cast<MmaLayoutAttr>(accType.getEncoding());
  int64_t wm = mmaAttr.getWarpsPerCTA()[0], wn = mmaAttr.getWarpsPerCTA()[1];
  // A already in the fragment layout (chained mma): no shared memory.
  DenseMap<std::pair<int64_t, int64_t>, Value> aRegs;
  if (auto aMma = dyn_cast_if_present<MmaLayoutAttr>(aType.getEncoding());
      aMma && kind != MmaKind::TF32 && kind != MmaKind::I8 &&
      aMma.getWarpsPerCTA()[1] == 1 &&
      aMma.getWarpsPerCTA() == mmaAttr.getWarpsPerCTA()) {
    FailureOr<LinearLayout> aLayout = toLinearLayout(aType);
    SmallVector<Value> elems = unpackVector(rewriter, loc, in.a);
    for (int64_t r = 0; r < aLayout->getNumRegs(); ++r) {
      auto c = aLayout->regCoord(r);
      aRegs[{c[0], c[1]}] = elems[r];
    }
  }
  // A loop-invariant A (Q in attention) is staged and read into fragment
  // registers once, in front of the loop.
  auto loop = dyn_cast<scf::ForOp>(op->getParentOp());
  bool hoistA =
      aRegs.empty() && !in.aShared && loop && loop.isDefinedOutsideOfLoop(in.a);
  OpBuilder::InsertionGuard guard(rewriter);
  if (hoistA)
    rewriter.setInsertionPoint(loop);
  // Scratch at the scratch base for what is staged here.
  if (!in.bShared)
    state.needShared(rewriter, aBytes + smem.bBytes);
  else if (aRegs.empty() && !in.aShared)
    state.needShared(rewriter, aBytes);
  Value base = sharedBase(rewriter, loc);
  Value aBase = base, bBase = byteOffset(rewriter, loc, base, aBytes);
  auto stageB = [&] {
    stage(rewriter, loc, bBase, in.b, bType,
          bTransposed ? SmallVector<int64_t>{1, bStride}
                      : SmallVector<int64_t>{bStride, 1});
  };
  if (!hoistA) {
    if (in.bShared) {
      bBase = in.bShared;
      if (in.aShared)
        aBase = in.aShared;
    }
    bool stageA = aRegs.empty() && !in.aShared;
    if (stageA || !in.bShared) {
      barrier(rewriter, loc);
      if (stageA)
        stage(rewriter, loc, aBase, in.a, aType, {aStride, 1});
      if (!in.bShared)
        stageB();
      barrier(rewriter, loc);
    }
  }

  int64_t repM = std::max<int64_t>(1, m / (16 * wm));
  int64_t repN = std::max<int64_t>(1, n / (8 * wn));
  Value lane = laneId(rewriter, loc), warp = warpId(rewriter, loc);
  Value rowW = warpCoord(rewriter, loc, warp, *accLayout, 0);
  Value colW = warpCoord(rewriter, loc, warp, *accLayout, 1);
  Value lane16 =
      arith::AndIOp::create(rewriter, loc, lane, constI32(rewriter, loc, 15));
  Value laneHi =
      arith::ShRUIOp::create(rewriter, loc, lane, constI32(rewriter, loc, 4));
  Value g =
      arith::ShRUIOp::create(rewriter, loc, lane, constI32(rewriter, loc, 2));
  Value t =
      arith::AndIOp::create(rewriter, loc, lane, constI32(rewriter, loc, 3));
  Type i32 = rewriter.getI32Type();
  auto add = [&](Value a, int64_t c) -> Value {
    return arith::AddIOp::create(rewriter, loc, a, constI32(rewriter, loc, c));
  };
  auto mul = [&](Value a, int64_t c) -> Value {
    return arith::MulIOp::create(rewriter, loc, a, constI32(rewriter, loc, c));
  };
  auto addV = [&](Value a, Value b) -> Value {
    return arith::AddIOp::create(rewriter, loc, a, b);
  };
  auto ldmatrix = [&](Value addr, int num, NVVM::MMALayout layout) {
    Type res = num == 1 ? i32
                        : LLVM::LLVMStructType::getLiteral(
                              ctx, SmallVector<Type>(num, i32));
    Value v =
        NVVM::LdMatrixOp::create(rewriter, loc, res, addr, num, layout,
                                 NVVM::LdStMatrixShapeAttr::get(ctx, 8, 8),
                                 NVVM::LdStMatrixEltType::B16);
    SmallVector<Value> regs;
    if (num == 1)
      return SmallVector<Value>{v};
    for (int i = 0; i < num; ++i)
      regs.push_back(
          LLVM::ExtractValueOp::create(rewriter, loc, v, ArrayRef<int64_t>{i}));
    return regs;
  };
  Type f32 = rewriter.getF32Type();
  auto lds32 = [&](Value regionBase, Value index) -> Value {
    Value v = LLVM::LoadOp::create(
        rewriter, loc, f32, elemAddress(rewriter, loc, regionBase, f32, index));
    // Rounded to nearest as cuBLAS and Triton do (the tensor core would
    // otherwise truncate the low 13 bits: twice the error).
    return NVVM::ConvertFloatToTF32Op::create(
        rewriter, loc, i32, v, NVVM::FPRoundingMode::RNA,
        NVVM::SaturationMode::NONE, /*relu=*/false);
  };

  auto aFragsAt = [&](int64_t kk) {
    // A fragments: a0..a3 per row block.
    SmallVector<SmallVector<Value>> aFrags(repM);
    for (int64_t i = 0; i < repM; ++i) {
      Value row = add(rowW, 16 * wm * i);
      if (kind == MmaKind::TF32) {
        Value r0 = addV(row, g), r8 = add(addV(row, g), 8);
        Value c0 = add(t, kk), c4 = add(t, kk + 4);
        auto at = [&](Value r, Value c) {
          return lds32(aBase, addV(mul(r, aStride), c));
        };
        aFrags[i] = {at(r0, c0), at(r8, c0), at(r0, c4), at(r8, c4)};
        continue;
      }
      if (!aRegs.empty() && storageBytes(inType) == 1) {
        aFrags[i] = fp8FragmentsFromAccumulator(rewriter, loc, aRegs,
                                                16 * wm * i, kk, t);
        continue;
      }
      if (!aRegs.empty()) {
        // Registers (row 8h, columns kk + 8q + {0, 1}) in ldmatrix order.
        for (int64_t q = 0; q < 2; ++q)
          for (int64_t h = 0; h < 2; ++h) {
            int64_t r0 = 16 * wm * i + 8 * h, c0 = kk + 8 * q;
            Value pairVec = packVector(
                rewriter, loc, VectorType::get({2}, inType),
                {aRegs.lookup({r0, c0}), aRegs.lookup({r0, c0 + 1})});
            aFrags[i].push_back(pairVec);
          }
        continue;
      }
      // Lane l addresses row l%16, column block l/16 (16 bytes each); 8-bit
      // types (int8, fp8: LLVM has no fp8 type) as bytes.
      Value r = addV(row, lane16);
      Value c = add(mul(laneHi, 16 / eb), kk);
      Value addr = elemAddress(rewriter, loc, aBase,
                               eb == 1 ? rewriter.getI8Type() : inType,
                               addV(mul(r, aStride), c));
      aFrags[i] = ldmatrix(addr, 4, NVVM::MMALayout::row);
    }
    return aFrags;
  };
  SmallVector<SmallVector<SmallVector<Value>>> hoisted;
  if (hoistA) {
    barrier(rewriter, loc);
    stage(rewriter, loc, aBase, in.a, aType, {aStride, 1});
    barrier(rewriter, loc);
    for (int64_t kk = 0; kk < k; kk += kStep)
      hoisted.push_back(aFragsAt(kk));
    rewriter.setInsertionPoint(op);
    if (in.bShared) {
      bBase = in.bShared;
    } else {
      barrier(rewriter, loc);
      stageB();
      barrier(rewriter, loc);
    }
  }

  // wgmma (sm_90) with A's fragments from registers, B from the ring.
  if (tiling && tiling.isWarpgroup() && in.bShared && !in.aShared &&
      kind != MmaKind::TF32) {
    SmallVector<SmallVector<SmallVector<Value>>> frags;
    for (int64_t kk = 0; kk < k; kk += kStep)
      frags.push_back(hoistA ? hoisted[kk / kStep] : aFragsAt(kk));
    return lowerWarpgroupMmaRegA(cast<tilegpu::MmaOp>(op), in.acc, frags,
                                 in.bShared, rewriter, converter,
                                 state.tiedWgmmaFence);
  }

  // Accumulator registers by (repM, repN, c), read off the layout.
  DenseMap<std::pair<int64_t, int64_t>, int64_t> regOf;
  for (int64_t r = 0; r < accLayout->getNumRegs(); ++r) {
    auto c = accLayout->regCoord(r);
    regOf[{c[0], c[1]}] = r;
  }
  auto accReg = [&](int64_t i, int64_t j, int64_t c) -> int64_t {
    int64_t row = 16 * wm * i + 8 * (c >> 1), col = 8 * wn * j + (c & 1);
    return regOf.lookup({row, col});
  };
  // An f16 accumulator adds up in f32 inside the instruction sequence.
  Type f32Type = f32;
  Type origElem = accType.getElementType();
  Type accElem = origElem.isF16() ? f32Type : origElem;
  SmallVector<Value> acc;
  for (Value v : unpackVector(rewriter, loc, in.acc))
    acc.push_back(
        v.getType() == accElem
            ? v
            : arith::ExtFOp::create(rewriter, loc, accElem, v).getResult());
  Type fragType =
      kind == MmaKind::F16 ? Type(VectorType::get({2}, inType)) : Type(i32);
  auto asFrag = [&](Value reg) -> Value {
    return reg.getType() == fragType
               ? reg
               : LLVM::BitcastOp::create(rewriter, loc, fragType, reg)
                     .getResult();
  };

  for (int64_t kk = 0; kk < k; kk += kStep) {
    SmallVector<SmallVector<Value>> aFrags =
        hoistA ? hoisted[kk / kStep] : aFragsAt(kk);
    // B fragments: b0, b1 per column block.
    SmallVector<SmallVector<Value>> bFrags(repN);
    for (int64_t j = 0; j < repN; ++j) {
      Value col = add(colW, 8 * wn * j);
      if (kind == MmaKind::TF32) {
        Value cn = addV(col, g);
        auto at = [&](int64_t dk) {
          return lds32(bBase, addV(mul(add(t, kk + dk), bStride), cn));
        };
        bFrags[j] = {at(0), at(4)};
        continue;
      }
      if (j % 2)
        continue;
      bool pair = j + 1 < repN;
      if (bTransposed) {
        // B^T rows are n: lanes 0-7 give k block 0, lanes 8-15 block 1 of
        // column block j; lanes 16-31 the same for block j + 1.
        Value l8 = arith::AndIOp::create(rewriter, loc, lane,
                                         constI32(rewriter, loc, 7));
        Value blk = arith::AndIOp::create(
            rewriter, loc,
            arith::ShRUIOp::create(rewriter, loc, lane,
                                   constI32(rewriter, loc, 3)),
            constI32(rewriter, loc, 1));
        Value rowN = addV(col, l8);
        if (pair)
          rowN = addV(rowN, mul(laneHi, 8 * wn));
        Value addr =
            elemAddress(rewriter, loc, bBase,
                        kind == MmaKind::I8 ? rewriter.getI8Type() : inType,
                        addV(mul(rowN, bStride), add(mul(blk, 16 / eb), kk)));
        SmallVector<Value> regs =
            ldmatrix(addr, pair ? 4 : 2, NVVM::MMALayout::row);
        bFrags[j] = {regs[0], regs[1]};
        if (pair)
          bFrags[j + 1] = {regs[2], regs[3]};
        continue;
      }
      // 16-bit: transposing ldmatrix on row-major B; lanes 0-15 address
      // k rows kk..kk+15 of column block j, lanes 16-31 those of block
      // j + 1, so one x4 load serves two column blocks.
      if (pair)
        col = addV(col, mul(laneHi, 8 * wn));
      Value addr = elemAddress(rewriter, loc, bBase, inType,
                               addV(mul(add(lane16, kk), bStride), col));
      SmallVector<Value> regs =
          ldmatrix(addr, pair ? 4 : 2, NVVM::MMALayout::col);
      bFrags[j] = {regs[0], regs[1]};
      if (pair)
        bFrags[j + 1] = {regs[2], regs[3]};
    }
    for (int64_t i = 0; i < repM; ++i)
      for (int64_t j = 0; j < repN; ++j) {
        SmallVector<Value> a, b, c;
        for (Value v : aFrags[i])
          a.push_back(asFrag(v));
        for (Value v : bFrags[j])
          b.push_back(asFrag(v));
        for (int64_t q = 0; q < 4; ++q)
          c.push_back(acc[accReg(i, j, q)]);
        Type resType = LLVM::LLVMStructType::getLiteral(
            ctx, SmallVector<Type>(4, accElem));
        std::optional<NVVM::MMAIntOverflow> overflow;
        if (kind == MmaKind::I8)
          overflow = NVVM::MMAIntOverflow::wrapped;
        Value res = NVVM::MmaOp::create(
            rewriter, loc, resType, a, b, c, {16, 8, kStep}, std::nullopt,
            overflow, std::array<NVVM::MMATypes, 2>{ptxType, ptxType},
            std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                           NVVM::MMALayout::col});
        for (int64_t q = 0; q < 4; ++q)
          acc[accReg(i, j, q)] = LLVM::ExtractValueOp::create(
              rewriter, loc, res, ArrayRef<int64_t>{q});
      }
  }
  if (accElem != origElem)
    for (Value &v : acc)
      v = arith::TruncFOp::create(rewriter, loc, origElem, v);
  Type vecType = converter.convertType(accType);
  rewriter.replaceOp(op, packVector(rewriter, loc, vecType, acc));
  return success();
}
