//===- SharedLiveness.cpp - when a kernel's shared buffers are live -------===//
#include "compiler/gpu/SharedLiveness.h"
#include "dialects/tilegpu/TileGpuDialect.h"

#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

scf::IfOp asWarpSpecialized(Operation *op) {
  auto ifOp = dyn_cast<scf::IfOp>(op);
  if (ifOp && ifOp->hasAttr(tilegpu::WarpSpecializedAttr::getAttrName()) &&
      !ifOp.getElseRegion().empty())
    return ifOp;
  return {};
}

/// Every op that reads or writes the buffer `value` is: its users, and the
/// users of its slots.
void collectUses(Value value, SmallVectorImpl<Operation *> &uses) {
  for (Operation *user : value.getUsers()) {
    uses.push_back(user);
    if (auto slot = dyn_cast<tilegpu::SlotOp>(user))
      collectUses(slot.getResult(), uses);
  }
}

} // namespace

SharedLiveness::SharedLiveness(func::FuncOp func) {
  if (func.isExternal())
    return;
  for (Operation &op : func.getBody().front()) {
    scf::IfOp specialized = asWarpSpecialized(&op);
    if (!specialized) {
      stepIndex[&op] = steps.size();
      steps.push_back(&op);
      continue;
    }
    int64_t first = steps.size();
    for (Operation &consumer : specialized.getElseRegion().front()) {
      stepIndex[&consumer] = steps.size();
      steps.push_back(&consumer);
    }
    specializedSteps[&op] = {first, int64_t(steps.size()) - 1};
  }
}

int64_t SharedLiveness::getBufferBytes(Operation *op) {
  if (auto alloc = dyn_cast<tilegpu::AllocSharedOp>(op))
    return alloc.getType().getTotalBytes();
  if (auto bars = dyn_cast<tilegpu::AllocMBarriersOp>(op))
    return 8 * bars.getType().getCount();
  return 0;
}

Operation *SharedLiveness::getProducerOwner(Operation *op) const {
  for (; op; op = op->getParentOp()) {
    Operation *parent = op->getParentOp();
    if (parent && specializedSteps.count(parent) &&
        op->getParentRegion()->getRegionNumber() == 0)
      return parent;
  }
  return nullptr;
}

std::optional<int64_t> SharedLiveness::getStep(Operation *op) const {
  for (; op; op = op->getParentOp()) {
    auto it = stepIndex.find(op);
    if (it != stepIndex.end())
      return it->second;
  }
  return std::nullopt;
}

std::pair<int64_t, int64_t>
SharedLiveness::getLiveRange(Operation *alloc) const {
  std::optional<int64_t> allocStep = getStep(alloc);
  Operation *allocProducer = getProducerOwner(alloc);
  int64_t first = allocStep       ? *allocStep
                  : allocProducer ? specializedSteps.lookup(allocProducer).first
                                  : 0;
  int64_t last = first;
  SmallVector<Operation *> uses;
  collectUses(alloc->getResult(0), uses);
  SmallVector<int64_t> useSteps;
  SmallVector<Operation *> producerOwners;
  if (allocProducer)
    producerOwners.push_back(allocProducer);
  for (Operation *use : uses) {
    if (Operation *owner = getProducerOwner(use))
      producerOwners.push_back(owner);
    else if (std::optional<int64_t> step = getStep(use))
      useSteps.push_back(*step);
  }
  for (int64_t step : useSteps)
    last = std::max(last, step);
  // A buffer its scf.if's consumers never touch may be in use by the
  // producer at any step of that scf.if.
  for (Operation *owner : producerOwners) {
    auto [ownerFirst, ownerLast] = specializedSteps.lookup(owner);
    if (llvm::none_of(useSteps, [&](int64_t step) {
          return step >= ownerFirst && step <= ownerLast;
        }))
      last = std::max(last, ownerLast);
  }
  return {first, last};
}
