//===- SharedLiveness.h - when shared buffers are live ---------*- C++ -*-===//
//
// The live ranges of a kernel's tilegpu buffers, shared by the passes that
// place them (tile-allocate-shared) or add one (tile-stage-stores).
//
// Time is counted in steps: the top-level ops of the kernel body, where a
// warp-specialized `scf.if` stands for its consumers' top-level ops, one
// step each. A use inside a step's regions (a loop body) keeps the buffer
// for the whole step. The producer's region runs beside the consumers: a
// buffer only the producer uses is live for the whole `scf.if`, and the
// producer's uses of one the consumers use too (a ring, its mbarriers)
// happen before the consumers' last use of it, since the consumers wait on
// the full barrier of every copy the producer issues and the producer
// waits for nothing after its last copy.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_COMPILER_GPU_SHAREDLIVENESS_H
#define TILE_COMPILER_GPU_SHAREDLIVENESS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

namespace mlir::tile {

class SharedLiveness {
public:
  explicit SharedLiveness(func::FuncOp func);

  /// The steps, in program order.
  ArrayRef<Operation *> getSteps() const { return steps; }

  /// The step `op` is, or is nested in; std::nullopt inside a producer
  /// region.
  std::optional<int64_t> getStep(Operation *op) const;

  /// The first and last step at which the buffer `alloc` defines (an
  /// `alloc_shared` or `alloc_mbarriers`, or a slot of one) is live.
  std::pair<int64_t, int64_t> getLiveRange(Operation *alloc) const;

  /// The bytes of a `tilegpu.alloc_shared` or `alloc_mbarriers`; 0 for any
  /// other op.
  static int64_t getBufferBytes(Operation *op);

private:
  /// The warp-specialized `scf.if` whose producer region holds `op`.
  Operation *getProducerOwner(Operation *op) const;

  SmallVector<Operation *> steps;
  DenseMap<Operation *, int64_t> stepIndex;
  /// A warp-specialized `scf.if`'s first and last step.
  DenseMap<Operation *, std::pair<int64_t, int64_t>> specializedSteps;
};

} // namespace mlir::tile

#endif // TILE_COMPILER_GPU_SHAREDLIVENESS_H
