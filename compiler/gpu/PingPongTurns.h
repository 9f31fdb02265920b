//===- PingPongTurns.h - two consumer warpgroups taking turns ---*- C++ -*-===//
//
// FlashAttention-3's ping-pong schedule between the two consumer
// warpgroups of a warp-specialized kernel, as named barriers: warpgroup g
// waits on barrier kPingPongBarrier + g for its turn and, once its wgmmas
// are issued, arrives on the other's. tile-warp-specialize takes a turn per
// wgmma; tile-overlap-mma-chain one per rotated iteration (QK^T of j and
// PV of j - 1), so that one warpgroup's softmax runs beside the other's
// mmas.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_COMPILER_GPU_PINGPONGTURNS_H
#define TILE_COMPILER_GPU_PINGPONGTURNS_H

#include "compiler/gpu/TileToGpuCommon.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

namespace mlir::tile {

/// Named barriers of the ping-pong schedule: 0 is the block's, 1 the
/// consumers', 2 the producer's (narrowRegionBarriers), 3 and 4 the turns.
constexpr int32_t kPingPongBarrier = 3;

/// A consumer thread's two turn barriers and how many threads meet at one.
struct PingPongTurns {
  Value group, mine, other, threads;
};

/// The turn barriers of the thread `tid` of `consumerThreads` (two
/// warpgroups); warpgroup 1 hands warpgroup 0 the first turn.
inline PingPongTurns startTurns(OpBuilder &b, Location loc, Value tid,
                                int64_t consumerThreads) {
  PingPongTurns t;
  t.threads = constI32(b, loc, consumerThreads);
  t.group = arith::DivUIOp::create(b, loc, tid, constI32(b, loc, 128));
  t.mine = arith::AddIOp::create(b, loc, t.group,
                                 constI32(b, loc, kPingPongBarrier));
  t.other = arith::SubIOp::create(
      b, loc, constI32(b, loc, 2 * kPingPongBarrier + 1), t.mine);
  Value second = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       t.group, constI32(b, loc, 1));
  auto first = scf::IfOp::create(b, loc, second, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(first.thenBlock()->getTerminator());
  NVVM::BarrierArriveOp::create(b, loc, constI32(b, loc, kPingPongBarrier),
                                t.threads);
  return t;
}

inline void waitTurn(OpBuilder &b, Location loc, const PingPongTurns &t) {
  NVVM::BarrierOp::create(b, loc, TypeRange{}, t.mine, t.threads, {}, Value());
}

inline void passTurn(OpBuilder &b, Location loc, const PingPongTurns &t) {
  NVVM::BarrierArriveOp::create(b, loc, t.other, t.threads);
}

/// After the last turn: warpgroup 0 takes the turn warpgroup 1 passed last,
/// so each barrier is waited for as often as it is arrived at.
inline void endTurns(OpBuilder &b, Location loc, const PingPongTurns &t) {
  Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, t.group,
                                      constI32(b, loc, 0));
  auto last = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(last.thenBlock()->getTerminator());
  waitTurn(b, loc, t);
}

} // namespace mlir::tile

#endif // TILE_COMPILER_GPU_PINGPONGTURNS_H
