//===- TileSplitUniformMasks.cpp - mask only where a mask is not all true -===//
//
// The tile-split-uniform-masks pass. Causal attention written as one loop
// masks every key block, `where(rows >= cols, s, -inf)`, although only the
// blocks on the diagonal have a false element: the compare and the select
// cost two or three instructions per score beside the softmax's four or
// five. FlashAttention masks only the diagonal blocks; this pass finds that
// split itself.
//
// A select inside an scf.for whose condition compares two integer tiles
// whose elements lie in known ranges, affine in the induction variable (a
// scalar splat plus an iota, scaled by constants, through broadcasts and
// shape ops), is all true wherever the smallest element of one side beats
// the largest of the other: `g(iv) = k * iv + e >= 0` with k a constant.
// Conjunctions (`&`) of such compares need every part true. Parts with
// k < 0 hold up to some iteration, parts with k > 0 from some iteration on,
// and parts with k = 0 everywhere or nowhere: the all-true iterations form
// one interval, computed in front of the loop. The loop is cut into up to
// three loops (masked head, unmasked middle, masked tail) that carry their
// values from one to the next, and the middle one's selects take their true
// operand (the compare and the index arithmetic then fall away).
//
// On the GPU it runs on the asynchronous level, after
// tile-overlap-mma-chain, so the cut falls into the consumer loop of a
// warp-specialized kernel: the producer streams the ring through every
// part, whose slots and phases follow the induction variable; an earlier
// cut would give each part its own ring, cold at the start (as a user's
// two-loop form does). The CPU runs it at the start of the host stage.
//
// The bounds are computed in i64 from the program's i32 values, which the
// comparison takes not to wrap.
//
//===----------------------------------------------------------------------===//
#include "compiler/Passes.h"
#include "dialects/tile/TileDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tile {
#define GEN_PASS_DEF_TILESPLITUNIFORMMASKS
#include "compiler/Passes.h.inc"
} // namespace mlir::tile

using namespace mlir;
using namespace mlir::tile;

namespace {

/// `ivCoef * iv + sum(value * factor) + constant`, every value defined
/// outside the loop.
struct Affine {
  int64_t ivCoef = 0;
  SmallVector<std::pair<Value, int64_t>> terms;
  int64_t constant = 0;

  Affine scaled(int64_t c) const {
    Affine r = *this;
    r.ivCoef *= c;
    r.constant *= c;
    for (auto &term : r.terms)
      term.second *= c;
    return r;
  }
  Affine plus(const Affine &other, int64_t sign = 1) const {
    Affine r = *this;
    r.ivCoef += sign * other.ivCoef;
    r.constant += sign * other.constant;
    for (auto [value, factor] : other.terms)
      r.terms.push_back({value, sign * factor});
    return r;
  }
};

/// The elements of an integer tile lie in [base + low, base + high].
struct Range {
  Affine base;
  int64_t low = 0, high = 0;
  Affine lowest() const { return base.plus(constantAffine(low)); }
  Affine highest() const { return base.plus(constantAffine(high)); }
  static Affine constantAffine(int64_t c) {
    Affine a;
    a.constant = c;
    return a;
  }
};

/// Recursion bound of the analysis (index arithmetic is shallow).
constexpr int kMaxDepth = 16;

class MaskAnalysis {
public:
  explicit MaskAnalysis(scf::ForOp loop) : loop(loop) {}

  /// Conditions `g(iv) >= 0` under which every element of `cond` is true.
  std::optional<SmallVector<Affine>> allTrueWhen(Value cond, int depth = 0) {
    if (depth > kMaxDepth)
      return std::nullopt;
    Operation *def = cond.getDefiningOp();
    if (!def)
      return std::nullopt;
    // A splat of a scalar condition: a mask of its one value.
    if (isShapeOp(def) || isa<SplatOp>(def))
      return allTrueWhen(def->getOperand(0), depth + 1);
    if (auto both = dyn_cast<arith::AndIOp>(def)) {
      auto lhs = allTrueWhen(both.getLhs(), depth + 1);
      auto rhs = allTrueWhen(both.getRhs(), depth + 1);
      if (!lhs || !rhs)
        return std::nullopt;
      lhs->append(rhs->begin(), rhs->end());
      return lhs;
    }
    auto cmp = dyn_cast<arith::CmpIOp>(def);
    if (!cmp)
      return std::nullopt;
    std::optional<Range> lhs = range(cmp.getLhs(), depth + 1);
    std::optional<Range> rhs = range(cmp.getRhs(), depth + 1);
    if (!lhs || !rhs)
      return std::nullopt;
    // greater >= smaller + strict, for every pair of elements.
    auto atLeast = [](const Range &greater, const Range &smaller,
                      int64_t strict) {
      return SmallVector<Affine>{greater.lowest()
                                     .plus(smaller.highest(), -1)
                                     .plus(Range::constantAffine(-strict))};
    };
    switch (cmp.getPredicate()) {
    case arith::CmpIPredicate::sge:
      return atLeast(*lhs, *rhs, 0);
    case arith::CmpIPredicate::sgt:
      return atLeast(*lhs, *rhs, 1);
    case arith::CmpIPredicate::sle:
      return atLeast(*rhs, *lhs, 0);
    case arith::CmpIPredicate::slt:
      return atLeast(*rhs, *lhs, 1);
    default:
      return std::nullopt;
    }
  }

private:
  static bool isShapeOp(Operation *op) {
    return isa<BroadcastOp, ExpandDimsOp, ReshapeOp, PermuteOp,
               ConvertLayoutOp>(op);
  }

  bool isOutsideLoop(Value v) {
    return !loop->isAncestor(v.getParentRegion()->getParentOp());
  }

  std::optional<Affine> scalar(Value v, int depth) {
    if (depth > kMaxDepth || !v.getType().isSignlessIntOrIndex())
      return std::nullopt;
    APInt value;
    if (matchPattern(v, m_ConstantInt(&value)))
      return Range::constantAffine(value.getSExtValue());
    if (v == loop.getInductionVar()) {
      Affine a;
      a.ivCoef = 1;
      return a;
    }
    if (isOutsideLoop(v)) {
      Affine a;
      a.terms.push_back({v, 1});
      return a;
    }
    Operation *def = v.getDefiningOp();
    if (!def)
      return std::nullopt; // another block argument of the loop
    if (isa<arith::ExtSIOp, arith::IndexCastOp>(def))
      return scalar(def->getOperand(0), depth + 1);
    if (isa<arith::AddIOp, arith::SubIOp>(def)) {
      auto lhs = scalar(def->getOperand(0), depth + 1);
      auto rhs = scalar(def->getOperand(1), depth + 1);
      if (!lhs || !rhs)
        return std::nullopt;
      return lhs->plus(*rhs, isa<arith::AddIOp>(def) ? 1 : -1);
    }
    if (isa<arith::MulIOp>(def)) {
      for (int i : {0, 1}) {
        APInt c;
        if (!matchPattern(def->getOperand(1 - i), m_ConstantInt(&c)))
          continue;
        if (auto other = scalar(def->getOperand(i), depth + 1))
          return other->scaled(c.getSExtValue());
      }
    }
    return std::nullopt;
  }

  std::optional<Range> range(Value v, int depth) {
    if (depth > kMaxDepth)
      return std::nullopt;
    if (v.getType().isSignlessIntOrIndex()) { // a scalar is a range of one
      if (auto base = scalar(v, depth + 1))
        return Range{*base, 0, 0};
      return std::nullopt;
    }
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.getElementType().isSignlessInteger())
      return std::nullopt;
    APInt value;
    if (matchPattern(v, m_ConstantInt(&value))) // a splat constant
      return Range{Range::constantAffine(value.getSExtValue()), 0, 0};
    Operation *def = v.getDefiningOp();
    if (!def)
      return std::nullopt;
    if (isShapeOp(def))
      return range(def->getOperand(0), depth + 1);
    if (auto splat = dyn_cast<SplatOp>(def)) {
      if (auto base = scalar(splat.getSrc(), depth + 1))
        return Range{*base, 0, 0};
      return std::nullopt;
    }
    if (isa<IotaOp>(def))
      return Range{Affine(), 0, type.getNumElements() - 1};
    if (isa<arith::AddIOp, arith::SubIOp>(def)) {
      auto lhs = range(def->getOperand(0), depth + 1);
      auto rhs = range(def->getOperand(1), depth + 1);
      if (!lhs || !rhs)
        return std::nullopt;
      if (isa<arith::AddIOp>(def))
        return Range{lhs->base.plus(rhs->base), lhs->low + rhs->low,
                     lhs->high + rhs->high};
      return Range{lhs->base.plus(rhs->base, -1), lhs->low - rhs->high,
                   lhs->high - rhs->low};
    }
    if (isa<arith::MulIOp>(def)) {
      for (int i : {0, 1}) {
        APInt c;
        if (!matchPattern(def->getOperand(1 - i), m_ConstantInt(&c)))
          continue;
        auto other = range(def->getOperand(i), depth + 1);
        if (!other)
          return std::nullopt;
        int64_t factor = c.getSExtValue();
        int64_t a = other->low * factor, b = other->high * factor;
        return Range{other->base.scaled(factor), std::min(a, b),
                     std::max(a, b)};
      }
    }
    return std::nullopt;
  }

  scf::ForOp loop;
};

Value toI64(OpBuilder &b, Location loc, Value v) {
  Type i64 = b.getI64Type();
  if (v.getType().isIndex())
    return arith::IndexCastOp::create(b, loc, i64, v);
  if (v.getType() == i64)
    return v;
  return arith::ExtSIOp::create(b, loc, i64, v);
}

/// Emits `a` as an i64 in front of the loop.
Value emitAffine(OpBuilder &b, Location loc, const Affine &a) {
  Type i64 = b.getI64Type();
  Value sum = arith::ConstantIntOp::create(b, loc, i64, a.constant);
  for (auto [value, factor] : a.terms) {
    Value c = arith::ConstantIntOp::create(b, loc, i64, factor);
    sum = arith::AddIOp::create(
        b, loc, sum,
        arith::MulIOp::create(b, loc, toI64(b, loc, value), c).getResult());
  }
  return sum;
}

Value fromI64(OpBuilder &b, Location loc, Value v, Type type) {
  if (type.isIndex())
    return arith::IndexCastOp::create(b, loc, type, v);
  if (type == b.getI64Type())
    return v;
  return arith::TruncIOp::create(b, loc, type, v);
}

/// One loop to cut: the selects whose condition is all true on an interval
/// of iterations, and that condition.
struct Cut {
  scf::ForOp loop;
  SmallVector<arith::SelectOp> selects;
  SmallVector<Affine> conditions;
  // Parts that turn true as iv grows (k > 0): masked iterations before the
  // interval; parts that turn false (k < 0) or do not depend on iv: after.
  bool maskedHead = false, maskedTail = false;
};

std::optional<Cut> findCut(scf::ForOp loop) {
  // The bounds are computed with signed arithmetic.
  APInt step;
  if (loop.getUnsignedCmp() ||
      !matchPattern(loop.getStep(), m_ConstantInt(&step)) ||
      step.getSExtValue() <= 0)
    return std::nullopt;
  MaskAnalysis analysis(loop);
  std::optional<Cut> cut;
  loop.getBody()->walk([&](arith::SelectOp select) {
    if (select->getParentOfType<scf::ForOp>() != loop)
      return;
    if (cut) { // one condition per loop: the selects that share it
      if (select.getCondition() == cut->selects.front().getCondition())
        cut->selects.push_back(select);
      return;
    }
    auto conditions = analysis.allTrueWhen(select.getCondition());
    if (!conditions)
      return;
    Cut candidate{loop, {select}, std::move(*conditions)};
    bool dependsOnIv = false;
    for (const Affine &g : candidate.conditions) {
      candidate.maskedHead |= g.ivCoef > 0;
      candidate.maskedTail |= g.ivCoef <= 0;
      dependsOnIv |= g.ivCoef != 0;
    }
    if (dependsOnIv) // a mask the loop does not change is not this pass's
      cut = std::move(candidate);
  });
  return cut;
}

Value constantI64(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIntOp::create(b, loc, b.getI64Type(), value);
}

/// The interval [start, end) of iteration values whose masks are all true,
/// as the iteration values that begin and end it within [lb, ub] (end is
/// start when the interval is empty); each only where a masked loop lies
/// on that side.
std::pair<Value, Value> emitInterval(OpBuilder &b, const Cut &cut) {
  scf::ForOp loop = cut.loop;
  Location loc = loop.getLoc();
  Value lb = toI64(b, loc, loop.getLowerBound());
  Value ub =
      arith::MaxSIOp::create(b, loc, toI64(b, loc, loop.getUpperBound()), lb);
  Value step = toI64(b, loc, loop.getStep());
  Value zero = constantI64(b, loc, 0);
  Value start = lb, end = ub, invariantOk;
  for (const Affine &g : cut.conditions) {
    // g = k * iv + e >= 0.
    Affine rest = g;
    int64_t k = rest.ivCoef;
    rest.ivCoef = 0;
    Value e = emitAffine(b, loc, rest);
    if (k < 0) { // true up to floor(e / -k)
      Value last =
          arith::FloorDivSIOp::create(b, loc, e, constantI64(b, loc, -k));
      end = arith::MinSIOp::create(
          b, loc, end,
          arith::AddIOp::create(b, loc, last, constantI64(b, loc, 1))
              .getResult());
    } else if (k > 0) { // true from ceil(-e / k) on
      Value negE = arith::SubIOp::create(b, loc, zero, e);
      start = arith::MaxSIOp::create(
          b, loc, start,
          arith::CeilDivSIOp::create(b, loc, negE, constantI64(b, loc, k))
              .getResult());
    } else { // true for every iteration or none
      Value ok =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, e, zero);
      invariantOk =
          invariantOk ? arith::AndIOp::create(b, loc, invariantOk, ok) : ok;
    }
  }
  // The first iteration value lb + n * step >= x, within [lb, ub].
  auto align = [&](Value x) -> Value {
    Value ahead = arith::MaxSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, x, lb).getResult(), zero);
    Value steps = arith::CeilDivSIOp::create(b, loc, ahead, step);
    Value aligned = arith::AddIOp::create(
        b, loc, lb, arith::MulIOp::create(b, loc, steps, step).getResult());
    return arith::MinSIOp::create(b, loc, aligned, ub);
  };
  if (cut.maskedHead)
    start = align(start);
  end = arith::MaxSIOp::create(b, loc, align(end), start);
  if (invariantOk)
    end = arith::SelectOp::create(b, loc, invariantOk, end, start);
  Type ivType = loop.getInductionVar().getType();
  Value head = cut.maskedHead ? fromI64(b, loc, start, ivType) : Value();
  Value tail = cut.maskedTail ? fromI64(b, loc, end, ivType) : Value();
  return {head, tail};
}

/// Erases `op` and then whatever fed only it, inside `scope`.
void eraseDeadChain(Operation *op, Operation *scope) {
  SmallVector<Operation *> worklist{op};
  while (!worklist.empty()) {
    Operation *dead = worklist.pop_back_val();
    if (!dead->use_empty() || !isOpTriviallyDead(dead) ||
        !scope->isProperAncestor(dead))
      continue;
    SmallVector<Operation *> feeders;
    for (Value operand : dead->getOperands())
      if (Operation *def = operand.getDefiningOp())
        feeders.push_back(def);
    dead->erase();
    for (Operation *def : feeders)
      if (llvm::find(worklist, def) == worklist.end())
        worklist.push_back(def);
  }
}

/// Cuts `first` at `at`: it runs to `at`, a clone from `at` on takes its
/// results. Returns the clone; `mapping` maps `first`'s ops to the clone's.
scf::ForOp splitAt(scf::ForOp first, Value at, IRMapping &mapping) {
  OpBuilder b(first->getContext());
  b.setInsertionPointAfter(first);
  auto second = cast<scf::ForOp>(b.clone(*first, mapping));
  first.getResults().replaceAllUsesWith(second.getResults());
  second.getInitArgsMutable().assign(first.getResults());
  first.getUpperBoundMutable().assign(at);
  second.getLowerBoundMutable().assign(at);
  return second;
}

/// [lb, start) keeps the masks where something turns true later,
/// [start, end) drops them, [end, ub) keeps them where something turns
/// false (or may be false throughout).
void split(const Cut &cut) {
  OpBuilder b(cut.loop);
  auto [start, end] = emitInterval(b, cut);
  scf::ForOp allTrue = cut.loop;
  SmallVector<arith::SelectOp> selects = cut.selects;
  if (cut.maskedHead) {
    IRMapping mapping;
    allTrue = splitAt(cut.loop, start, mapping);
    for (arith::SelectOp &select : selects)
      select = cast<arith::SelectOp>(mapping.lookup(select.getOperation()));
  }
  if (cut.maskedTail) {
    IRMapping mapping;
    splitAt(allTrue, end, mapping);
  }
  for (arith::SelectOp select : selects) {
    Operation *cond = select.getCondition().getDefiningOp();
    Operation *other = select.getFalseValue().getDefiningOp();
    select.getResult().replaceAllUsesWith(select.getTrueValue());
    select.erase();
    for (Operation *feeder : {cond, other})
      if (feeder)
        eraseDeadChain(feeder, allTrue);
  }
}

struct TileSplitUniformMasksPass
    : tile::impl::TileSplitUniformMasksBase<TileSplitUniformMasksPass> {
  void runOnOperation() override {
    SmallVector<Cut> cuts;
    getOperation().walk([&](scf::ForOp loop) {
      if (std::optional<Cut> cut = findCut(loop))
        cuts.push_back(std::move(*cut));
    });
    for (const Cut &cut : cuts)
      split(cut);
  }
};

} // namespace
