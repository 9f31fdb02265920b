//===- TileHostInPlace.cpp - elementwise ops into an operand's buffer -----===//
//
// convert-elementwise-to-linalg and elementwise fusion give every
// linalg.generic a tensor.empty destination: one-shot bufferization then
// allocates a buffer per op. In a loop that carries a tile (acc = acc + x)
// that is a malloc and free per iteration; in an scf.while, whose regions
// pass their buffers along only when each iteration yields values
// equivalent to its arguments, also a copy of the whole tile per iteration
// in the condition region. Writing into the carried tile itself (or into
// another input that dies at the op) makes the yields equivalent.
//
// Only a heuristic: one-shot bufferization checks every in-place write and
// copies where it would be wrong, so this pass cannot change results.
//
//===----------------------------------------------------------------------===//
#include "compiler/Passes.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILEHOSTINPLACE
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;

namespace {

/// Whether `value` owns a buffer that may be overwritten: a tile carried by
/// a loop (1), a linalg result or a load's private copy (2); 0 otherwise
/// (constants, views of arrays, function arguments).
int writableRank(Value value) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return isa<scf::ForOp, scf::WhileOp>(arg.getOwner()->getParentOp()) ? 1
                                                                         : 0;
  Operation *def = value.getDefiningOp();
  if (isa<linalg::LinalgOp>(def))
    return 2;
  if (auto toTensor = dyn_cast<bufferization::ToTensorOp>(def))
    return toTensor.getWritable() ? 2 : 0;
  return 0;
}

/// Whether `op` runs at most once per definition of `value`: only scf.if
/// branches lie between them (inside a loop, overwriting a value defined
/// outside it would clobber it for the next iteration).
bool oncePerDefinition(Value value, Operation *op) {
  Region *home = value.getParentRegion();
  for (Region *r = op->getParentRegion(); r != home;) {
    Operation *parent = r ? r->getParentOp() : nullptr;
    if (!parent || !isa<scf::IfOp>(parent))
      return false;
    r = parent->getParentRegion();
  }
  return true;
}

/// Whether `user` has read the value when `op` runs, or runs on a path
/// that excludes `op` (the other branch of an scf.if): it cannot see `op`
/// overwrite it.
bool readsBefore(Operation *user, Operation *op) {
  for (Operation *a = op; a; a = a->getParentOp()) {
    Operation *b = a->getBlock()->findAncestorOpInBlock(*user);
    if (!b)
      continue;
    // b == a: `user` is in another region of `a` than `op`.
    return b == a ? isa<scf::IfOp>(a) : b->isBeforeInBlock(a);
  }
  return false;
}

/// The input of `generic` to write the result into, or null.
OpOperand *chooseDestination(linalg::GenericOp generic) {
  if (generic.getNumDpsInits() != 1 || generic->getNumResults() != 1 ||
      generic.getNumReductionLoops() != 0)
    return nullptr;
  OpOperand *init = generic.getDpsInitOperand(0);
  if (!init->get().getDefiningOp<tensor::EmptyOp>() ||
      generic.payloadUsesValueFromOperand(init))
    return nullptr;
  // Bufferization writes in place only through identity maps: reading
  // element i and writing element i in one iteration.
  if (!generic.getMatchingIndexingMap(init).isIdentity())
    return nullptr;
  auto readElementwise = [&](Value x) {
    return llvm::all_of(generic.getDpsInputOperands(), [&](OpOperand *o) {
      return o->get() != x || generic.getMatchingIndexingMap(o).isIdentity();
    });
  };
  OpOperand *best = nullptr;
  int bestRank = 0;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    Value x = input->get();
    int rank = writableRank(x);
    if (x.getType() != init->get().getType() || !rank ||
        (best && rank >= bestRank) || !readElementwise(x) ||
        !oncePerDefinition(x, generic))
      continue;
    if (llvm::all_of(x.getUsers(), [&](Operation *user) {
          return user == generic || readsBefore(user, generic);
        })) {
      best = input;
      bestRank = rank;
    }
  }
  return best;
}

/// Permutes the arguments of `loop`'s condition region (with its inits and
/// the body's yield) so that an argument the condition passes on unchanged
/// sits at the position it is passed to. Bufferization pairs a condition
/// region's arguments with scf.condition's operands, and the body's
/// arguments with its yield's, by position: it forwards a buffer without a
/// copy only where the two pairs agree, which the canonicalizer breaks when
/// it drops a value the body does not use (a loop's `stop` flag).
void alignConditionArgs(scf::WhileOp loop) {
  Block &before = loop.getBefore().front();
  unsigned n = before.getNumArguments();
  SmallVector<int> oldAt(n, -1); // new position -> old argument
  SmallVector<bool> placed(n, false);
  for (auto [pos, v] : llvm::enumerate(loop.getConditionOp().getArgs())) {
    auto arg = dyn_cast<BlockArgument>(v);
    if (pos < n && arg && arg.getOwner() == &before &&
        !placed[arg.getArgNumber()]) {
      oldAt[pos] = arg.getArgNumber();
      placed[arg.getArgNumber()] = true;
    }
  }
  unsigned next = 0; // the others fill the free positions in order
  for (int &old : oldAt) {
    if (old >= 0)
      continue;
    while (placed[next])
      ++next;
    old = next;
    placed[next] = true;
  }
  if (llvm::all_of(llvm::enumerate(oldAt),
                   [](auto p) { return int(p.index()) == p.value(); }))
    return;

  OpBuilder b(loop);
  auto permute = [&](ValueRange values) {
    SmallVector<Value> out;
    for (int old : oldAt)
      out.push_back(values[old]);
    return out;
  };
  auto newLoop = scf::WhileOp::create(b, loop.getLoc(), loop.getResultTypes(),
                                      permute(loop.getInits()));
  newLoop.getAfter().takeBody(loop.getAfter());
  scf::YieldOp yield = newLoop.getYieldOp();
  yield->setOperands(permute(yield.getOperands()));
  SmallVector<Type> types;
  SmallVector<Location> locs;
  for (int old : oldAt) {
    types.push_back(before.getArgument(old).getType());
    locs.push_back(before.getArgument(old).getLoc());
  }
  Block *block = b.createBlock(&newLoop.getBefore(), {}, types, locs);
  for (auto [pos, old] : llvm::enumerate(oldAt))
    before.getArgument(old).replaceAllUsesWith(block->getArgument(pos));
  block->getOperations().splice(block->end(), before.getOperations());
  loop.replaceAllUsesWith(newLoop.getResults());
  loop.erase();
}

struct TileHostInPlacePass
    : tile::impl::TileHostInPlaceBase<TileHostInPlacePass> {
  void runOnOperation() override {
    SmallVector<scf::WhileOp> loops;
    getOperation().walk([&](scf::WhileOp loop) { loops.push_back(loop); });
    for (scf::WhileOp loop : loops)
      alignConditionArgs(loop);
    getOperation().walk([](linalg::GenericOp generic) {
      if (OpOperand *input = chooseDestination(generic))
        generic.getDpsInitOperand(0)->set(input->get());
    });
  }
};

} // namespace
