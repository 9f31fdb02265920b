//===- TileToGpuWgmma.cpp - tile.mma as sm_90 warpgroup mma ---------------===//
//
// A tilegpu.mma with a warpgroup tiling whose A and B are slots of swizzled
// shared buffers (tile-pipeline-mma's rings) becomes, per iteration:
//
//   wgmma.fence
//   wgmma.mma_async.m64nNk16 per 16 of K (m64nNk32 per 32 for fp8 and
//     int8, m64nNk8 per 8 for tf32) and per 64-row block of the warpgroup,
//     operands read through shared-memory descriptors (fp8, tf32, int8:
//     B K-major, as A)
//   wgmma.commit_group; wgmma.wait_group 1
//
// so one iteration's wgmmas run while the next iteration waits for its
// copies (`in_flight`); the ring refills the slot two iterations back, and
// the wgmma still in flight after the loop is waited for there
// (tilegpu.wait_mma). When the body reads the accumulator (an scf.if on it,
// a scaling), the wait is wait_group 0 through the registers instead, and
// the ring keeps one more iteration ahead.
//
// Attention-shaped loops (A in registers: Q's fragments hoisted in front of
// the loop, or P from the chained mma; B = K^T or V from the ring) use
// wgmma's register-A form through inline asm (the NVVM op only takes A from
// shared memory) and wait for each result, which the softmax reads next
// (or, `in_flight`, leave the wait to a tilegpu.wait_mma).
//
// The accumulator keeps the #tile.mma layout of mma.sync with warps
// [4w, 1]: warp 4g + x of warpgroup g holds rows 64g + 16x (+ 16 * 4w * i)
// of every column, which is wgmma's m64nN fragment of block (g, i).
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

/// A wgmma matrix descriptor of a swizzled operand. The low word (start
/// address >> 4, leading byte offset >> 4) is computed in 32 bits; the high
/// word (stride byte offset >> 4, swizzle mode 1: 128B, 2: 64B) is a
/// constant joined to it only at each use. ptxas (CUDA 13.0) dropped the
/// high word of a 64-bit descriptor to which a warpgroup's offset was
/// added (the M-major A of the staged operands read no swizzle and no
/// stride offset on the H200).
struct MatrixDescriptor {
  Value low;
  uint32_t high;

  MatrixDescriptor(OpBuilder &b, Location loc, Value addr, int64_t leadingBytes,
                   int64_t strideBytes, int64_t swizzle = 128)
      : high(uint32_t(strideBytes >> 4) | uint32_t(swizzle == 128 ? 1 : 2)
                                              << 30) {
    Value start = arith::AndIOp::create(
        b, loc, arith::ShRUIOp::create(b, loc, addr, constI32(b, loc, 4)),
        constI32(b, loc, 0x3FFF));
    low = arith::OrIOp::create(
        b, loc, start, constI32(b, loc, int32_t(leadingBytes >> 4 << 16)));
  }

  /// Moves the start address by `offset` (i32, in 16-byte units).
  void advanceBy(OpBuilder &b, Location loc, Value offset) {
    low = arith::AddIOp::create(b, loc, low, offset);
  }

  /// The i64 descriptor `bytes` (a multiple of 16) further on, within the
  /// 14-bit start address field.
  Value at(OpBuilder &b, Location loc, int64_t bytes = 0) const {
    Value start =
        bytes ? arith::AddIOp::create(b, loc, low, constI32(b, loc, bytes >> 4))
                    .getResult()
              : low;
    Value pair = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, b.getI32Type()),
        ValueRange{start, constI32(b, loc, int32_t(high))});
    return LLVM::BitcastOp::create(b, loc, b.getI64Type(), pair);
  }
};

/// The accumulator registers of an mma with warps [numWarps, 1], grouped
/// by 64-row block in wgmma's order d[4j + q]: `index[i][4j + q]` is the
/// position in the per-thread vector.
SmallVector<SmallVector<int64_t>> blockRegisters(const LinearLayout &acc,
                                                 int64_t m, int64_t n,
                                                 int64_t numWarps) {
  DenseMap<std::pair<int64_t, int64_t>, int64_t> regOf;
  for (int64_t r = 0; r < acc.getNumRegs(); ++r) {
    auto c = acc.regCoord(r);
    regOf[{c[0], c[1]}] = r;
  }
  SmallVector<SmallVector<int64_t>> index(m / (16 * numWarps));
  for (auto [i, regs] : llvm::enumerate(index))
    for (int64_t j = 0; j < n / 8; ++j)
      for (int64_t q = 0; q < 4; ++q)
        regs.push_back(regOf.lookup(
            {16 * numWarps * int64_t(i) + 8 * (q >> 1), 8 * j + (q & 1)}));
  return index;
}

/// One wgmma.m64nNk16 with A from four 32-bit registers and B through
/// `bDesc`, accumulating into `acc` (N/2 f32): tile.ptx.wgmma_reg_a, since
/// the NVVM op only has the shared-memory form of A.
SmallVector<Value> wgmmaRegA(OpBuilder &b, Location loc, ValueRange acc,
                             ValueRange a, Value bDesc, int64_t n, Type type,
                             bool bKMajor) {
  auto op = PtxWgmmaRegAOp::create(b, loc, acc.getTypes(), acc, a, bDesc,
                                   uint64_t(n), type, bKMajor);
  return SmallVector<Value>(op.getResults());
}

/// What both lowerings read off the op and its buffers' types.
struct WarpgroupMma {
  RankedTensorType accType;
  LinearLayout accLayout;
  int64_t m, n, k, elemBytes, numWarps;
  Type inType;
  bool bKMajor;  // the buffer holds B^T
  bool inFlight; // the result is waited for later (tilegpu.wait_mma)
  bool deferred; // no wait at all: a tilegpu.wait_mma takes the result

  static FailureOr<WarpgroupMma> get(tilegpu::MmaOp op) {
    RankedTensorType aType = op.getATileType();
    auto accType = cast<RankedTensorType>(op.getType());
    FailureOr<LinearLayout> accLayout = toLinearLayout(accType);
    if (failed(accLayout))
      return failure();
    return WarpgroupMma{accType,
                        *accLayout,
                        accType.getDimSize(0),
                        accType.getDimSize(1),
                        aType.getDimSize(1),
                        storageBytes(aType.getElementType()),
                        op.getTilingAttr().getWarps()[0],
                        aType.getElementType(),
                        op.getBTransposed(),
                        op.getInFlight(),
                        op.getDeferred()};
  }
  /// K (A) or N (B) elements per 128-byte panel row.
  int64_t panelWidth() const { return 128 / elemBytes; }
};

} // namespace

LogicalResult mlir::tile::lowerWarpgroupMmaRegA(
    tilegpu::MmaOp op, Value acc,
    ArrayRef<SmallVector<SmallVector<Value>>> aFrags, Value bSlot,
    ConversionPatternRewriter &rewriter, const TypeConverter &converter,
    bool tiedFence) {
  Location loc = op.getLoc();
  FailureOr<WarpgroupMma> w = WarpgroupMma::get(op);
  if (failed(w))
    return failure();
  int64_t n = w->n, k = w->k, eb = w->elemBytes, panelWidth = w->panelWidth();
  bool bKMajor = w->bKMajor;

  // B = K^T: the loaded K block [n][k] is K-major (panels along k, n rows
  // each). B = V: the loaded block [k][n] is N-major (panels along n).
  Value bAddr =
      LLVM::PtrToIntOp::create(rewriter, loc, rewriter.getI32Type(), bSlot);
  MatrixDescriptor bDesc(rewriter, loc, bAddr, bKMajor ? 16 : k * 128, 1024);
  Type i32 = rewriter.getI32Type();
  auto asI32 = [&](Value v) -> Value {
    return v.getType() == i32
               ? v
               : LLVM::BitcastOp::create(rewriter, loc, i32, v).getResult();
  };
  SmallVector<SmallVector<int64_t>> index =
      blockRegisters(w->accLayout, w->m, n, w->numWarps);
  SmallVector<Value> regs = unpackVector(rewriter, loc, acc);
  SmallVector<SmallVector<Value>> blockAcc;
  for (ArrayRef<int64_t> block : index) {
    blockAcc.emplace_back();
    for (int64_t reg : block)
      blockAcc.back().push_back(regs[reg]);
  }
  // The fence carries every A fragment, so all are computed in front of
  // it: LLVM otherwise sank a fragment's arithmetic (P's conversion, fp8's
  // shuffles) between the wgmmas, ptxas injected a warpgroup.arrive before
  // each (C7519) and, where such a fence landed on a divergent path (the
  // persistent attention kernel), serialized every wgmma (C7520).
  SmallVector<Value> fragments;
  for (ArrayRef<SmallVector<Value>> step : aFrags)
    for (ArrayRef<Value> block : step)
      for (Value v : block)
        fragments.push_back(asI32(v));
  if (tiedFence || eb == 1) {
    auto fence = PtxWgmmaFenceOp::create(
        rewriter, loc, ValueRange(fragments).getTypes(), fragments);
    fragments.assign(fence.getResults().begin(), fence.getResults().end());
  } else {
    NVVM::WgmmaFenceAlignedOp::create(rewriter, loc);
  }
  auto fenced = fragments.begin();
  // 32 bytes of K per instruction (k16 for 16-bit types, k32 for fp8).
  int64_t kStep = 32 / eb;
  for (int64_t kk = 0; kk < k; kk += kStep) {
    int64_t bytes =
        bKMajor ? kk / panelWidth * n * 128 + kk % panelWidth * eb : kk * 128;
    Value b = bDesc.at(rewriter, loc, bytes);
    for (auto [i, block] : llvm::enumerate(blockAcc)) {
      SmallVector<Value> a;
      for (size_t r = 0; r < aFrags[kk / kStep][i].size(); ++r)
        a.push_back(*fenced++);
      block = wgmmaRegA(rewriter, loc, block, a, b, n, w->inType, bKMajor);
    }
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(rewriter, loc);
  SmallVector<Value> all;
  for (ArrayRef<Value> block : blockAcc)
    llvm::append_range(all, block);
  // In flight: a tilegpu.wait_mma after it takes the result (the ping-pong
  // schedule passes the turn between the commit and the wait).
  SmallVector<Value> done =
      w->inFlight || w->deferred ? all : waitCarrying(rewriter, loc, all, 0);
  int64_t next = 0;
  for (ArrayRef<int64_t> block : index)
    for (int64_t reg : block)
      regs[reg] = done[next++];
  rewriter.replaceOp(
      op, packVector(rewriter, loc, converter.convertType(w->accType), regs));
  return success();
}

LogicalResult mlir::tile::lowerWarpgroupMma(tilegpu::MmaOp op, Value acc,
                                            Value aSlot, Value bSlot,
                                            ConversionPatternRewriter &rewriter,
                                            const TypeConverter &converter) {
  Location loc = op.getLoc();
  MLIRContext *ctx = rewriter.getContext();
  FailureOr<WarpgroupMma> w = WarpgroupMma::get(op);
  if (failed(w))
    return failure();
  int64_t m = w->m, n = w->n, k = w->k, eb = w->elemBytes,
          numWarps = w->numWarps;
  Type i32 = rewriter.getI32Type();
  // A: K-major panels [m][64], 8-row groups 1024 bytes apart (the leading
  // offset is unused when swizzled). B: N-major panels [k][64], one panel
  // (k x 128 bytes) to the next along N, 8 rows of k 1024 bytes apart.
  // A's panels are as wide as its swizzle: 64 f16 of K (128B), or 32 when
  // K is 32 (64B rows, 8-row groups 512 bytes apart). A^T (a_transposed,
  // 16-bit types): M-major panels [k][64] as B's, 64 rows of A per panel.
  bool aMMajor = op.getATransposed();
  int64_t aSwizzle = aMMajor ? 128 : warpgroupSwizzle(k * eb);
  int64_t aWidth = aSwizzle / eb;
  Value aAddr = LLVM::PtrToIntOp::create(rewriter, loc, i32, aSlot);
  MatrixDescriptor aDesc =
      aMMajor
          ? MatrixDescriptor(rewriter, loc, aAddr, k * 128, 1024)
          : MatrixDescriptor(rewriter, loc, aAddr, 16, 8 * aSwizzle, aSwizzle);
  // The bytes from A's first row to row `row` (a multiple of 64).
  auto aRowBytes = [&](int64_t row) {
    return aMMajor ? row / 64 * k * 128 : row * aSwizzle;
  };
  // fp8 B^T: K-major [n][k] panels as A's (n rows each).
  bool bKMajor = w->bKMajor;
  int64_t bSwizzle = bKMajor ? aSwizzle : 128, bWidth = bSwizzle / eb;
  Value bAddr = LLVM::PtrToIntOp::create(rewriter, loc, i32, bSlot);
  MatrixDescriptor bDesc =
      bKMajor
          ? MatrixDescriptor(rewriter, loc, bAddr, 16, 8 * bSwizzle, bSwizzle)
          : MatrixDescriptor(rewriter, loc, bAddr, k * 128, 1024);
  // The warpgroup's first row: 64 rows per group. A staged operand's
  // mma runs every iteration with A invariant: its descriptors are derived
  // here, not held in registers across the loop.
  Value tid = aMMajor ? threadIdXInPlace(rewriter, loc)
                      : threadIdX(rewriter, loc);
  Value group = arith::DivUIOp::create(rewriter, loc, tid,
                                       constI32(rewriter, loc, 128));
  aDesc.advanceBy(
      rewriter, loc,
      arith::MulIOp::create(rewriter, loc, group,
                            constI32(rewriter, loc, aRowBytes(64) >> 4)));

  // Accumulator registers per 64-row block, in wgmma's order d[4j + q].
  SmallVector<SmallVector<int64_t>> index =
      blockRegisters(w->accLayout, m, n, numWarps);
  SmallVector<Value> regs = unpackVector(rewriter, loc, acc);
  // f32 accumulators, or s32 for int8.
  Type accElem = w->accType.getElementType();
  auto structType =
      LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(n / 2, accElem));
  SmallVector<Value> blockAcc;
  for (ArrayRef<int64_t> block : index) {
    Value s = LLVM::UndefOp::create(rewriter, loc, structType);
    for (auto [pos, reg] : llvm::enumerate(block))
      s = LLVM::InsertValueOp::create(rewriter, loc, s, regs[reg],
                                      ArrayRef<int64_t>{int64_t(pos)});
    blockAcc.push_back(s);
  }

  Type in = w->inType;
  NVVM::WGMMATypes type = in.isBF16()                 ? NVVM::WGMMATypes::bf16
                          : isa<Float8E4M3FNType>(in) ? NVVM::WGMMATypes::e4m3
                          : isa<Float8E5M2Type>(in)   ? NVVM::WGMMATypes::e5m2
                          : in.isF32()                ? NVVM::WGMMATypes::tf32
                          : in.isInteger(8)           ? NVVM::WGMMATypes::s8
                                                      : NVVM::WGMMATypes::f16;
  NVVM::WGMMATypes accWgmmaType =
      accElem.isInteger(32) ? NVVM::WGMMATypes::s32 : NVVM::WGMMATypes::f32;
  // 32 bytes of K per instruction: k16 for 16-bit types, k32 for fp8 and
  // int8, k8 for tf32.
  int64_t kStep = 32 / eb;
  NVVM::WgmmaFenceAlignedOp::create(rewriter, loc);
  for (int64_t kk = 0; kk < k; kk += kStep) {
    // K step kk: panel kk / 64 of A, 32 bytes per 16 columns within it
    // (A^T: rows kk.. of its panels); rows kk.. of every B panel (K-major
    // B: as A).
    int64_t aK =
        aMMajor ? kk * 128 : kk / aWidth * m * aSwizzle + kk % aWidth * eb;
    int64_t bK =
        bKMajor ? kk / bWidth * n * bSwizzle + kk % bWidth * eb : kk * 128;
    Value b = bDesc.at(rewriter, loc, bK);
    for (int64_t i = 0; i < int64_t(blockAcc.size()); ++i) {
      Value a = aDesc.at(rewriter, loc, aK + aRowBytes(16 * numWarps * i));
      blockAcc[i] = NVVM::WgmmaMmaAsyncOp::create(
          rewriter, loc, structType, blockAcc[i], a, b,
          NVVM::MMAShapeAttr::get(ctx, 64, n, kStep), type, type, accWgmmaType,
          NVVM::WGMMAScaleOut::one, NVVM::WGMMAScaleIn::one,
          NVVM::WGMMAScaleIn::one,
          aMMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row,
          bKMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row,
          /*satfinite=*/NVVM::MMAIntOverflowAttr());
    }
  }
  NVVM::WgmmaGroupSyncAlignedOp::create(rewriter, loc);
  if (w->inFlight)
    NVVM::WgmmaWaitGroupSyncOp::create(rewriter, loc, 1);

  for (auto [block, s] : llvm::zip(index, blockAcc))
    for (auto [pos, reg] : llvm::enumerate(block))
      regs[reg] = LLVM::ExtractValueOp::create(rewriter, loc, s,
                                               ArrayRef<int64_t>{int64_t(pos)});
  // Read in this iteration: the registers only after the wait, through it.
  // Deferred: a tilegpu.wait_mma does that where the result is first read.
  if (!w->inFlight && !w->deferred) {
    SmallVector<Value> all;
    for (ArrayRef<int64_t> block : index)
      for (int64_t reg : block)
        all.push_back(regs[reg]);
    SmallVector<Value> done = waitCarrying(rewriter, loc, all, 0);
    int64_t next = 0;
    for (ArrayRef<int64_t> block : index)
      for (int64_t reg : block)
        regs[reg] = done[next++];
  }
  rewriter.replaceOp(
      op, packVector(rewriter, loc, converter.convertType(w->accType), regs));
  return success();
}

SmallVector<Value> mlir::tile::waitCarrying(OpBuilder &b, Location loc,
                                            ValueRange values, int64_t group) {
  auto wait = PtxWgmmaWaitOp::create(b, loc, values.getTypes(), values, group);
  return SmallVector<Value>(wait.getResults());
}
