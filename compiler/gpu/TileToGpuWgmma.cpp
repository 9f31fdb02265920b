//===- TileToGpuWgmma.cpp - tile.mma as sm_90 warpgroup mma ---------------===//
//
// A tile.mma with a warpgroup tiling whose A and B sit in a cp.async ring of
// 128-byte swizzled panels (TileToGpuPrefetch.cpp) becomes, per iteration:
//
//   wgmma.fence
//   wgmma.mma_async.m64nNk16 per 16 of K and per 64-row block of the
//     warpgroup, operands read through shared-memory descriptors
//   wgmma.commit_group; wgmma.wait_group 1
//
// so one iteration's wgmmas run while the next iteration waits for its
// copies; the ring refills the slot two iterations back, and the wgmma
// still in flight after the loop is waited for there (emitRing).
//
// The accumulator keeps the #tile.mma layout of mma.sync with warps
// [4w, 1]: warp 4g + x of warpgroup g holds rows 64g + 16x (+ 16 * 4w * i)
// of every column, which is wgmma's m64nN fragment of block (g, i).
//
//===----------------------------------------------------------------------===//
#include "compiler/gpu/TileToGpuCommon.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// The 64-bit wgmma matrix descriptor of a 128B-swizzled operand at shared
/// address `addr` (i32): start address, leading and stride byte offsets,
/// swizzle mode 1 (128B). Offsets are encoded >> 4.
Value matrixDescriptor(OpBuilder &b, Location loc, Value addr,
                       int64_t leadingBytes, int64_t strideBytes) {
  Type i64 = b.getI64Type();
  Value start = arith::AndIOp::create(
      b, loc, arith::ShRUIOp::create(b, loc, addr, constI32(b, loc, 4)),
      constI32(b, loc, 0x3FFF));
  uint64_t fields = uint64_t(leadingBytes >> 4) << 16 |
                    uint64_t(strideBytes >> 4) << 32 | uint64_t(1) << 62;
  return arith::OrIOp::create(
      b, loc, arith::ExtUIOp::create(b, loc, i64, start),
      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(fields)));
}

/// `desc` advanced by `bytes` (a multiple of 16) within its 14-bit start
/// address field.
Value advance(OpBuilder &b, Location loc, Value desc, int64_t bytes) {
  if (!bytes)
    return desc;
  return arith::AddIOp::create(b, loc, desc,
                               arith::ConstantOp::create(
                                   b, loc, b.getI64IntegerAttr(bytes >> 4)));
}

} // namespace

LogicalResult mlir::tile::lowerWarpgroupMma(MmaOp op, Value acc,
                                            ArrayRef<int64_t> ring,
                                            ConversionPatternRewriter &rewriter,
                                            const TypeConverter &converter,
                                            GpuLoweringState &state) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  auto aType = cast<RankedTensorType>(op.getA().getType());
  auto accType = cast<RankedTensorType>(op.getType());
  FailureOr<LinearLayout> accLayout = toLinearLayout(accType);
  if (failed(accLayout))
    return failure();
  int64_t m = aType.getDimSize(0), k = aType.getDimSize(1),
          n = accType.getDimSize(1);
  Type inType = aType.getElementType();
  int64_t eb = storageBytes(inType);
  int64_t panelWidth = 128 / eb; // K (A) or N (B) elements per panel row
  int64_t numWarps = op.getTilingAttr().getWarps()[0];
  int64_t stages = ring[0], slotBytes = ring[1], aOffset = ring[2],
          bOffset = ring[3];
  state.needRing(stages * slotBytes);
  state.ringAlign = 1024;

  // This iteration's slot, as a shared-window address.
  Type i32 = rewriter.getI32Type();
  Value slot = ringSlot(rewriter, loc, op, 0, stages);
  Value slotAddr = arith::AddIOp::create(
      rewriter, loc,
      LLVM::PtrToIntOp::create(rewriter, loc, i32, ringBase(rewriter, loc)),
      arith::MulIOp::create(rewriter, loc, slot,
                            constI32(rewriter, loc, slotBytes)));
  // A: K-major panels [m][64], 8-row groups 1024 bytes apart (the leading
  // offset is unused when swizzled). B: N-major panels [k][64], one panel
  // (k x 128 bytes) to the next along N, 8 rows of k 1024 bytes apart.
  Value aDesc = matrixDescriptor(
      rewriter, loc,
      arith::AddIOp::create(rewriter, loc, slotAddr,
                            constI32(rewriter, loc, aOffset)),
      16, 1024);
  Value bDesc = matrixDescriptor(
      rewriter, loc,
      arith::AddIOp::create(rewriter, loc, slotAddr,
                            constI32(rewriter, loc, bOffset)),
      k * 128, 1024);
  // The warpgroup's first row: 64 rows of 128 bytes per group.
  Value group = arith::DivUIOp::create(rewriter, loc, warpId(rewriter, loc),
                                       constI32(rewriter, loc, 4));
  aDesc = arith::AddIOp::create(
      rewriter, loc, aDesc,
      arith::ExtUIOp::create(
          rewriter, loc, rewriter.getI64Type(),
          arith::MulIOp::create(rewriter, loc, group,
                                constI32(rewriter, loc, 64 * 128 >> 4))));

  // Accumulator registers per 64-row block, in wgmma's order d[4j + q].
  DenseMap<std::pair<int64_t, int64_t>, int64_t> regOf;
  for (int64_t r = 0; r < accLayout->getNumRegs(); ++r) {
    auto c = accLayout->regCoord(r);
    regOf[{c[0], c[1]}] = r;
  }
  int64_t blocks = m / (16 * numWarps);
  auto accReg = [&](int64_t i, int64_t j, int64_t q) {
    return regOf.lookup({16 * numWarps * i + 8 * (q >> 1), 8 * j + (q & 1)});
  };
  SmallVector<Value> regs = unpackVector(rewriter, loc, acc);
  Type f32 = rewriter.getF32Type();
  auto structType =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(n / 2, f32));
  SmallVector<Value> blockAcc;
  for (int64_t i = 0; i < blocks; ++i) {
    Value s = LLVM::UndefOp::create(rewriter, loc, structType);
    for (int64_t j = 0; j < n / 8; ++j)
      for (int64_t q = 0; q < 4; ++q)
        s = LLVM::InsertValueOp::create(rewriter, loc, s,
                                        regs[accReg(i, j, q)],
                                        ArrayRef<int64_t>{4 * j + q});
    blockAcc.push_back(s);
  }

  NVVM::WGMMATypes type =
      inType.isBF16() ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
  NVVM::WgmmaFenceAlignedOp::create(rewriter, loc);
  for (int64_t kk = 0; kk < k; kk += 16) {
    // K step kk: panel kk / 64 of A, 32 bytes per 16 columns within it;
    // rows kk.. of every B panel.
    int64_t aK = kk / panelWidth * m * 128 + kk % panelWidth * eb;
    Value b = advance(rewriter, loc, bDesc, kk * 128);
    for (int64_t i = 0; i < blocks; ++i) {
      Value a = advance(rewriter, loc, aDesc, aK + 16 * numWarps * i * 128);
      blockAcc[i] = NVVM::WgmmaMmaAsyncOp::create(
          rewriter, loc, structType, blockAcc[i], a, b,
          NVVM::MMAShapeAttr::get(ctx, 64, n, 16), type, type,
          NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
          NVVM::MMALayout::row, NVVM::MMALayout::row,
          /*satfinite=*/NVVM::MMAIntOverflowAttr());
    }
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(rewriter, loc);
  NVVM::WgmmaWaitGroupSyncOp::create(rewriter, loc, 1);

  for (int64_t i = 0; i < blocks; ++i)
    for (int64_t j = 0; j < n / 8; ++j)
      for (int64_t q = 0; q < 4; ++q)
        regs[accReg(i, j, q)] = LLVM::ExtractValueOp::create(
            rewriter, loc, blockAcc[i], ArrayRef<int64_t>{4 * j + q});
  rewriter.replaceOp(
      op, packVector(rewriter, loc, converter.convertType(accType), regs));
  return success();
}

void mlir::tile::waitForWgmmaResults(Operation *root) {
  SmallVector<NVVM::WgmmaWaitGroupSyncOp> waits;
  root->walk([&](NVVM::WgmmaWaitGroupSyncOp wait) {
    if (wait->hasAttr(kWgmmaResultsAttr))
      waits.push_back(wait);
  });
  for (NVVM::WgmmaWaitGroupSyncOp wait : waits) {
    auto loop = dyn_cast_or_null<scf::ForOp>(wait->getPrevNode());
    wait->removeAttr(kWgmmaResultsAttr);
    if (!loop)
      continue;
    OpBuilder b(wait);
    Location loc = wait.getLoc();
    // Every f32 element of the loop's vector results, through one asm
    // statement whose outputs are tied to its inputs.
    SmallVector<Value> results, scalars;
    llvm::DenseSet<Operation *> extracts;
    for (Value r : loop.getResults()) {
      auto type = dyn_cast<VectorType>(r.getType());
      if (!type || type.getRank() != 1 || !type.getElementType().isF32())
        continue;
      results.push_back(r);
      for (int64_t i = 0; i < type.getNumElements(); ++i)
        scalars.push_back(vector::ExtractOp::create(b, loc, r, i));
      for (int64_t i = 0; i < type.getNumElements(); ++i)
        extracts.insert(scalars[scalars.size() - 1 - i].getDefiningOp());
    }
    if (scalars.empty())
      continue;
    std::string constraints;
    for (size_t i = 0; i < scalars.size(); ++i)
      constraints += "=f,";
    for (size_t i = 0; i < scalars.size(); ++i)
      constraints += std::to_string(i) + (i + 1 < scalars.size() ? "," : "");
    MLIRContext *ctx = b.getContext();
    auto structType = LLVM::LLVMStructType::getLiteral(
        ctx, SmallVector<Type>(scalars.size(), b.getF32Type()));
    auto asmOp = LLVM::InlineAsmOp::create(
        b, loc, structType, scalars,
        "wgmma.wait_group.sync.aligned " +
            std::to_string(wait.getGroup()) + ";",
        constraints, /*has_side_effects=*/true, /*is_align_stack=*/false,
        LLVM::tailcallkind::TailCallKind::None,
        LLVM::AsmDialectAttr::get(ctx, LLVM::AsmDialect::AD_ATT), ArrayAttr());
    int64_t next = 0;
    for (Value r : results) {
      auto type = cast<VectorType>(r.getType());
      SmallVector<Value> elems;
      for (int64_t i = 0; i < type.getNumElements(); ++i)
        elems.push_back(LLVM::ExtractValueOp::create(
            b, loc, asmOp.getResult(0), ArrayRef<int64_t>{next++}));
      Value waited = vector::FromElementsOp::create(b, loc, type, elems);
      r.replaceUsesWithIf(waited, [&](OpOperand &use) {
        return !extracts.contains(use.getOwner());
      });
    }
    wait.erase();
  }
}
