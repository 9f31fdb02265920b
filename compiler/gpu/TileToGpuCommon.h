//===- TileToGpuCommon.h - shared pieces of convert-tile-to-gpu ---*- C++
//-*-===//
//
// A tensor with a layout becomes the vector of the elements the calling
// thread owns, register r at position r (LinearLayout's register order).
// These helpers compute a thread's coordinates, move distributed values
// through shared memory, and shuffle across lanes.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_COMPILER_GPU_TILETOGPUCOMMON_H
#define TILE_COMPILER_GPU_TILETOGPUCOMMON_H

#include "compiler/MmaPipelining.h"
#include "compiler/gpu/LinearLayout.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Transforms/DialectConversion.h"

namespace mlir::tile {

/// tensor<...xT, #layout> -> vector<N x T> (N: elements per thread).
class TileGpuTypeConverter : public TypeConverter {
public:
  explicit TileGpuTypeConverter(MLIRContext *ctx);
};

/// What the patterns of one kernel conversion share.
struct GpuLoweringState {
  int numWarps = 4;
  /// Bytes of dynamic shared memory the kernel needs (max over uses: every
  /// use starts at offset 0 behind a barrier).
  int64_t sharedMem = 0;
  void needShared(int64_t bytes) { sharedMem = std::max(sharedMem, bytes); }
  /// Bytes of cp.async rings: they sit above every other use (placed once
  /// all of those are known, see ringBase), so no scratch use clobbers a
  /// slot that is being filled.
  int64_t ringMem = 0;
  void needRing(int64_t bytes) { ringMem = std::max(ringMem, bytes); }
  /// Alignment of the ring area: 1024 for wgmma's swizzled panels, whose
  /// pattern repeats every 1024 bytes from an aligned address.
  int64_t ringAlign = 16;
};

/// A conversion pattern that records what the kernel needs (shared memory)
/// or reads the launch shape (warps) in the lowering's state: the base of
/// the patterns that go through shared memory or across warps.
template <typename OpTy>
struct StatefulPattern : OpConversionPattern<OpTy> {
  StatefulPattern(TypeConverter &converter, MLIRContext *ctx,
                  GpuLoweringState &state)
      : OpConversionPattern<OpTy>(converter, ctx), state(state) {}
  GpuLoweringState &state;
};

/// The pieces a !tile.array kernel argument was expanded into.
struct ArrayParts {
  Value ptr;                  // !llvm.ptr<1>
  SmallVector<Value> extents; // i64
  SmallVector<Value> strides; // i64
};
/// Finds the parts of `array` (the result of the entry cast of the kernel).
FailureOr<ArrayParts> getArrayParts(Value array);

/// Name of the dynamic shared memory symbol in the gpu.module.
constexpr llvm::StringLiteral kSharedSymbol = "tile_shared";

Value constI32(OpBuilder &b, Location loc, int64_t v);
Value constI64(OpBuilder &b, Location loc, int64_t v);
Value threadIdX(OpBuilder &b, Location loc);
Value laneId(OpBuilder &b, Location loc);
Value warpId(OpBuilder &b, Location loc);

/// The lane/warp part of this thread's coordinate, per dimension (i32).
SmallVector<Value> threadCoords(OpBuilder &b, Location loc,
                                const LinearLayout &layout);
/// i1: this thread is the first of the replicas that hold its elements
/// (only it stores, so every element is written once).
Value isFirstReplica(OpBuilder &b, Location loc, const LinearLayout &layout);

/// Number of leading registers that are consecutive along `dim`.
int64_t getContiguity(const LinearLayout &layout, unsigned dim);

/// Elements of `vec` and a vector built from scalars.
SmallVector<Value> unpackVector(OpBuilder &b, Location loc, Value vec);
Value packVector(OpBuilder &b, Location loc, Type vecType, ValueRange elems);

/// Base of the dynamic shared memory buffer (!llvm.ptr<3>).
Value sharedBase(OpBuilder &b, Location loc);
void barrier(OpBuilder &b, Location loc);

/// Writes the elements this thread holds (in `layout`) to shared memory at
/// `base` + sum(coord[d] * strides[d]) elements, vectorized along contiguous
/// registers. Replicas write the same value, which is harmless.
void storeShared(OpBuilder &b, Location loc, Value base, ValueRange elems,
                 Type elemType, const LinearLayout &layout,
                 ArrayRef<int64_t> strides);
/// Reads the elements of `layout` from shared memory (stride 0 broadcasts).
SmallVector<Value> loadShared(OpBuilder &b, Location loc, Value base,
                              Type elemType, const LinearLayout &layout,
                              ArrayRef<int64_t> strides);
/// Row-major strides of `shape`.
SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> shape);
/// Bytes of `type` when stored in memory (i1 as a byte).
int64_t storageBytes(Type type);

/// Moves `elems` (in layout `from`) into layout `to` of the same shape:
/// free when the layouts agree, a register permutation when only registers
/// differ, else through shared memory.
SmallVector<Value> convertLayout(OpBuilder &b, Location loc, ValueRange elems,
                                 Type elemType, const LinearLayout &from,
                                 const LinearLayout &to,
                                 GpuLoweringState &state);

/// Value of lane (laneId ^ mask) (butterfly shuffle), any scalar type.
Value shuffleXor(OpBuilder &b, Location loc, Value v, unsigned mask);

/// Runs a reduce/scan combiner region on scalars.
SmallVector<Value> applyCombiner(OpBuilder &b, Location loc, Region &combiner,
                                 ValueRange acc, ValueRange next);


/// Software pipelining of loops that feed tensor-core tile.mma from
/// tile.load. Registers: the next iteration's loads are issued before this
/// iteration's mma. AsyncCopy: a ring of `stages` shared-memory slots filled
/// by cp.async, `stages - 1` iterations ahead, one barrier per iteration;
/// the loads and the mma are marked with kAsyncCopyAttr / kAsyncMmaAttr.
/// `numStages` > 0 asks for that many ring slots; more than fit in a
/// block's shared memory is an error at the mma.
LogicalResult prefetchMmaLoads(Operation *root, MmaPipelining mode,
                               int64_t numStages);

/// On a tile.load: [byte offset in the slot, row stride (elements), slot
/// bytes, stages, iterations ahead, fixed slot or -1, swizzle]: the load
/// lowers to cp.async into the ring slot instead of registers. Swizzle 128:
/// no row stride; the block is stored as panels of 128 bytes per row (the
/// wgmma layout), 16-byte chunk c of row r at chunk c ^ (r % 8); 64: rows
/// of 64 bytes, chunk c ^ ((r / 2) % 4) (A with K = 32 f16).
constexpr llvm::StringLiteral kAsyncCopyAttr = "tile.async_copy";
/// On a tile.mma: [stages, slot bytes, A's offset in the slot (-1: not in
/// the ring), B's offset, B K-major (optional; K^T in attention), wgmma
/// result awaited (optional: 1 when something other than the next
/// iteration's wgmma reads it)]: operands are read from the ring, not
/// staged.
constexpr llvm::StringLiteral kAsyncMmaAttr = "tile.async_mma";

/// Shared-memory layout of mma operands: A [m][k + pad], B [k][n + pad]
/// (or B^T [n][k + pad]), each region 16-byte aligned.
struct MmaSmemLayout {
  int64_t aStride, bStride, aBytes, bBytes;
};
MmaSmemLayout getMmaSmemLayout(int64_t m, int64_t n, int64_t k,
                               int64_t elemBytes, bool bTransposed);

/// Lowers a tile.mma with a warpgroup tiling whose A and B are in a
/// swizzled cp.async ring (`ring`: the op's kAsyncMmaAttr) to wgmma
/// (TileToGpuWgmma.cpp); `acc` is the converted accumulator.
LogicalResult lowerWarpgroupMma(MmaOp op, Value acc, ArrayRef<int64_t> ring,
                                ConversionPatternRewriter &rewriter,
                                const TypeConverter &converter,
                                GpuLoweringState &state);

/// wgmma with A from registers (`aFrags[kk / 16][i]`: the four 32-bit
/// m16k16 fragment registers of 64-row block i, mma.sync's A layout) and B
/// from the swizzled ring (TileToGpuWgmma.cpp); waits for the result.
LogicalResult lowerWarpgroupMmaRegA(
    MmaOp op, Value acc, ArrayRef<SmallVector<SmallVector<Value>>> aFrags,
    ArrayRef<int64_t> ring, ConversionPatternRewriter &rewriter,
    const TypeConverter &converter, GpuLoweringState &state);

/// On the wgmma.wait_group 0 after a wgmma loop: the loop's f32 results are
/// accumulators of wgmmas still in flight (waitForWgmmaResults).
constexpr llvm::StringLiteral kWgmmaResultsAttr = "tile.wgmma_results";

/// Replaces each wait marked kWgmmaResultsAttr by an inline-asm wait that
/// takes and returns the loop's f32 results, so that no use of an
/// accumulator can be scheduled before the wgmmas writing it are done.
void waitForWgmmaResults(Operation *root);

/// Byte offset of element (row, col) of a `rows`-row block stored as
/// `swizzle`-byte swizzled panels (wgmma's 128B or 64B mode): panel col / W
/// (W = swizzle / elemBytes columns, `rows` x `swizzle` bytes each), then
/// row * swizzle, then the 16-byte chunk XOR bits 7.. of that row offset
/// (row % 8 for 128B, (row / 2) % 4 for 64B).
Value swizzledOffset(OpBuilder &b, Location loc, Value row, Value col,
                     int64_t rows, int64_t elemBytes, int64_t swizzle);

/// The swizzle (bytes) of a wgmma operand whose rows have `rowBytes`: 128,
/// or 64 for 64-byte rows (K = 32 of f16), as the panels are no wider.
inline int64_t warpgroupSwizzle(int64_t rowBytes) {
  return rowBytes % 128 == 0 ? 128 : 64;
}

/// Base of the cp.async ring area: an offset constant marked
/// kRingOffsetAttr, patched by placeRings after the conversion.
Value ringBase(OpBuilder &b, Location loc);
constexpr llvm::StringLiteral kRingOffsetAttr = "tile.ring_offset";
/// Puts the rings above the other shared memory uses of `root`.
void placeRings(Operation *root, GpuLoweringState &state);

/// Ring slot of an op directly in an scf.for body: (iteration + ahead) %
/// stages, as i32.
Value ringSlot(OpBuilder &b, Location loc, Operation *op, int64_t ahead,
               int64_t stages);

void populateTileToGpuElementwisePatterns(TypeConverter &converter,
                                          RewritePatternSet &patterns,
                                          GpuLoweringState &state);
void populateTileToGpuMemoryPatterns(TypeConverter &converter,
                                     RewritePatternSet &patterns,
                                     GpuLoweringState &state);
/// Array views (TileToGpuViews.cpp); added by the memory patterns.
void populateTileToGpuViewPatterns(TypeConverter &converter,
                                   RewritePatternSet &patterns);
void populateTileToGpuReducePatterns(TypeConverter &converter,
                                     RewritePatternSet &patterns,
                                     GpuLoweringState &state);
void populateTileToGpuShapePatterns(TypeConverter &converter,
                                    RewritePatternSet &patterns,
                                    GpuLoweringState &state);
void populateTileToGpuMmaPatterns(TypeConverter &converter,
                                  RewritePatternSet &patterns,
                                  GpuLoweringState &state);
void populateTileToGpuDebugPatterns(TypeConverter &converter,
                                    RewritePatternSet &patterns,
                                    GpuLoweringState &state);
void populateTileToGpuLaunchOrderPatterns(TypeConverter &converter,
                                          RewritePatternSet &patterns,
                                          GpuLoweringState &state);

} // namespace mlir::tile

#endif
