//===- PtxasWorkarounds.cpp - LLVM IR that ptxas would miscompile ---------===//
#include "compiler/gpu/PtxasWorkarounds.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InlineAsm.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PatternMatch.h"

using namespace llvm;
using namespace llvm::PatternMatch;

namespace {

// The 16-bit value widened, transformed in 32 bits, and narrowed again: the
// truncation is explicit, so ptxas keeps the wrap-around.
constexpr const char *kNegate =
    "{ .reg .b32 t; cvt.u32.u16 t, $1; neg.s32 t, t; cvt.u16.u32 $0, t; }";
constexpr const char *kAbsolute =
    "{ .reg .b32 t; cvt.s32.s16 t, $1; abs.s32 t, t; cvt.u16.u32 $0, t; }";

Value *emitPerElement(IRBuilder<> &b, Value *operand, const char *text) {
  Type *i16 = b.getInt16Ty();
  InlineAsm *op =
      InlineAsm::get(FunctionType::get(i16, {i16}, /*isVarArg=*/false), text,
                     "=h,h", /*hasSideEffects=*/false);
  auto *vector = dyn_cast<FixedVectorType>(operand->getType());
  if (!vector)
    return b.CreateCall(op, {operand});
  Value *result = PoisonValue::get(vector);
  for (unsigned i = 0, e = vector->getNumElements(); i != e; ++i) {
    Value *element = b.CreateExtractElement(operand, i);
    result = b.CreateInsertElement(result, b.CreateCall(op, {element}), i);
  }
  return result;
}

bool isInt16OrVector(Type *type) {
  return type->getScalarType()->isIntegerTy(16);
}

} // namespace

unsigned mlir::tile::avoidNarrowNegationFolds(Module &module) {
  SmallVector<std::pair<Instruction *, const char *>> rewrites;
  for (Function &function : module)
    for (Instruction &inst : instructions(function)) {
      if (!isInt16OrVector(inst.getType()))
        continue;
      if (match(&inst, m_Neg(m_Value())))
        rewrites.push_back({&inst, kNegate});
      else if (match(&inst, m_Intrinsic<Intrinsic::abs>(m_Value())))
        rewrites.push_back({&inst, kAbsolute});
    }
  for (auto [inst, text] : rewrites) {
    IRBuilder<> b(inst);
    Value *operand = inst->getOperand(text == kNegate ? 1 : 0);
    Value *replacement = emitPerElement(b, operand, text);
    inst->replaceAllUsesWith(replacement);
    inst->eraseFromParent();
  }
  return rewrites.size();
}
