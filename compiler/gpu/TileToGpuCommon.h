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
#include "dialects/tilegpu/TileGpuDialect.h"

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
  /// Where the kernel's shared memory ends: the furthest byte a scratch use
  /// reaches (every use starts at the scratch base of its op, sharedBase,
  /// behind a barrier).
  int64_t sharedMem = 0;
  /// The convert-tile-to-gpu option `tied-wgmma-fence`.
  bool tiedWgmmaFence = true;
  /// Records a scratch use of `bytes` at `b`'s insertion point.
  void needShared(OpBuilder &b, int64_t bytes);
};

/// On a kernel: the bytes of shared memory its tilegpu buffers take
/// (tile-allocate-shared); scratch starts there.
constexpr llvm::StringLiteral kSharedBytesAttr = "tilegpu.shared_bytes";

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

/// The kernel attribute of tile-cluster-multicast: the kernel runs in
/// thread-block clusters of this many blocks along grid axis 0 when the
/// grid divides (an i64; the runtime launches it so).
constexpr llvm::StringLiteral kClusterSizeAttr = "tilegpu.cluster_size";

/// Name of the dynamic shared memory symbol in the gpu.module.
constexpr llvm::StringLiteral kSharedSymbol = "tile_shared";

Value constI32(OpBuilder &b, Location loc, int64_t v);
Value constI64(OpBuilder &b, Location loc, int64_t v);
Value threadIdX(OpBuilder &b, Location loc);
Value laneId(OpBuilder &b, Location loc);
Value warpId(OpBuilder &b, Location loc);

/// %tid.x read by a volatile asm: LLVM cannot hoist it, or what is derived
/// from it, out of a loop. For ops that run every iteration, whose
/// per-thread addresses would otherwise stay in registers across the loop
/// (ptxas spilled them in the fused attention backward).
Value threadIdXInPlace(OpBuilder &b, Location loc);

/// The lane/warp part of this thread's coordinate, per dimension (i32);
/// `inPlace`: from threadIdXInPlace.
SmallVector<Value> threadCoords(OpBuilder &b, Location loc,
                                const LinearLayout &layout,
                                bool inPlace = false);
/// i1: this thread is the first of the replicas that hold its elements
/// (only it stores, so every element is written once).
Value isFirstReplica(OpBuilder &b, Location loc, const LinearLayout &layout);

/// Number of leading registers that are consecutive along `dim`.
int64_t getContiguity(const LinearLayout &layout, unsigned dim);

/// Elements of `vec` and a vector built from scalars.
SmallVector<Value> unpackVector(OpBuilder &b, Location loc, Value vec);
Value packVector(OpBuilder &b, Location loc, Type vecType, ValueRange elems);

/// The dynamic shared memory window (!llvm.ptr<3>), where the tilegpu
/// buffers sit at their offsets.
Value sharedWindow(OpBuilder &b, Location loc);
/// Where scratch starts at `b`'s insertion point, in bytes from the window:
/// the nearest `tilegpu.scratch_base` before it (in its block or an
/// enclosing one), else the kernel's kSharedBytesAttr, else 0.
int64_t scratchOffset(OpBuilder &b);
/// Base of the conversion's scratch shared memory (!llvm.ptr<3>) at `b`'s
/// insertion point: the window past the tilegpu buffers live there.
Value sharedBase(OpBuilder &b, Location loc);
void barrier(OpBuilder &b, Location loc);

/// Warp specialization (tile-warp-specialize): the roles of the
/// warp-specialized region that is or holds `region`, and whether that is
/// the producers' (the then-region).
struct WarpRole {
  tilegpu::WarpSpecializedAttr roles;
  bool producer = false;
  /// The region's first thread and its thread count.
  int64_t firstThread() const {
    return producer ? roles.getConsumers() * 32 : 0;
  }
  int64_t threads() const {
    return 32 * (producer ? roles.getProducers() : roles.getConsumers());
  }
};
std::optional<WarpRole> warpRoleOf(Region *region);
/// Whether `loop` is tile-warp-specialize's consumer loop: directly in the
/// consumers' region of a warp-specialized scf.if, or (`nested`) inside
/// scf.for loops there (a persistent kernel's walk over its tiles).
bool isConsumerLoop(Operation *loop, bool nested = false);
/// The warps a block of `func` runs: `numWarps`, or the consumers and the
/// producers of a warp-specialized kernel.
int64_t blockWarps(Operation *func, int64_t numWarps);
/// i1: this thread is the one that issues an op for the block (or for its
/// warp-specialized region at the insertion point): thread 0 or the
/// region's first.
Value isIssuingThread(OpBuilder &b, Location loc);
/// Block barriers inside the warp-specialized regions of `root` become
/// named barriers of the region's threads (1: consumers, 2: producers).
void narrowRegionBarriers(Operation *root);

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

/// Shared-memory layout of mma operands: A [m][k + pad], B [k][n + pad]
/// (or B^T [n][k + pad]), each region 16-byte aligned.
struct MmaSmemLayout {
  int64_t aStride, bStride, aBytes, bBytes;
};
MmaSmemLayout getMmaSmemLayout(int64_t m, int64_t n, int64_t k,
                               int64_t elemBytes, bool bTransposed);

/// What the tensor-core lowering of an mma reads: a tile.mma (operands in
/// registers) or a tilegpu.mma (B, and maybe A, in shared memory).
struct TensorCoreOperands {
  Operation *op = nullptr;
  /// The operands as tiles (no layout when in shared memory); B as [k][n].
  RankedTensorType aType, bType;
  MmaTilingAttr tiling;
  /// k of one instruction when there is no tiling.
  int64_t instrK = 16;
  /// Converted registers; null for an operand in shared memory.
  Value a, b, acc;
  /// This iteration's slots (!llvm.ptr<3>) and their row strides
  /// (elements), or null.
  Value aShared, bShared;
  int64_t aStride = 0, bStride = 0;
  /// The shared B holds B^T ([n][k]).
  bool bSharedTransposed = false;
};

/// ldmatrix + mma.sync (or wgmma with A in registers, from a tilegpu.mma)
/// for a tensor-core mma whose accumulator has the #tile.mma layout
/// (TileToGpuMma.cpp).
LogicalResult lowerTensorCoreMma(const TensorCoreOperands &in, MmaKind kind,
                                 ConversionPatternRewriter &rewriter,
                                 const TypeConverter &converter,
                                 GpuLoweringState &state);

/// Lowers a tilegpu.mma with a warpgroup tiling whose A and B are
/// swizzled shared buffers to wgmma (TileToGpuWgmma.cpp); `acc` is the
/// converted accumulator, `aSlot` and `bSlot` the converted buffers.
LogicalResult lowerWarpgroupMma(tilegpu::MmaOp op, Value acc, Value aSlot,
                                Value bSlot,
                                ConversionPatternRewriter &rewriter,
                                const TypeConverter &converter);

/// wgmma with A from registers (`aFrags[kk / 16][i]`: the four 32-bit
/// m16k16 fragment registers of 64-row block i, mma.sync's A layout) and B
/// from the swizzled buffer `bSlot` (TileToGpuWgmma.cpp); waits for the
/// result. `tiedFence`: the fence carries 16-bit fragments too (fp8's
/// always).
LogicalResult
lowerWarpgroupMmaRegA(tilegpu::MmaOp op, Value acc,
                      ArrayRef<SmallVector<SmallVector<Value>>> aFrags,
                      Value bSlot, ConversionPatternRewriter &rewriter,
                      const TypeConverter &converter, bool tiedFence);

/// `wgmma.wait_group group` as an asm statement that takes and returns
/// `values` (f32), so that no read of them can be scheduled before it.
SmallVector<Value> waitCarrying(OpBuilder &b, Location loc, ValueRange values,
                                int64_t group);

/// Byte offset of element (row, col) of a `rows`-row block stored as
/// `swizzle`-byte swizzled panels (wgmma's 128B or 64B mode): panel col / W
/// (W = swizzle / elemBytes columns, `rows` x `swizzle` bytes each), then
/// row * swizzle, then the 16-byte chunk XOR bits 7.. of that row offset
/// (row % 8 for 128B, (row / 2) % 4 for 64B).
Value swizzledOffset(OpBuilder &b, Location loc, Value row, Value col,
                     int64_t rows, int64_t elemBytes, int64_t swizzle);

/// Writes the elements this thread holds of a 2-d tile (`elems`, in
/// `layout`) into `swizzle`-byte panels of `rows` rows at `base`, `vector`
/// consecutive registers per store. `place` maps an element's (row, col)
/// to its (row, col) in the panels (null: the same). `inPlace`: the
/// addresses are derived where the stores are (threadIdXInPlace), for a
/// store that runs every iteration of a loop.
void storeSwizzled(
    OpBuilder &b, Location loc, Value base, ArrayRef<Value> elems,
    Type elemType, const LinearLayout &layout, int64_t vector, int64_t rows,
    int64_t swizzle,
    function_ref<std::pair<Value, Value>(Value, Value)> place = nullptr,
    bool inPlace = false);

/// The swizzle (bytes) of a wgmma operand whose rows have `rowBytes`: 128,
/// or 64 for 64-byte rows (K = 32 of f16), as the panels are no wider.
inline int64_t warpgroupSwizzle(int64_t rowBytes) {
  return rowBytes % 128 == 0 ? 128 : 64;
}

/// x and y of f32(f64(x) / f64(y)) for f32 x and y (a correctly rounded f32
/// quotient, lowered to div.rn.f32), or nulls.
std::pair<Value, Value> roundedQuotientOperands(arith::TruncFOp op);

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
/// Walks the runs of `op`'s block as a tile.load of it would: calls
/// `fn(firstReg, count, address, inBounds)` per run (TileToGpuMemory.cpp).
LogicalResult
forEachCopyRun(OpBuilder &b, tilegpu::AsyncCopyOp op, Value array,
               ValueRange indices,
               function_ref<void(int64_t, int64_t, Value, Value)> fn);

/// The tilegpu ops: shared buffers, async copies, mmas on shared operands
/// (TileToGpuAsync.cpp).
void populateTileGpuToNvvmPatterns(TypeConverter &converter,
                                   RewritePatternSet &patterns,
                                   GpuLoweringState &state);
/// mbarrier and TMA ops (TileToGpuTma.cpp); added by the tilegpu patterns.
void populateTileGpuTmaPatterns(TypeConverter &converter,
                                RewritePatternSet &patterns);

} // namespace mlir::tile

#endif
