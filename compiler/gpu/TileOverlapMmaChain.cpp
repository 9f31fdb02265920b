//===- TileOverlapMmaChain.cpp - one iteration's math beside the next mma -===//
//
// The tile-overlap-mma-chain pass: FlashAttention-3's intra-warpgroup
// overlap. The consumer loop of a warp-specialized attention kernel runs
// two wgmmas per iteration, the second's A computed in registers from the
// first's result (S = Q K^T, softmax, O = P V + O * alpha), each waited for
// before the next step, so the tensor cores idle through the softmax. The
// loop is rotated by one stage: the second mma, and what feeds it only (the
// rescale of O, the slot of V), runs one iteration late, so iteration j
//
//   issues S_j = Q K_j^T                       (in flight)
//   issues O = P_{j-1} V_{j-1} + O * a_{j-1}   (in flight)
//   waits for S_j (wait_group 1), computes its softmax: P_j, a_j, m, l
//   waits for O (wait_group 0), releases the slot of iteration j - 1
//
// and the softmax of S_j runs while P_{j-1} V_{j-1} is on the tensor cores.
// Iteration 0's first part runs before the loop and the last iteration's
// second part after it (both under a guard for loops of no iteration). The
// values the late part takes from the early one (P in f16, a's rows, the
// previous induction variable) are carried by the loop; an op moves to the
// late part only if what it reads is no larger than what it makes, so P
// crosses as f16 (its truncation stays early).
//
// The ring must hold three slots: iteration j holds the slots of j - 1 and
// j. A consumer loop nested in a persistent kernel's tile loop is rotated
// tile by tile. Loops it leaves alone: not the consumer loop of
// tile-warp-specialize, a ring of fewer slots, mmas already in flight
// (ping-pong), other shapes.
//
//===----------------------------------------------------------------------===//
#include "compiler/Passes.h"
#include "compiler/gpu/PingPongTurns.h"
#include "dialects/tilegpu/TileGpuDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEOVERLAPMMACHAIN
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

/// Bytes a value takes per program (elements times element size); scalars
/// count one element.
int64_t bytesOf(Value v) {
  Type type = v.getType();
  int64_t elements = 1;
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    elements = tensor.getNumElements();
    type = tensor.getElementType();
  }
  if (!type.isIntOrFloat())
    return elements * 8;
  return elements * std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
}

/// A rotatable consumer loop: its two mmas, and which ops run late.
struct Chain {
  scf::ForOp loop;
  tilegpu::MmaOp first, second;
  DenseSet<Operation *> late;
};

/// The slots of the ring the loop's mmas read B from (0: not a ring slot).
int64_t ringSlots(tilegpu::MmaOp mma) {
  auto slot = mma.getB().getDefiningOp<tilegpu::SlotOp>();
  if (!slot)
    return 0;
  return cast<tilegpu::SharedBufferType>(slot.getRing().getType())
      .getSlots();
}

std::optional<Chain> matchChain(scf::ForOp loop) {
  // Nested: a persistent kernel's key loop inside its walk over tiles,
  // rotated tile by tile.
  if (!isConsumerLoop(loop, /*nested=*/true))
    return std::nullopt;
  Block *body = loop.getBody();
  SmallVector<tilegpu::MmaOp> mmas;
  for (Operation &op : body->without_terminator()) {
    if (auto mma = dyn_cast<tilegpu::MmaOp>(op))
      mmas.push_back(mma);
    else if (isa<scf::ForOp, scf::IfOp, scf::WhileOp>(op))
      return std::nullopt;
  }
  if (mmas.size() != 2)
    return std::nullopt;
  Chain chain{loop, mmas[0], mmas[1], {}};
  if (chain.first.getInFlight() || chain.second.getInFlight() ||
      chain.second.getASharedBuffer() || ringSlots(chain.first) < 3 ||
      ringSlots(chain.second) < 3)
    return std::nullopt;
  // The second's result is only carried to the next iteration.
  Value result = chain.second.getResult();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  if (!result.hasOneUse() || *result.getUsers().begin() != yield)
    return std::nullopt;

  // The late part: the second mma, what follows it, and (backwards) the ops
  // only the late part uses that read no more than they make.
  bool afterSecond = false;
  for (Operation &op : body->without_terminator()) {
    afterSecond |= &op == chain.second.getOperation();
    if (afterSecond)
      chain.late.insert(&op);
  }
  for (Operation *op = chain.second->getPrevNode(); op;
       op = op->getPrevNode()) {
    if (op == chain.first.getOperation() || !isMemoryEffectFree(op))
      continue;
    bool onlyLate = llvm::all_of(op->getUsers(), [&](Operation *user) {
      return chain.late.contains(body->findAncestorOpInBlock(*user));
    });
    int64_t made = 0;
    for (Value r : op->getResults())
      made += bytesOf(r);
    bool noLarger = llvm::all_of(op->getOperands(), [&](Value v) {
      Operation *def = v.getDefiningOp();
      return !def || def->getBlock() != body || bytesOf(v) <= made;
    });
    if (onlyLate && noLarger && op->getNumResults())
      chain.late.insert(op);
  }
  // Carried values keep their meaning only if each part reads the carried
  // values it makes: the late part the second's result, the early part the
  // rest.
  for (BlockArgument arg : loop.getRegionIterArgs()) {
    Value next = yield.getOperand(arg.getArgNumber() - 1);
    bool madeLate = chain.late.contains(next.getDefiningOp());
    for (Operation *user : arg.getUsers())
      if (chain.late.contains(body->findAncestorOpInBlock(*user)) != madeLate)
        return std::nullopt;
    if (next.getDefiningOp() == nullptr ||
        next.getDefiningOp()->getBlock() != body)
      return std::nullopt;
  }
  // The first's result feeds the early part only (the softmax).
  for (Operation *user : chain.first->getUsers())
    if (chain.late.contains(body->findAncestorOpInBlock(*user)))
      return std::nullopt;
  return chain;
}

void rotate(Chain &chain, bool withPingPong, bool lateOpsFirst) {
  scf::ForOp loop = chain.loop;
  Block *body = loop.getBody();
  Location loc = loop.getLoc();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  // Constants are the loop's invariants: both parts read them.
  for (Operation &op : llvm::make_early_inc_range(body->without_terminator()))
    if (op.hasTrait<OpTrait::ConstantLike>()) {
      op.moveBefore(loop);
      chain.late.erase(&op);
    }

  SmallVector<Operation *> early, earlyAfterFirst, late, lateAfterSecond;
  bool pastFirst = false, pastSecond = false;
  for (Operation &op : body->without_terminator()) {
    if (chain.late.contains(&op)) {
      (pastSecond ? lateAfterSecond : late).push_back(&op);
      pastSecond |= &op == chain.second.getOperation();
    } else {
      (pastFirst ? earlyAfterFirst : early).push_back(&op);
      pastFirst |= &op == chain.first.getOperation();
    }
  }
  // Early values the late part reads: carried one iteration, in program
  // order (not the set's pointer order: the loop's carried values, and the
  // PTX, would change from run to run).
  SetVector<Value> crossing;
  for (Operation *op : llvm::concat<Operation *>(late, lateAfterSecond))
    op->walk([&](Operation *nested) {
      for (Value v : nested->getOperands())
        if (Operation *def = v.getDefiningOp())
          if (def->getBlock() == body && !chain.late.contains(def))
            crossing.insert(v);
    });
  unsigned numArgs = loop.getNumRegionIterArgs();
  auto madeLate = [&](unsigned i) {
    return chain.late.contains(yield.getOperand(i).getDefiningOp());
  };

  OpBuilder b(loop);
  auto emit = [&](ArrayRef<Operation *> ops, IRMapping &map) {
    for (Operation *op : ops)
      b.clone(*op, map);
  };
  // Two consumer warpgroups take turns at each iteration's two mmas.
  std::optional<PingPongTurns> turns;
  int64_t threads = warpRoleOf(loop->getParentRegion())->threads();
  if (withPingPong && threads == 256) {
    Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
    turns = startTurns(b, loc, tid, threads);
  }
  Value lb = loop.getLowerBound(), ub = loop.getUpperBound(),
        step = loop.getStep();
  Value any =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, lb, ub);
  auto guard = scf::IfOp::create(b, loc, loop.getResultTypes(), any,
                                 /*withElseRegion=*/true);
  b.setInsertionPointToStart(&guard.getElseRegion().front());
  scf::YieldOp::create(b, loc, loop.getInits());

  // The first iteration's early part.
  b.setInsertionPointToStart(&guard.getThenRegion().front());
  IRMapping first;
  first.map(loop.getInductionVar(), lb);
  for (auto [arg, init] : llvm::zip(loop.getRegionIterArgs(), loop.getInits()))
    first.map(arg, init);
  emit(early, first);
  emit(earlyAfterFirst, first);

  SmallVector<Value> inits;
  for (unsigned i = 0; i < numArgs; ++i)
    inits.push_back(madeLate(i) ? loop.getInits()[i]
                                : first.lookup(yield.getOperand(i)));
  for (Value v : crossing)
    inits.push_back(first.lookup(v));
  inits.push_back(lb); // the induction variable of the late part
  Value next = arith::AddIOp::create(b, loc, lb, step);
  auto rotated = scf::ForOp::create(b, loc, next, ub, step, inits);
  rotated->setAttrs(loop->getDiscardableAttrDictionary());
  Block *newBody = rotated.getBody();
  auto newArgs = rotated.getRegionIterArgs();
  b.setInsertionPointToStart(newBody);
  if (!newBody->empty())
    newBody->getTerminator()->erase();
  b.setInsertionPointToEnd(newBody);

  IRMapping now, before; // iteration j's early part, j - 1's late part
  now.map(loop.getInductionVar(), rotated.getInductionVar());
  before.map(loop.getInductionVar(), newArgs.back());
  for (unsigned i = 0; i < numArgs; ++i)
    (madeLate(i) ? before : now).map(loop.getRegionIterArgs()[i], newArgs[i]);
  for (auto [i, v] : llvm::enumerate(crossing))
    before.map(v, newArgs[numArgs + i]);

  // late-ops-first: what feeds the second mma, read from carried values
  // only, before the first is issued. Its accumulator passes through a
  // wait for no group (nothing is in flight at the top of the body): the
  // tied asm keeps LLVM from sinking the rescale below the first's issue.
  ArrayRef<Operation *> lateFirst =
      lateOpsFirst ? ArrayRef<Operation *>(late).drop_back()
                   : ArrayRef<Operation *>();
  emit(lateFirst, before);
  if (Value acc = before.lookupOrNull(chain.second.getAcc());
      acc && acc.getDefiningOp() &&
      acc.getDefiningOp()->getBlock() == newBody) {
    auto pinned = tilegpu::WaitMmaOp::create(b, loc, TypeRange{acc.getType()},
                                             ValueRange{acc}, 0);
    before.map(chain.second.getAcc(), pinned.getResult(0));
  }
  emit(early, now);
  auto s = cast<tilegpu::MmaOp>(now.lookup(chain.first.getOperation()));
  s.setInFlight(true);
  emit(ArrayRef<Operation *>(late).drop_front(lateFirst.size()), before);
  auto o = cast<tilegpu::MmaOp>(before.lookup(chain.second.getOperation()));
  o.setInFlight(true);
  if (turns) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(s);
    waitTurn(b, loc, *turns);
    b.setInsertionPointAfter(o);
    passTurn(b, loc, *turns);
  }
  auto waitS = tilegpu::WaitMmaOp::create(b, loc, TypeRange{s.getType()},
                                          ValueRange{s.getResult()}, 1);
  now.map(chain.first.getResult(), waitS.getResult(0));
  emit(earlyAfterFirst, now);
  auto waitO = tilegpu::WaitMmaOp::create(b, loc, TypeRange{o.getType()},
                                          ValueRange{o.getResult()}, 0);
  before.map(chain.second.getResult(), waitO.getResult(0));
  emit(lateAfterSecond, before);
  SmallVector<Value> yielded;
  for (unsigned i = 0; i < numArgs; ++i)
    yielded.push_back((madeLate(i) ? before : now).lookup(yield.getOperand(i)));
  for (Value v : crossing)
    yielded.push_back(now.lookup(v));
  yielded.push_back(rotated.getInductionVar());
  scf::YieldOp::create(b, loc, yielded);

  // The last iteration's late part.
  b.setInsertionPointAfter(rotated);
  IRMapping last;
  last.map(loop.getInductionVar(), rotated.getResults().back());
  for (unsigned i = 0; i < numArgs; ++i)
    if (madeLate(i))
      last.map(loop.getRegionIterArgs()[i], rotated.getResult(i));
  for (auto [i, v] : llvm::enumerate(crossing))
    last.map(v, rotated.getResult(numArgs + i));
  emit(late, last);
  emit(lateAfterSecond, last);
  SmallVector<Value> results;
  for (unsigned i = 0; i < numArgs; ++i)
    results.push_back(madeLate(i) ? last.lookup(yield.getOperand(i))
                                  : rotated.getResult(i));
  scf::YieldOp::create(b, loc, results);

  if (turns) {
    b.setInsertionPointAfter(guard);
    endTurns(b, loc, *turns);
  }
  loop.replaceAllUsesWith(guard.getResults());
  loop.erase();
}

struct TileOverlapMmaChainPass
    : tile::impl::TileOverlapMmaChainBase<TileOverlapMmaChainPass> {
  using TileOverlapMmaChainBase::TileOverlapMmaChainBase;

  void runOnOperation() override {
    SmallVector<Chain> chains;
    getOperation().walk([&](scf::ForOp loop) {
      if (std::optional<Chain> chain = matchChain(loop))
        chains.push_back(std::move(*chain));
    });
    for (Chain &chain : chains)
      rotate(chain, pingPong, lateOpsFirst);
  }
};

} // namespace
