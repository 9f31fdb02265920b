//===- TileClusterMulticast.cpp - TMA copies shared by a cluster of two ---===//
//
// The tile-cluster-multicast pass. A kernel that asks for thread-block
// clusters (`tile.num_ctas`, cuTile's hint) and whose ring has a producer
// (tile-warp-specialize) runs as clusters of two neighbouring blocks along
// grid axis 0, and a block both of them copy is read from L2 once: TMA
// multicasts it into both CTAs' rings, each CTA issuing half of its panels.
// A matmul's blocks 2c and 2c + 1 in grouped order share their B block;
// attention's neighbouring query blocks share every K and V block.
//
// Which copies are shared is decided at run time: the producer evaluates
// the copy's coordinates at the other CTA's block index (the slice from
// `tile.bid 0` to the coordinates, cloned with the peer's index), and the
// CTAs share a copy when both reach the same box. Both compute the same
// answer, so each knows whom to expect bytes from. Every copy still lands
// on the destination CTA's own "full" barrier with the same byte count.
//
// A slot may be refilled only when both CTAs' consumers released it: a
// consumer warp's first lane also arrives on the other CTA's "empty"
// barrier, whose count grows by the consumer warps. Before the split the
// block's barriers are made visible to the cluster (barrier.cluster), and
// at the end neither CTA leaves while the other may still arrive on its
// barriers; the empty barriers are invalidated only then. They are
// allocated before the ring, so the bytes past them stay free for the
// epilogue's scratch once the ring is dead.
//
// A launch with an odd number of blocks along axis 0 runs without
// clusters (the runtime forms them only when the grid divides): the kernel
// reads %cluster_nctarank and then shares nothing and expects no peer.
//
// A persistent producer (the copies' loop in the body of a walk over the
// tiles: an scf.for from `tile.bid 0`, or an scf.while whose carried index
// starts there, is compared `slt` with a bound and grows by a step) pairs
// its k-th tile with the other CTA's k-th: that tile's index is this one's
// plus the difference of the block indices. The CTAs pair only when both
// walk as many tiles (with an odd number of tiles one pair does not; it
// runs as if unclustered, and so does its kernel's share of the cluster).
//
// Kernels left alone: no warp-specialized ring, copies in another kind of
// loop, or a trip count that depends on the block.
//
//===----------------------------------------------------------------------===//
#include "compiler/Passes.h"
#include "compiler/gpu/TileToGpuCommon.h"
#include "dialects/tile/TileDialect.h"
#include "dialects/tilegpu/TileGpuDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILECLUSTERMULTICAST
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

/// Clusters are pairs of blocks along grid axis 0.
constexpr int64_t kClusterSize = 2;

/// The warp-specialized ring the pass works on.
struct ProducerRing {
  scf::IfOp split;
  scf::ForOp loop; // the producer's loop of copies
  SmallVector<tilegpu::TmaLoadOp> loads;
  Value empty;
  SmallVector<tilegpu::MBarrierInitOp> emptyInits;
  SmallVector<tilegpu::MBarrierArriveOp> releases;
  SmallVector<tilegpu::MBarrierInvalOp> emptyInvals;
  int64_t consumerWarps = 0;
  /// A persistent producer's walk over the tiles (around `loop`): the tile
  /// index it carries starts at `tile.bid 0` and steps by `step` while
  /// below `bound`; the other CTA's index is this one plus the difference
  /// of their block indices. Null for a block-per-tile producer.
  Operation *walk = nullptr;
  Value tile, bound, step;
  /// The walk is an scf.for whose bounds but the upper one are the same in
  /// both CTAs: its k-th iteration is both CTAs' k-th tile, and the upper
  /// bounds must agree.
  bool counted = false;
};

/// The persistent walk around `loop`, when it is the canonical one: an
/// `scf.for` from `tile.bid 0` (to a bound, by a step), or an `scf.while`
/// whose carried index starts at `tile.bid 0`, is compared `slt` with a
/// bound before each iteration and grows by a step at its end.
bool matchWalk(ProducerRing &ring, Operation *walk) {
  auto isBid0 = [](Value v) {
    auto bid = v.getDefiningOp<BidOp>();
    return bid && bid.getAxis() == 0;
  };
  if (auto forOp = dyn_cast<scf::ForOp>(walk)) {
    // range(tile.bid(0), n, step) as the frontend writes it: a count of
    // iterations from 0, the tile computed from it in the body.
    ring.counted = !isBid0(forOp.getLowerBound());
    ring.tile = forOp.getInductionVar();
    ring.bound = forOp.getUpperBound();
    ring.step = forOp.getStep();
  } else if (auto whileOp = dyn_cast<scf::WhileOp>(walk)) {
    scf::ConditionOp cond = whileOp.getConditionOp();
    auto less = cond.getCondition().getDefiningOp<arith::CmpIOp>();
    if (!less || less.getPredicate() != arith::CmpIPredicate::slt)
      return false;
    auto before = dyn_cast<BlockArgument>(less.getLhs());
    if (!before || before.getOwner() != whileOp.getBeforeBody())
      return false;
    unsigned i = before.getArgNumber();
    if (!isBid0(whileOp.getInits()[i]) || cond.getArgs().size() <= i ||
        cond.getArgs()[i] != before)
      return false;
    ring.tile = whileOp.getAfterArguments()[i];
    auto next =
        whileOp.getYieldOp().getResults()[i].getDefiningOp<arith::AddIOp>();
    if (!next || next.getLhs() != ring.tile)
      return false;
    ring.bound = less.getRhs();
    ring.step = next.getRhs();
  } else {
    return false;
  }
  ring.walk = walk;
  return true;
}

/// Whether values depend on the block's index along axis 0; block
/// arguments other than the kernel's and `independent` count as dependent.
class BidDependence {
public:
  BidDependence(func::FuncOp func, ArrayRef<Value> independent)
      : func(func), independent(independent) {}

  bool dependsOnBid(Value v) {
    if (llvm::is_contained(independent, v))
      return false;
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getOwner() != &func.getBody().front();
    auto it = known.find(v);
    if (it != known.end())
      return it->second;
    Operation *def = v.getDefiningOp();
    bool depends = false;
    if (auto bid = dyn_cast<BidOp>(def))
      depends = bid.getAxis() == 0;
    else if (def->getNumRegions())
      depends = true;
    else
      depends = llvm::any_of(def->getOperands(),
                             [&](Value o) { return dependsOnBid(o); });
    known[v] = depends;
    return depends;
  }

private:
  func::FuncOp func;
  SmallVector<Value, 2> independent;
  DenseMap<Value, bool> known;
};

std::optional<ProducerRing> matchProducerRing(func::FuncOp func) {
  ProducerRing ring;
  func.walk([&](scf::IfOp ifOp) {
    if (auto roles = ifOp->getAttrOfType<tilegpu::WarpSpecializedAttr>(
            tilegpu::WarpSpecializedAttr::getAttrName())) {
      ring.consumerWarps = ring.split ? 0 : roles.getConsumers();
      ring.split = ifOp;
    }
  });
  if (!ring.split || !ring.consumerWarps ||
      ring.split->getBlock() != &func.getBody().front())
    return std::nullopt;
  ring.split.getThenRegion().walk(
      [&](tilegpu::TmaLoadOp load) { ring.loads.push_back(load); });
  if (ring.loads.empty())
    return std::nullopt;
  ring.loop = dyn_cast<scf::ForOp>(ring.loads.front()->getParentOp());
  if (!ring.loop || llvm::any_of(ring.loads, [&](tilegpu::TmaLoadOp load) {
        return load->getParentOp() != ring.loop.getOperation() ||
               load.getCtaMask();
      }))
    return std::nullopt;
  // The copies' loop is the producer's, or in the body of its walk.
  Operation *walk = ring.loop->getParentOp();
  if (ring.loop->getBlock() != ring.split.thenBlock() &&
      (walk->getBlock() != ring.split.thenBlock() || !matchWalk(ring, walk)))
    return std::nullopt;
  // The producer's wait for released slots names the empty barriers.
  ring.loop.walk([&](tilegpu::MBarrierWaitOp wait) {
    ring.empty = ring.empty && ring.empty != wait.getBarriers()
                     ? Value()
                     : wait.getBarriers();
  });
  if (!ring.empty || !ring.empty.getDefiningOp<tilegpu::AllocMBarriersOp>() ||
      llvm::any_of(ring.loads, [&](tilegpu::TmaLoadOp load) {
        return load.getBarriers() == ring.empty;
      }))
    return std::nullopt;
  for (Operation *user : ring.empty.getUsers()) {
    if (auto init = dyn_cast<tilegpu::MBarrierInitOp>(user))
      ring.emptyInits.push_back(init);
    else if (auto arrive = dyn_cast<tilegpu::MBarrierArriveOp>(user))
      ring.releases.push_back(arrive);
    else if (auto inval = dyn_cast<tilegpu::MBarrierInvalOp>(user))
      ring.emptyInvals.push_back(inval);
    else if (!isa<tilegpu::MBarrierWaitOp>(user))
      return std::nullopt;
  }
  if (ring.releases.empty() || ring.emptyInits.empty() ||
      llvm::any_of(ring.releases,
                   [&](tilegpu::MBarrierArriveOp arrive) {
                     return arrive.getCta() ||
                            !ring.split.getElseRegion().isAncestor(
                                arrive->getParentRegion());
                   }) ||
      llvm::any_of(ring.emptyInits, [&](tilegpu::MBarrierInitOp init) {
        return init->getBlock() != ring.split->getBlock();
      }))
    return std::nullopt;
  // The prologue goes before the first of the empty barriers' inits.
  llvm::sort(ring.emptyInits,
             [](tilegpu::MBarrierInitOp a, tilegpu::MBarrierInitOp b) {
               return a->isBeforeInBlock(b);
             });
  return ring;
}

/// Whether `def` may be computed again elsewhere: pure, one result, no
/// regions.
bool recomputable(Operation *def) {
  return def && isMemoryEffectFree(def) && !def->getNumRegions() &&
         def->getNumResults() == 1;
}

/// The value `v` has in the cluster's other CTA: its bid-dependent slice
/// cloned with `tile.bid 0` replaced by `peerBid`, ops from before the
/// producer's loop at its start, the loop's own before `at`. Null when the
/// slice has an op that cannot be recomputed.
Value peerValue(Value v, Value peerBid, BidDependence &dependence,
                IRMapping &peer, scf::ForOp loop, Operation *at) {
  if (!dependence.dependsOnBid(v))
    return v;
  if (Value known = peer.lookupOrNull(v))
    return known;
  Operation *def = v.getDefiningOp();
  if (!def)
    return {};
  if (auto bid = dyn_cast<BidOp>(def)) {
    peer.map(v, peerBid);
    return peerBid;
  }
  if (!recomputable(def))
    return {};
  for (Value operand : def->getOperands())
    if (!peerValue(operand, peerBid, dependence, peer, loop, at))
      return {};
  OpBuilder b(loop->isAncestor(def) ? at : loop.getOperation());
  return b.clone(*def, peer)->getResult(0);
}

/// `v` computed at `b`'s insertion point: itself where it is available
/// there, else its slice cloned (pure ops, no block arguments). Null when
/// it cannot be.
Value hoist(Value v, OpBuilder &b) {
  Block *at = b.getInsertionBlock();
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() == at ? v : Value();
  Operation *def = v.getDefiningOp();
  if (def->getBlock() == at && def->isBeforeInBlock(&*b.getInsertionPoint()))
    return v;
  if (!recomputable(def))
    return {};
  IRMapping map;
  for (Value operand : def->getOperands()) {
    Value here = hoist(operand, b);
    if (!here)
      return {};
    map.map(operand, here);
  }
  return b.clone(*def, map)->getResult(0);
}

/// hoist(v) as the cluster's other CTA computes it (`tile.bid 0` replaced
/// by `peerBid`).
Value peerAt(Value v, Value peerBid, BidDependence &dependence, OpBuilder &b) {
  if (!dependence.dependsOnBid(v))
    return hoist(v, b);
  Operation *def = v.getDefiningOp();
  if (auto bid = dyn_cast_or_null<BidOp>(def))
    return peerBid;
  if (!recomputable(def))
    return {};
  IRMapping map;
  for (Value operand : def->getOperands()) {
    Value there = peerAt(operand, peerBid, dependence, b);
    if (!there)
      return {};
    map.map(operand, there);
  }
  return b.clone(*def, map)->getResult(0);
}

/// Whether hoist() can compute `v` before `at` (an op of the entry block).
bool canHoist(Value v, Operation *at) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner() == at->getBlock();
  Operation *def = v.getDefiningOp();
  if (def->getBlock() == at->getBlock() && def->isBeforeInBlock(at))
    return true;
  return recomputable(def) && llvm::all_of(def->getOperands(), [&](Value o) {
           return canHoist(o, at);
         });
}

/// Whether peerAt() can compute `v` before `at`.
bool canPeerAt(Value v, BidDependence &dependence, Operation *at) {
  if (!dependence.dependsOnBid(v))
    return canHoist(v, at);
  Operation *def = v.getDefiningOp();
  if (auto bid = dyn_cast_or_null<BidOp>(def))
    return true;
  return recomputable(def) && llvm::all_of(def->getOperands(), [&](Value o) {
           return canPeerAt(o, dependence, at);
         });
}

void addClusterBarrier(OpBuilder &b, Location loc) {
  NVVM::ClusterArriveOp::create(b, loc, /*aligned=*/UnitAttr());
  NVVM::ClusterWaitOp::create(b, loc, /*aligned=*/UnitAttr());
}

void shareCopies(func::FuncOp func, ProducerRing &ring) {
  Location loc = ring.split.getLoc();
  OpBuilder b(func.getContext());
  Block &entry = func.getBody().front();
  b.setInsertionPoint(ring.emptyInits.front());
  Type i32 = b.getI32Type();
  Value ctas = NVVM::ClusterDim::create(b, loc, i32);
  Value clustered = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          ctas, constI32(b, loc, kClusterSize));
  Value rank = NVVM::ClusterId::create(b, loc, i32);
  Value peerRank = arith::XOrIOp::create(b, loc, rank, constI32(b, loc, 1));
  Value bid = BidOp::create(b, loc, b.getI32IntegerAttr(0));
  Value peerBid = arith::XOrIOp::create(b, loc, bid, constI32(b, loc, 1));
  IRMapping peer;
  BidDependence dependence(func, {ring.loop.getInductionVar()});
  if (ring.counted) {
    // Both CTAs count the same iterations: they must stop at the same one.
    clustered = arith::AndIOp::create(
        b, loc, clustered,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                              hoist(ring.bound, b),
                              peerAt(ring.bound, peerBid, dependence, b)));
    dependence = BidDependence(func, {ring.loop.getInductionVar(), ring.tile});
  } else if (ring.walk) {
    // A walk pairs only when both CTAs take as many tiles: then their
    // k-th tiles go together (an odd number of tiles leaves one pair
    // uneven, which runs unclustered).
    Value bound = hoist(ring.bound, b), step = hoist(ring.step, b);
    auto tilesFrom = [&](Value first) -> Value {
      Value left = arith::SubIOp::create(b, loc, bound, first);
      return arith::MaxSIOp::create(
          b, loc, arith::CeilDivSIOp::create(b, loc, left, step),
          constI32(b, loc, 0));
    };
    clustered = arith::AndIOp::create(
        b, loc, clustered,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tilesFrom(bid),
                              tilesFrom(peerBid)));
    // The other CTA's tile: this one's plus the difference of the blocks.
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ring.tile.getParentBlock());
    peer.map(ring.tile,
             arith::AddIOp::create(
                 b, loc, ring.tile,
                 arith::SubIOp::create(b, loc, peerBid, bid).getResult()));
  }

  // The other CTA's consumer warps release every slot too.
  for (tilegpu::MBarrierInitOp init : ring.emptyInits) {
    b.setInsertionPoint(init);
    Value peers = arith::SelectOp::create(b, loc, clustered,
                                          constI32(b, loc, ring.consumerWarps),
                                          constI32(b, loc, 0));
    init.getCountMutable().assign(
        arith::AddIOp::create(b, loc, init.getCount(), peers));
  }
  b.setInsertionPoint(ring.split);
  addClusterBarrier(b, loc);

  // Each copy is shared when the other CTA copies the same box.
  Value self16 = arith::TruncIOp::create(
      b, loc, b.getI16Type(),
      arith::ShLIOp::create(b, loc, constI32(b, loc, 1), rank));
  for (tilegpu::TmaLoadOp load : ring.loads) {
    Value same = clustered;
    for (Value coord : load.getCoords()) {
      Value other =
          peerValue(coord, peerBid, dependence, peer, ring.loop, load);
      if (!other) {
        same = {};
        break;
      }
      if (other == coord)
        continue;
      b.setInsertionPoint(load);
      same = arith::AndIOp::create(
          b, loc, same,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, coord,
                                other));
    }
    if (!same)
      continue;
    b.setInsertionPoint(load);
    Value both = arith::ConstantIntOp::create(b, loc, b.getI16Type(),
                                              (1 << kClusterSize) - 1);
    load.getCtaMaskMutable().assign(
        arith::SelectOp::create(b, loc, same, both, self16));
    load.getClusterRankMutable().assign(rank);
    load.setClusterSizeAttr(b.getI64IntegerAttr(kClusterSize));
  }

  // A consumer warp's first lane releases the slot in the other CTA too.
  for (tilegpu::MBarrierArriveOp release : ring.releases) {
    b.setInsertionPointAfter(release);
    Value lane = NVVM::LaneIdOp::create(b, loc, i32);
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                        constI32(b, loc, 0));
    auto ifFirst = scf::IfOp::create(
        b, loc, arith::AndIOp::create(b, loc, clustered, first),
        /*withElseRegion=*/false);
    b.setInsertionPoint(ifFirst.thenBlock()->getTerminator());
    tilegpu::MBarrierArriveOp::create(b, loc, release.getBarriers(),
                                      release.getIndex(), peerRank);
  }

  // Neither CTA leaves while the other may arrive on its barriers.
  b.setInsertionPoint(entry.getTerminator());
  addClusterBarrier(b, loc);
  for (tilegpu::MBarrierInvalOp inval : ring.emptyInvals) {
    for (OpOperand &operand : inval->getOpOperands())
      if (Operation *def = operand.get().getDefiningOp();
          def && def->hasTrait<OpTrait::ConstantLike>() &&
          def->getBlock() != &entry)
        operand.set(b.clone(*def)->getResult(0));
    inval->moveBefore(entry.getTerminator());
  }
  // The empty barriers now outlive the ring: allocated first, they take the
  // lowest bytes (tile-allocate-shared fits buffers in program order), so
  // the epilogue's scratch after the loop can still reuse the dead ring.
  // Past them it did not fit: clustered attention at D 128 asked for 256 KB.
  Operation *emptyAlloc = ring.empty.getDefiningOp();
  auto buffers = entry.getOps<tilegpu::AllocSharedOp>();
  if (!buffers.empty() && emptyAlloc->getBlock() == &entry &&
      (*buffers.begin())->isBeforeInBlock(emptyAlloc))
    emptyAlloc->moveBefore(*buffers.begin());
  func->setAttr(kClusterSizeAttr, b.getI64IntegerAttr(kClusterSize));
}

struct TileClusterMulticastPass
    : tile::impl::TileClusterMulticastBase<TileClusterMulticastPass> {
  using TileClusterMulticastBase::TileClusterMulticastBase;

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      auto ctas = func->getAttrOfType<IntegerAttr>("tile.num_ctas");
      if (func.isExternal() || !func->hasAttr("tile.kernel") || !ctas ||
          ctas.getInt() < kClusterSize)
        continue;
      std::optional<ProducerRing> ring = matchProducerRing(func);
      if (!ring)
        continue;
      // Both CTAs must copy as many blocks per tile, and walk the tiles
      // with a bound and a step they share.
      BidDependence dependence(func, {});
      if (llvm::any_of(ring->loop->getOperands(),
                       [&](Value v) { return dependence.dependsOnBid(v); }))
        continue;
      Operation *prologue = ring->emptyInits.front();
      if (ring->walk && !ring->counted &&
          (dependence.dependsOnBid(ring->bound) ||
           dependence.dependsOnBid(ring->step) ||
           !canHoist(ring->bound, prologue) || !canHoist(ring->step, prologue)))
        continue;
      auto lower = ring->counted ? cast<scf::ForOp>(ring->walk).getLowerBound()
                                 : Value();
      if (ring->counted && (dependence.dependsOnBid(lower) ||
                            dependence.dependsOnBid(ring->step) ||
                            !canHoist(ring->bound, prologue) ||
                            !canPeerAt(ring->bound, dependence, prologue)))
        continue;
      shareCopies(func, *ring);
    }
  }
};

} // namespace
