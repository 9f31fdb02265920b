//===- TileGpuAsmOps.cpp - PTX the GPU lowering writes itself -------------===//
#include "dialects/tile/TileGpuAsmOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace mlir::tile;

#define GET_OP_CLASSES
#include "dialects/tile/TileGpuAsmOps.cpp.inc"

/// 1, 2 or 4 words of one type; i16 (a b16 or, with `byte`, a u8) alone.
static LogicalResult verifyWords(Operation *op, TypeRange words, bool byte) {
  if (words.size() != 1 && words.size() != 2 && words.size() != 4)
    return op->emitOpError("moves 1, 2 or 4 words, not ") << words.size();
  if (llvm::any_of(words, [&](Type t) { return t != words.front(); }))
    return op->emitOpError("words must have one type");
  bool i16 = words.front().isInteger(16);
  if (i16 && words.size() != 1)
    return op->emitOpError("moves one i16 word (a b16 or a byte)");
  if (byte && !i16)
    return op->emitOpError("moves a byte in an i16 word");
  return success();
}

/// An ordering the access may have: `allowed` or relaxed, with a scope, or
/// neither (weak).
static LogicalResult verifyOrdering(Operation *op,
                                    std::optional<MemoryOrder> order,
                                    std::optional<MemoryScope> scope,
                                    MemoryOrder allowed) {
  if (order.has_value() != scope.has_value())
    return op->emitOpError("memory_order and memory_scope go together");
  if (order && *order != MemoryOrder::relaxed && *order != allowed)
    return op->emitOpError("memory order ")
           << stringifyMemoryOrder(*order) << " must be relaxed or "
           << stringifyMemoryOrder(allowed);
  if (scope && *scope == MemoryScope::none)
    return op->emitOpError("memory scope must be block, device or sys");
  return success();
}

LogicalResult PtxLoadGlobalOp::verify() {
  if (getWords().empty())
    return emitOpError("loads no words");
  if (failed(verifyWords(*this, getWords().getTypes(), getByte())) ||
      failed(verifyOrdering(*this, getMemoryOrder(), getMemoryScope(),
                            MemoryOrder::acquire)))
    return failure();
  if (getPad().size() != getWords().size())
    return emitOpError("has ") << getPad().size() << " pad words for "
                               << getWords().size() << " words";
  return success();
}

LogicalResult PtxStoreGlobalOp::verify() {
  if (getWords().empty())
    return emitOpError("stores no words");
  if (failed(verifyWords(*this, getWords().getTypes(), getByte())))
    return failure();
  return verifyOrdering(*this, getMemoryOrder(), getMemoryScope(),
                        MemoryOrder::release);
}

bool PtxAtomGlobalOp::supports(AtomicKind kind, Type type) {
  if (kind == AtomicKind::add)
    return type.isInteger(32) || type.isInteger(64) || type.isF32() ||
           type.isF64();
  return type.isInteger(32) || type.isInteger(64);
}

LogicalResult PtxAtomGlobalOp::verify() {
  if (!supports(getKind(), getValue().getType()))
    return emitOpError("PTX has no atom.")
           << stringifyAtomicKind(getKind()) << " for " << getValue().getType();
  if (getMemoryScope() == MemoryScope::none)
    return emitOpError("memory scope must be block, device or sys");
  return success();
}

LogicalResult PtxWgmmaWaitOp::verify() {
  if (getValues().size() != getResults().size())
    return emitOpError() << "returns each of its " << getValues().size()
                         << " values";
  if (getValues().getTypes() != getResults().getTypes())
    return emitOpError() << "returns its values with their types";
  return success();
}

LogicalResult PtxWgmmaFenceOp::verify() {
  if (getResults().getTypes() != getValues().getTypes())
    return emitOpError() << "passes its values through: one result each";
  return success();
}

LogicalResult PtxWgmmaRegAOp::verify() {
  int64_t n = getN();
  if (n % 8 || n > 256)
    return emitOpError() << "n must be a multiple of 8 up to 256, not " << n;
  if (int64_t(getAcc().size()) != n / 2 ||
      getResults().size() != getAcc().size())
    return emitOpError() << "m64n" << n << " accumulates " << n / 2
                         << " f32 per thread";
  if (getA().size() != 4)
    return emitOpError() << "A is four 32-bit fragment registers";
  if (getInputType().getIntOrFloatBitWidth() == 8 && !getBKMajor())
    return emitOpError() << "fp8 reads B only K-major (b_k_major)";
  return success();
}
