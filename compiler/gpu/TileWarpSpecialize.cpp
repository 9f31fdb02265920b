//===- TileWarpSpecialize.cpp - a producer warpgroup for TMA rings --------===//
//
// The tile-warp-specialize pass. A kernel whose mma loop tile-pipeline-mma
// gave a TMA ring (one "full" mbarrier per slot waited on at the top of the
// body, the block barrier after it, the refill `scf.if` of
// `mbarrier_arrive_expect_tx` and `tma_load`s, an in-flight wgmma) gets one
// more warpgroup, the producer, and the loop is split between the roles:
//
//   scf.if %tid >= 32 * consumers {tilegpu.warp_specialized = ...} {
//     setmaxnreg.dec 40
//     for j in [0, trips):                      // the producer
//       if j >= S: wait empty[j % S], parity (j / S + 1) % 2
//       expect_tx full[j % S]; tma_load A, B    // the refill, at iteration j
//   } else {
//     setmaxnreg.inc 232
//     for i: wait full[i % S]; wgmma (in flight) // the consumers
//            if i >= 1: arrive empty[(i - 1) % S]
//     ... the rest of the kernel
//   }
//
// The consumers keep the warps, layouts and thread numbers tile-map-threads
// gave the kernel (threads 0 .. 32 * consumers - 1); the producer's threads
// come after them. The empty barriers replace the block barrier of every
// iteration: a consumer releases the slot of iteration i - 1 once the mma
// of iteration i has waited for that wgmma (wait_group 1), and the
// producer refills a slot as soon as every consumer released it, so the
// ring runs S iterations ahead instead of S - 2, and no consumer waits for
// another. Registers move from the producer, which needs a few for
// coordinates, to the consumers' accumulators.
//
// A ring whose wgmmas are each waited for (attention's two, B from the
// ring) releases the slot of iteration i after its last mma instead, and
// with two consumer warpgroups (and the ping-pong option) their wgmmas take
// turns: each waits on its warpgroup's named barrier before issuing and
// arrives on the other's after, so one warpgroup's softmax overlaps the
// other's mmas.
//
// A matmul's ring loop in the body of a persistent loop (an `scf.while` or
// `scf.for` at the kernel's top level walking the block's output tiles) is
// split the same way, around the persistent loop: its buffers and barriers move
// before it, both roles walk the tiles, and a slot counts every iteration of
// the block so far (a value the persistent loop carries), so the producer fills
// the next tile's slots while the consumers store this one. So is an
// attention ring (its wgmmas each waited for) in a persistent `scf.for`:
// the body's other barriers (Q's, copied by the consumers once a tile)
// move before the loop as well, their waits take the tile's parity, and
// their invalidations go after it.
//
// Kernels it leaves alone: none or several TMA rings, or a ring loop inside
// any other loop.
//
//===----------------------------------------------------------------------===//
#include "compiler/Passes.h"
#include "compiler/gpu/PingPongTurns.h"
#include "compiler/gpu/TileToGpuCommon.h"
#include "dialects/tilegpu/TileGpuDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEWARPSPECIALIZE
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

/// Registers per thread after setmaxnreg (the pass's options): the
/// producer's few, and what the consumers may take of the 64K (by default
/// 2 x 128 x 232 + 128 x 40 = 64512).
struct RegisterSplit {
  int32_t producer, consumer;
};
/// One warpgroup issues the copies (setmaxnreg works per warpgroup).
constexpr int64_t kProducerWarps = 4;

/// The pieces of a TMA ring loop the split needs.
struct TmaRing {
  scf::ForOp loop;
  tilegpu::AllocMBarriersOp full; // one per slot, the copies land on them
  tilegpu::MBarrierWaitOp wait;   // the top of the body
  gpu::BarrierOp blockBarrier;    // right after it
  scf::IfOp refill;               // copies iteration `ahead` into `slot`
  Value ahead, slot, trips;
  /// The ring's wgmmas: one left in flight across the back edge (a
  /// matmul), or several each waited for (attention's two).
  SmallVector<tilegpu::MmaOp> mmas;
  bool inFlight() { return mmas.front().getInFlight(); }
  SmallVector<scf::IfOp> prologue; // iterations 0.. before the loop
};

/// Whether `ifOp`'s then-block arrives on `full` expecting bytes: the
/// copies of one iteration.
tilegpu::MBarrierExpectTxOp refillExpect(scf::IfOp ifOp, Value full) {
  for (auto expect : ifOp.thenBlock()->getOps<tilegpu::MBarrierExpectTxOp>())
    if (expect.getBarriers() == full)
      return expect;
  return {};
}

/// The TMA ring of `forOp`, if it is one.
std::optional<TmaRing> matchRing(scf::ForOp forOp) {
  TmaRing ring;
  ring.loop = forOp;
  Block *body = forOp.getBody();
  for (Operation &op : *body) {
    if (auto wait = dyn_cast<tilegpu::MBarrierWaitOp>(op)) {
      if (ring.wait)
        return std::nullopt;
      ring.wait = wait;
    } else if (auto mma = dyn_cast<tilegpu::MmaOp>(op)) {
      ring.mmas.push_back(mma);
    } else if (auto ifOp = dyn_cast<scf::IfOp>(op);
               ifOp && ring.wait &&
               refillExpect(ifOp, ring.wait.getBarriers())) {
      if (ring.refill)
        return std::nullopt;
      ring.refill = ifOp;
    } else if (isa<gpu::BarrierOp>(op)) {
      if (ring.blockBarrier || !ring.wait ||
          op.getPrevNode() != ring.wait.getOperation())
        return std::nullopt;
      ring.blockBarrier = cast<gpu::BarrierOp>(op);
    }
  }
  // An in-flight wgmma is released one iteration late: the loop's only.
  if (ring.mmas.empty() ||
      llvm::any_of(ring.mmas,
                   [&](tilegpu::MmaOp mma) {
                     return mma.getInFlight() != ring.inFlight();
                   }) ||
      (ring.inFlight() && ring.mmas.size() != 1))
    return std::nullopt;
  if (!ring.wait || !ring.refill || !ring.blockBarrier ||
      ring.refill.getNumResults() || ring.refill.elseBlock())
    return std::nullopt;
  ring.full =
      ring.wait.getBarriers().getDefiningOp<tilegpu::AllocMBarriersOp>();
  if (!ring.full || ring.full->getBlock() != forOp->getBlock())
    return std::nullopt;
  // The refill runs when `ahead` < `trips`, into barrier and slot `slot`.
  auto live = ring.refill.getCondition().getDefiningOp<arith::CmpIOp>();
  if (!live || live.getPredicate() != arith::CmpIPredicate::slt)
    return std::nullopt;
  ring.ahead = live.getLhs();
  ring.trips = live.getRhs();
  if (forOp->isAncestor(ring.trips.getParentRegion()->getParentOp()))
    return std::nullopt;
  ring.slot = refillExpect(ring.refill, ring.full).getIndex();
  // The refill's body must be re-evaluable at another iteration: besides
  // its own values, only `ahead`, `slot` and values from before the loop.
  WalkResult uses = ring.refill.getThenRegion().walk([&](Operation *op) {
    for (Value v : op->getOperands()) {
      if (v == ring.ahead || v == ring.slot ||
          ring.refill->isAncestor(v.getParentRegion()->getParentOp()) ||
          !forOp->isAncestor(v.getParentRegion()->getParentOp()))
        continue;
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (uses.wasInterrupted())
    return std::nullopt;
  // The prologue: the refills of the first iterations, before the loop.
  for (Operation *op = forOp->getPrevNode(); op; op = op->getPrevNode())
    if (auto ifOp = dyn_cast<scf::IfOp>(op);
        ifOp && refillExpect(ifOp, ring.full.getResult()))
      ring.prologue.push_back(ifOp);
  return ring;
}

/// `a op b` for i32 values, one line each at the call sites.
Value remI32(OpBuilder &b, Location loc, Value a, int64_t c) {
  return arith::RemSIOp::create(b, loc, a, constI32(b, loc, c));
}
Value divI32(OpBuilder &b, Location loc, Value a, int64_t c) {
  return arith::DivSIOp::create(b, loc, a, constI32(b, loc, c));
}

/// The producer's loop over `trips` iterations: for every iteration j
/// (the block's `base + j`-th), wait until the consumers released its slot
/// (from the S-th on), then the refill at j. `outer` maps the values the
/// refill uses from a persistent loop's body to the producer's.
void emitProducerLoop(OpBuilder &b, Location loc, TmaRing &ring, Value empty,
                      int64_t slots, Value trips, Value base,
                      const IRMapping &outer) {
  auto loop = scf::ForOp::create(b, loc, constI32(b, loc, 0), trips,
                                 constI32(b, loc, 1));
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Value j = loop.getInductionVar();
  Value count = base ? arith::AddIOp::create(b, loc, base, j).getResult() : j;
  Value slot = remI32(b, loc, count, slots);
  Value reused = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, count,
                                       constI32(b, loc, slots));
  auto ifReused = scf::IfOp::create(b, loc, reused, /*withElseRegion=*/false);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPoint(ifReused.thenBlock()->getTerminator());
    // Release r of slot s completes phase r: iteration j needs release
    // j / S - 1 (of iteration j - S).
    Value parity =
        remI32(b, loc,
               arith::AddIOp::create(b, loc, divI32(b, loc, count, slots),
                                     constI32(b, loc, 1)),
               2);
    tilegpu::MBarrierWaitOp::create(b, loc, empty, slot, parity);
  }
  IRMapping map = outer;
  map.map(ring.ahead, j);
  map.map(ring.slot, slot);
  for (Operation &op : ring.refill.thenBlock()->without_terminator())
    b.clone(op, map);
}

/// How many iterations of `loop` ran before this one, at the top of its
/// body: (iv - lb) / step.
Value iterationsBefore(OpBuilder &b, scf::ForOp loop) {
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  Location loc = loop.getLoc();
  return arith::DivSIOp::create(
      b, loc,
      arith::SubIOp::create(b, loc, loop.getInductionVar(),
                            loop.getLowerBound()),
      loop.getStep());
}

void buildProducer(OpBuilder &b, Location loc, TmaRing &ring, Value empty,
                   int64_t slots, RegisterSplit registers) {
  NVVM::SetMaxRegisterOp::create(b, loc, registers.producer,
                                 NVVM::SetMaxRegisterAction::decrease);
  emitProducerLoop(b, loc, ring, empty, slots, ring.trips, Value(),
                   IRMapping());
}

/// The consumers' loop: no block barrier and no refill. An in-flight
/// wgmma's slot is released one iteration later, once the next mma waited
/// for it; otherwise the slot is released after the iteration's last mma.
/// With `base` (the iterations of the persistent loop's earlier tiles),
/// the wait and the slots the mmas read count from it.
void trimConsumerLoop(OpBuilder &b, TmaRing &ring, Value empty, int64_t slots,
                      Value base = {}) {
  scf::ForOp loop = ring.loop;
  Location loc = loop.getLoc();
  ring.blockBarrier.erase();
  ring.refill.erase();
  Value it = iterationsBefore(b, loop);
  b.setInsertionPointAfterValue(it);
  Value count = it;
  if (base) {
    count = arith::AddIOp::create(b, loc, base, it);
    Value slot = remI32(b, loc, count, slots);
    ring.wait.getIndexMutable().assign(slot);
    ring.wait.getParityMutable().assign(
        remI32(b, loc, divI32(b, loc, count, slots), 2));
    for (auto slotOp : loop.getBody()->getOps<tilegpu::SlotOp>())
      if (auto alloc = slotOp.getRing().getDefiningOp<tilegpu::AllocSharedOp>();
          alloc && alloc.getType().getSlots() == slots)
        slotOp.getIndexMutable().assign(slot);
  }
  if (!ring.inFlight()) {
    // After the iteration's last read of a slot: its last mma, or a row
    // read from a ring after it (tilegpu.read_shared).
    Operation *lastRead = ring.mmas.back();
    for (auto read : loop.getBody()->getOps<tilegpu::ReadSharedOp>())
      if (lastRead->isBeforeInBlock(read))
        lastRead = read;
    b.setInsertionPointAfter(lastRead);
    tilegpu::MBarrierArriveOp::create(b, loc, empty,
                                      remI32(b, loc, count, slots), Value());
    return;
  }
  b.setInsertionPointAfter(ring.mmas.back());
  Value later = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, it,
                                      constI32(b, loc, 1));
  auto ifLater = scf::IfOp::create(b, loc, later, /*withElseRegion=*/false);
  b.setInsertionPoint(ifLater.thenBlock()->getTerminator());
  Value previous = arith::SubIOp::create(b, loc, count, constI32(b, loc, 1));
  tilegpu::MBarrierArriveOp::create(b, loc, empty,
                                    remI32(b, loc, previous, slots), Value());
}

/// Ping-pong between the two consumer warpgroups (FlashAttention-3's
/// schedule): each wgmma of the loop waits for its warpgroup's turn,
/// passes the turn to the other warpgroup once issued, then waits for its
/// result. The tensor cores run one warpgroup's mma while the other
/// computes on the last result (attention's softmax), instead of both
/// warpgroups reaching their mmas, and their softmax, together.
void pingPong(OpBuilder &b, TmaRing &ring, Value tid, int64_t consumerThreads) {
  Location loc = ring.loop.getLoc();
  b.setInsertionPoint(ring.loop);
  PingPongTurns turns = startTurns(b, loc, tid, consumerThreads);
  for (tilegpu::MmaOp mma : ring.mmas) {
    b.setInsertionPoint(mma);
    waitTurn(b, loc, turns);
    mma.setInFlight(true);
    b.setInsertionPointAfter(mma);
    passTurn(b, loc, turns);
    auto wait = tilegpu::WaitMmaOp::create(b, loc, TypeRange{mma.getType()},
                                           ValueRange{mma.getResult()},
                                           /*pending=*/0);
    mma.getResult().replaceAllUsesExcept(wait.getResult(0), wait);
  }
  b.setInsertionPointAfter(ring.loop);
  endTurns(b, loc, turns);
}

/// The persistent loop around a ring loop: an `scf.while` or `scf.for` at
/// the kernel's top level whose body holds the ring loop, the tile's
/// coordinates and its store.
struct PersistentLoop {
  Operation *loop;
  /// The body's buffers, barriers and inits of the ring, before the ring
  /// loop: they move before the persistent loop.
  SmallVector<Operation *> setup;
  /// What the producer computes of the body besides its copies (the tile's
  /// coordinates, the trip count, the next tile), in order.
  SmallVector<Operation *> producerOps;
  SmallVector<tilegpu::MBarrierInvalOp> invals;
  /// The wait for the ring loop's last in-flight wgmma (a matmul's).
  tilegpu::WaitMmaOp drained;
  /// Barriers of the body other than the ring's (attention's Q block,
  /// copied once a tile): hoisted too, so their waits take the tile's
  /// parity and their invalidations move after the loop.
  SmallVector<tilegpu::AllocMBarriersOp> tileBarriers;

  Block *body() const {
    if (auto whileOp = dyn_cast<scf::WhileOp>(loop))
      return whileOp.getAfterBody();
    return cast<scf::ForOp>(loop).getBody();
  }
  Operation *yield() const { return body()->getTerminator(); }
};

/// Whether `v` is available before `loop`.
bool definedOutside(Value v, Operation *loop) {
  return !loop->isAncestor(v.getParentRegion()->getParentOp());
}

std::optional<PersistentLoop> matchPersistent(TmaRing &ring,
                                              func::FuncOp func) {
  // A matmul's in-flight ring, or attention's (its wgmmas each waited
  // for, Q copied once a tile beside the ring).
  PersistentLoop p;
  p.loop = ring.loop->getParentOp();
  if (!isa<scf::WhileOp, scf::ForOp>(p.loop) ||
      p.loop->getParentOp() != func.getOperation())
    return std::nullopt;
  Block *body = p.body();
  if (ring.loop->getBlock() != body)
    return std::nullopt;
  for (Operation &op : *body) {
    if (&op == ring.loop.getOperation())
      break;
    if (!isa<tilegpu::AllocSharedOp, tilegpu::AllocMBarriersOp,
             tilegpu::MBarrierInitOp>(op))
      continue;
    for (Value v : op.getOperands())
      if (!definedOutside(v, p.loop) && !matchPattern(v, m_Constant()) &&
          !llvm::is_contained(p.setup, v.getDefiningOp()))
        return std::nullopt;
    p.setup.push_back(&op);
  }
  if (!llvm::is_contained(p.setup, ring.full.getOperation()))
    return std::nullopt;
  for (Operation *op : p.setup)
    if (auto bars = dyn_cast<tilegpu::AllocMBarriersOp>(op);
        bars && bars != ring.full)
      p.tileBarriers.push_back(bars);
  // A tile barrier completes one phase a tile: its waits in the body (not
  // in the ring loop) take the tile's index, which a `for` counts.
  for (tilegpu::AllocMBarriersOp bars : p.tileBarriers)
    for (Operation *user : bars->getUsers())
      if (isa<tilegpu::MBarrierWaitOp>(user) &&
          (!isa<scf::ForOp>(p.loop) || user->getBlock() != body))
        return std::nullopt;
  for (auto inval : body->getOps<tilegpu::MBarrierInvalOp>())
    if (inval.getBarriers() == ring.full.getResult() ||
        llvm::is_contained(p.tileBarriers,
                           inval.getBarriers().getDefiningOp()))
      p.invals.push_back(inval);
  for (Operation *user : ring.loop->getUsers())
    if (auto wait = dyn_cast<tilegpu::WaitMmaOp>(user);
        wait && wait->getBlock() == body && wait.getPending() == 0)
      p.drained = wait;
  if (ring.inFlight() && !p.drained)
    return std::nullopt;
  // A while's condition is evaluated by both roles.
  if (auto whileOp = dyn_cast<scf::WhileOp>(p.loop))
    for (Operation &op : whileOp.getBeforeBody()->without_terminator())
      if (!isMemoryEffectFree(&op) || op.getNumRegions())
        return std::nullopt;
  // The producer's slice of the body: what its copies, its trip count and
  // the next tile read. Side-effect free, so each role may compute it.
  SmallVector<Value> wanted(p.yield()->getOperands());
  wanted.push_back(ring.trips);
  ring.refill.getThenRegion().walk(
      [&](Operation *op) { llvm::append_range(wanted, op->getOperands()); });
  llvm::SetVector<Operation *> slice;
  while (!wanted.empty()) {
    Value v = wanted.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != body || llvm::is_contained(p.setup, def) ||
        slice.contains(def))
      continue;
    // (An op with regions, such as the scf.if of a conditional expression
    // on the tile index, is cloned whole, with what its regions read.)
    if (!isMemoryEffectFree(def))
      return std::nullopt;
    slice.insert(def);
    llvm::append_range(wanted, def->getOperands());
    def->walk([&](Operation *nested) {
      if (nested != def)
        llvm::append_range(wanted, nested->getOperands());
    });
  }
  p.producerOps = slice.takeVector();
  llvm::sort(p.producerOps,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return p;
}

/// Moves the ring's buffers, barriers and inits before the persistent
/// loop (with the constants they take), and drops the invalidations and
/// the prologue copies of its body.
void hoistRingSetup(PersistentLoop &p, TmaRing &ring) {
  for (Operation *op : p.setup) {
    for (OpOperand &operand : op->getOpOperands())
      if (!definedOutside(operand.get(), p.loop) &&
          !llvm::is_contained(p.setup, operand.get().getDefiningOp())) {
        OpBuilder b(p.loop);
        operand.set(b.clone(*operand.get().getDefiningOp())->getResult(0));
      }
    op->moveBefore(p.loop);
  }
  // The block barriers around the invalidations: one is left, where the
  // consumers' warpgroups meet once a tile.
  for (tilegpu::MBarrierInvalOp inval : p.invals) {
    Operation *next = inval->getNextNode();
    inval.erase();
    Operation *prev = next->getPrevNode();
    while (prev && prev->hasTrait<OpTrait::ConstantLike>())
      prev = prev->getPrevNode();
    if (isa<gpu::BarrierOp>(next) && isa_and_present<gpu::BarrierOp>(prev))
      next->erase();
  }
  for (scf::IfOp ifOp : ring.prologue)
    ifOp.erase();
  ring.prologue.clear();
}

/// `p.loop` with one more i32 carried value, 0 at first (a while's
/// condition passes it on); the body yields it unchanged until the caller
/// sets the yield's last operand.
void appendCounter(OpBuilder &b, PersistentLoop &p) {
  Location loc = p.loop->getLoc();
  b.setInsertionPoint(p.loop);
  Value zero = constI32(b, loc, 0);
  if (auto forOp = dyn_cast<scf::ForOp>(p.loop)) {
    IRRewriter rewriter(b);
    rewriter.setInsertionPoint(forOp);
    FailureOr<LoopLikeOpInterface> counted = forOp.replaceWithAdditionalYields(
        rewriter, zero, /*replaceInitOperandUsesInLoop=*/false,
        [](OpBuilder &, Location, ArrayRef<BlockArgument> args) {
          return SmallVector<Value>{args.back()};
        });
    p.loop = counted->getOperation();
    return;
  }
  auto loop = cast<scf::WhileOp>(p.loop);
  SmallVector<Value> inits(loop.getInits());
  inits.push_back(zero);
  SmallVector<Type> types(loop.getResultTypes());
  types.push_back(b.getI32Type());
  auto counted = scf::WhileOp::create(b, loc, types, inits, nullptr, nullptr);
  for (auto [from, to] :
       {std::pair(loop.getBeforeBody(), counted.getBeforeBody()),
        std::pair(loop.getAfterBody(), counted.getAfterBody())}) {
    for (auto [old, arg] : llvm::zip(from->getArguments(), to->getArguments()))
      old.replaceAllUsesWith(arg);
    to->getOperations().splice(to->end(), from->getOperations());
  }
  counted.getConditionOp().getArgsMutable().append(
      counted.getBeforeArguments().back());
  counted.getYieldOp().getResultsMutable().append(
      counted.getAfterArguments().back());
  loop.replaceAllUsesWith(counted.getResults().drop_back());
  loop.erase();
  p.loop = counted;
}

/// The producer of a persistent loop: the same walk over the tiles, each
/// tile's copies counted from the iterations of the tiles before.
void buildPersistentProducer(OpBuilder &b, Location loc, TmaRing &ring,
                             PersistentLoop &p, Value empty, int64_t slots,
                             RegisterSplit registers) {
  NVVM::SetMaxRegisterOp::create(b, loc, registers.producer,
                                 NVVM::SetMaxRegisterAction::decrease);
  Operation *outer = p.loop;
  SmallVector<Value> inits(isa<scf::ForOp>(outer)
                               ? cast<scf::ForOp>(outer).getInitArgs()
                               : cast<scf::WhileOp>(outer).getInits());
  inits.push_back(constI32(b, loc, 0));
  // One tile: the body's slice, the copies, the next tile and count.
  auto walkTile = [&](OpBuilder &nb, Location l, IRMapping &map, Value done) {
    for (Operation *op : p.producerOps)
      nb.clone(*op, map);
    Value trips = map.lookupOrDefault(ring.trips);
    emitProducerLoop(nb, l, ring, empty, slots, trips, done, map);
    SmallVector<Value> yielded;
    for (Value v : p.yield()->getOperands())
      yielded.push_back(map.lookupOrDefault(v));
    yielded.push_back(arith::AddIOp::create(nb, l, done, trips));
    scf::YieldOp::create(nb, l, yielded);
  };
  if (auto forOp = dyn_cast<scf::ForOp>(outer)) {
    scf::ForOp::create(
        b, loc, forOp.getLowerBound(), forOp.getUpperBound(), forOp.getStep(),
        inits, [&](OpBuilder &nb, Location l, Value iv, ValueRange args) {
          IRMapping map;
          map.map(forOp.getInductionVar(), iv);
          map.map(forOp.getRegionIterArgs(), args.drop_back());
          walkTile(nb, l, map, args.back());
        });
    return;
  }
  auto whileOp = cast<scf::WhileOp>(outer);
  SmallVector<Type> types(whileOp.getResultTypes());
  types.push_back(b.getI32Type());
  auto cloneCondition = [&](OpBuilder &nb, Location l, ValueRange args) {
    IRMapping map;
    map.map(whileOp.getBeforeArguments(), args.drop_back());
    for (Operation &op : whileOp.getBeforeBody()->without_terminator())
      nb.clone(op, map);
    scf::ConditionOp cond = whileOp.getConditionOp();
    SmallVector<Value> passed;
    for (Value v : cond.getArgs())
      passed.push_back(map.lookupOrDefault(v));
    passed.push_back(args.back());
    scf::ConditionOp::create(nb, l, map.lookupOrDefault(cond.getCondition()),
                             passed);
  };
  scf::WhileOp::create(b, loc, types, inits, cloneCondition,
                       [&](OpBuilder &nb, Location l, ValueRange args) {
                         IRMapping map;
                         map.map(whileOp.getAfterArguments(), args.drop_back());
                         walkTile(nb, l, map, args.back());
                       });
}

/// The consumers' side of a persistent loop: the slots counted across
/// tiles, the last in-flight wgmma's slot released once it completed, and
/// the barriers invalidated after the last tile.
void countConsumerSlots(OpBuilder &b, TmaRing &ring, PersistentLoop &p,
                        Value empty, int64_t slots) {
  appendCounter(b, p);
  Value base = p.body()->getArguments().back();
  trimConsumerLoop(b, ring, empty, slots, base);
  Location loc = ring.loop.getLoc();
  Operation *yield = p.yield();
  b.setInsertionPoint(yield);
  Value trips = ring.trips;
  yield->setOperand(yield->getNumOperands() - 1,
                    arith::AddIOp::create(b, loc, base, trips));
  if (p.drained) { // the in-flight wgmma's slot, released once it completed
    b.setInsertionPointAfter(p.drained);
    Value ran = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, trips,
                                      constI32(b, loc, 0));
    auto ifRan = scf::IfOp::create(b, loc, ran, /*withElseRegion=*/false);
    b.setInsertionPoint(ifRan.thenBlock()->getTerminator());
    Value last = arith::SubIOp::create(
        b, loc, arith::AddIOp::create(b, loc, base, trips),
        constI32(b, loc, 1));
    tilegpu::MBarrierArriveOp::create(b, loc, empty,
                                      remI32(b, loc, last, slots), Value());
  }
  // The tile barriers' waits: tile k waits for their phase k.
  if (!p.tileBarriers.empty()) {
    Value tile = iterationsBefore(b, cast<scf::ForOp>(p.loop));
    b.setInsertionPointAfterValue(tile);
    Value parity = remI32(b, loc, tile, 2);
    for (tilegpu::AllocMBarriersOp bars : p.tileBarriers)
      for (Operation *user : bars->getUsers())
        if (auto wait = dyn_cast<tilegpu::MBarrierWaitOp>(user))
          wait.getParityMutable().assign(parity);
  }
  b.setInsertionPointAfter(p.loop);
  gpu::BarrierOp::create(b, loc);
  for (Value barriers :
       std::initializer_list<Value>{ring.full.getResult(), empty})
    for (int64_t s = 0; s < slots; ++s)
      tilegpu::MBarrierInvalOp::create(b, loc, barriers, constI32(b, loc, s));
  for (tilegpu::AllocMBarriersOp bars : p.tileBarriers)
    for (int64_t s = 0; s < bars.getType().getCount(); ++s)
      tilegpu::MBarrierInvalOp::create(b, loc, bars, constI32(b, loc, s));
}

LogicalResult specialize(func::FuncOp func, int64_t consumerWarps,
                         bool onlyAttention, bool withPingPong,
                         bool withPersistent, RegisterSplit registers) {
  SmallVector<TmaRing> rings;
  std::optional<PersistentLoop> persistent;
  bool otherRing = false;
  func.walk([&](scf::ForOp forOp) {
    std::optional<TmaRing> ring = matchRing(forOp);
    if (!ring)
      return;
    rings.push_back(*ring);
    if (forOp->getParentOp() == func.getOperation())
      return;
    if (withPersistent && !persistent)
      persistent = matchPersistent(rings.back(), func);
    otherRing |= !persistent;
  });
  // A kernel asking for clusters gets a producer for any ring: sharing
  // copies across the cluster (tile-cluster-multicast) needs its barriers.
  auto ctas = func->getAttrOfType<IntegerAttr>("tile.num_ctas");
  bool wantsClusters = ctas && ctas.getInt() >= 2;
  if (rings.size() != 1 || otherRing ||
      (!persistent && onlyAttention && rings.front().inFlight() &&
       !wantsClusters))
    return success();
  TmaRing &ring = rings.front();
  if (persistent)
    hoistRingSetup(*persistent, ring);
  MLIRContext *ctx = func.getContext();
  Location loc = ring.loop.getLoc();
  int64_t slots = cast<tilegpu::MBarriersType>(ring.full.getType()).getCount();
  int64_t consumerThreads = consumerWarps * 32;

  // The empty barriers, initialized with the full ones (before the split:
  // the init's block barrier is every thread's).
  Operation *lastInit = ring.full;
  for (Operation *user : ring.full->getUsers())
    if (isa<tilegpu::MBarrierInitOp>(user) &&
        user->getBlock() == ring.full->getBlock() &&
        lastInit->isBeforeInBlock(user))
      lastInit = user;
  OpBuilder b(ctx);
  b.setInsertionPointAfter(lastInit);
  Value empty = tilegpu::AllocMBarriersOp::create(b, loc, ring.full.getType(),
                                                  IntegerAttr());
  for (int64_t s = 0; s < slots; ++s)
    tilegpu::MBarrierInitOp::create(b, loc, empty, constI32(b, loc, s),
                                    constI32(b, loc, consumerThreads));
  for (scf::IfOp ifOp : ring.prologue)
    ifOp.erase();

  // The split, where the loop (or the persistent loop) was; it and the
  // rest of the kernel become the consumers'.
  Operation *splitAt = persistent ? persistent->loop : ring.loop;
  b.setInsertionPoint(splitAt);
  Value tid = NVVM::ThreadIdXOp::create(b, loc, b.getI32Type());
  Value isProducer =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::uge, tid,
                            constI32(b, loc, consumerThreads));
  auto split = scf::IfOp::create(b, loc, isProducer, /*withElseRegion=*/true);
  split->setAttr(
      tilegpu::WarpSpecializedAttr::getAttrName(),
      tilegpu::WarpSpecializedAttr::get(ctx, consumerWarps, kProducerWarps));
  b.setInsertionPoint(split.thenBlock()->getTerminator());
  if (persistent)
    buildPersistentProducer(b, loc, ring, *persistent, empty, slots, registers);
  else
    buildProducer(b, loc, ring, empty, slots, registers);

  Block *consumer = split.elseBlock();
  b.setInsertionPoint(consumer->getTerminator());
  NVVM::SetMaxRegisterOp::create(b, loc, registers.consumer,
                                 NVVM::SetMaxRegisterAction::increase);
  Block *entry = split->getBlock();
  Operation *returnOp = entry->getTerminator();
  consumer->getOperations().splice(
      consumer->getTerminator()->getIterator(), entry->getOperations(),
      splitAt->getIterator(), returnOp->getIterator());
  if (persistent) {
    countConsumerSlots(b, ring, *persistent, empty, slots);
    return success();
  }
  trimConsumerLoop(b, ring, empty, slots);
  if (withPingPong && !ring.inFlight() && consumerWarps == 8)
    pingPong(b, ring, tid, consumerThreads);

  // The empty barriers go where the full ones are invalidated.
  Operation *lastInval = nullptr;
  for (auto inval : consumer->getOps<tilegpu::MBarrierInvalOp>())
    if (inval.getBarriers() == ring.full.getResult())
      lastInval = inval;
  if (lastInval) {
    b.setInsertionPointAfter(lastInval);
    for (int64_t s = 0; s < slots; ++s)
      tilegpu::MBarrierInvalOp::create(b, loc, empty, constI32(b, loc, s));
  }
  return success();
}

struct TileWarpSpecializePass
    : tile::impl::TileWarpSpecializeBase<TileWarpSpecializePass> {
  using TileWarpSpecializeBase::TileWarpSpecializeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto warps = module->getAttrOfType<IntegerAttr>(kNumWarpsAttr);
    if (!warps) {
      module.emitError("tile-warp-specialize needs tile-map-threads first");
      return signalPassFailure();
    }
    if (rings != "all" && rings != "attention") {
      module.emitError() << "tile-warp-specialize: rings must be all or "
                            "attention, not '"
                         << rings << "'";
      return signalPassFailure();
    }
    for (int32_t count :
         {int32_t(producerRegisters), int32_t(consumerRegisters)})
      if (count < 24 || count > 256 || count % 8) {
        module.emitError() << "tile-warp-specialize: setmaxnreg takes a "
                              "multiple of 8 from 24 to 256 registers, not "
                           << count;
        return signalPassFailure();
      }
    // setmaxnreg hands registers between whole warpgroups.
    if (warps.getInt() % 4)
      return;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && func->hasAttr("tile.kernel") &&
          failed(specialize(func, warps.getInt(), rings == "attention",
                            pingPong, persistent,
                            {producerRegisters, consumerRegisters})))
        return signalPassFailure();
  }
};

} // namespace
