//===- TileTiling.h - the tiling decisions tile-tiling makes ----*- C++ -*-===//
//
// tile-tiling records these decisions in the IR (tile.num_warps, the
// #tile.mma_tiling of each tensor-core tile.mma); tile-map-threads and the
// mma lowering read them and fall back to these functions for IR that was
// not tiled (hand-written tests).
//
//===----------------------------------------------------------------------===//
#ifndef TILE_COMPILER_TILETILING_H
#define TILE_COMPILER_TILETILING_H

#include "dialects/tile/TileDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::tile {

/// The module attribute holding the warps per block.
constexpr llvm::StringLiteral kNumWarpsAttr = "tile.num_warps";

/// An arith/math op on tiles that applies per element (select included).
bool isElementwiseTileOp(Operation *op);

/// Warps per block for `module`: 4, or 8 for mma kernels with tiles of 8K
/// elements or more and mmas of 128 rows or more; memory-bound kernels
/// about 32 elements of the largest tile per thread (4 to 16 warps).
int chooseNumWarps(ModuleOp module);

/// The warps per block a pass uses: `option` when positive, else the
/// module's tile.num_warps, else chooseNumWarps. Fails (with an error on the
/// module) unless it is a power of two <= 32.
FailureOr<int> resolveNumWarps(ModuleOp module, int option);

/// Tensor-core mmas that feed another's A operand (P = softmax(Q K^T) into
/// P V), and those fed: their warps split M only.
llvm::DenseSet<Operation *> findChainedMmas(Operation *root);

/// The warp grid [wm, wn] of an MxN mma accumulator (Triton's
/// warpsPerTileV2); `rowsOnly` puts the warps along M as far as M allows.
SmallVector<int64_t> chooseMmaWarps(ArrayRef<int64_t> shape, int numWarps,
                                    bool rowsOnly);

/// The tiling of a tensor-core mma over `numWarps` warps (null for FMA).
MmaTilingAttr getMmaTiling(MmaOp op, int numWarps, bool rowsOnly);

/// The tile.load `v` is read from through single-use reshapes and at most
/// one 2-d transpose (K^T of a (1, N, D) block), all in `block`, or null.
/// `chain` gets the view ops from `v` down; `transposed` whether one is a
/// transpose. `sharedViews`: the views and the load may have other uses
/// (the caller accounts for them: one block several mmas read).
LoadOp findLoadThroughView(Value v, Block *block,
                           SmallVectorImpl<Operation *> *chain = nullptr,
                           bool *transposed = nullptr,
                           bool sharedViews = false);

/// The tile.load `v` is, possibly behind single-use reshapes (in `block`)
/// that only drop leading unit dimensions: one batch's block of a batched
/// matmul, (1, M, K) -> (M, K). `chain` gets the reshapes from `v` down.
LoadOp
findLoadThroughUnitReshapes(Value v, Block *block,
                            SmallVectorImpl<Operation *> *chain = nullptr);

/// Whether mma `op` (fp8, tf32 or int8, which wgmma reads only K-major) can
/// read both operands K-major from the cp.async ring: A a row-major [m][k]
/// block, B the transpose of a row-major [n][k] one (through bitcasts), from
/// 16-byte-copyable arrays. Sets the loads and the view ops from each operand
/// down to its load.
bool streamsKMajor(MmaOp op, LoadOp *aLoad = nullptr, LoadOp *bLoad = nullptr,
                   SmallVectorImpl<Operation *> *aChain = nullptr,
                   SmallVectorImpl<Operation *> *bChain = nullptr);

/// Which operand of mma `op` of `loop`'s body the body computes in
/// registers while the other is a block loaded in front of the loop: B
/// (dS^T in the backward's dQ^T = K^T dS^T, A possibly a transposed block),
/// or A (dS = transpose(dS^T) in dQ = dS K, B a row-major [k][n] block).
/// tile-pipeline-mma writes that operand into a shared buffer every
/// iteration (an A as A^T: its M-major form) and has TMA copy the other
/// once.
enum class StagedOperand { None, A, B };
StagedOperand stagedOperand(MmaOp op, scf::ForOp loop);

/// The sm_90 warpgroup (wgmma) tiling of an mma in a loop over `numWarps`
/// warps, or null when its types, shape or operands do not allow one.
/// `chained`: A is another mma's result (registers).
/// `stagedOperands`: also an mma with an operand the loop computes
/// (stagedOperand; tile-tiling's staged-operands option).
MmaTilingAttr getWarpgroupMmaTiling(MmaOp op, int numWarps, bool chained,
                                    bool stagedOperands = false);

/// For a loop whose wgmmas take A from registers (TileRegisterAWgmma.cpp):
/// each scf.if of its body that only computes values becomes both branches
/// and selects. Returns whether the body is then free of control flow (else
/// those mmas must not be wgmmas: ptxas would lose a register-A operand).
bool flattenBranches(scf::ForOp loop);

/// Whether every use of `v` (a load, or a view of it) is a view (`isView`)
/// whose uses are too, or an mma reading it as B.
bool onlyViewedAsB(Value v, function_ref<bool(Operation *)> isView);

/// Every load with `order` reading a 2-d transpose whose block mmas read as
/// B (through reshapes, bitcasts and fp8's widening) becomes the plain load, a
/// reshape dropping its unit dimensions and a 2-d permute
/// (TileUnpermuteMmaLoads.cpp).
void unpermuteMmaLoads(Operation *root);

} // namespace mlir::tile

#endif
