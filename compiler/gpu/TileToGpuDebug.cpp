//===- TileToGpuDebug.cpp - tile.print and tile.assert on the GPU ---------===//
//
// tile.print becomes gpu.printf (vprintf through convert-gpu-to-nvvm): each
// thread prints one line per tile element it owns (the first replica only,
// and a register repeating an earlier one is skipped, so every element of
// every block is printed once), tagged with the block
// id and the element's coordinates:
//
//   pid (bx, by, bz) idx (i, j) <prefix> <value>
//
// and, with several operands, "(operand k)" before the value. Scalars are
// printed once per block, by thread 0, without idx. Lines from different
// threads and blocks come out in no particular order (vprintf's buffer is
// flushed at the next synchronization with the host).
//
// tile.assert becomes, on every thread whose elements of the condition are
// not all true, a call to CUDA's __assertfail(message, file, line, function,
// charSize) with the user's file:line from the op's location and the kernel
// as function (the driver reports block and thread), then llvm.trap. The
// launch fails with CUDA_ERROR_ASSERT.
//
//===----------------------------------------------------------------------===//
#include "compiler/gpu/TileToGpuCommon.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <set>

using namespace mlir;
using namespace mlir::tile;

namespace {

/// A scalar widened for vprintf's varargs, with its conversion.
std::pair<Value, StringRef> printable(OpBuilder &b, Location loc, Value v) {
  Type type = v.getType();
  if (auto ft = dyn_cast<FloatType>(type)) {
    if (ft.getWidth() != 64)
      v = arith::ExtFOp::create(b, loc, b.getF64Type(), v);
    return {v, "%f"};
  }
  if (type.isIndex())
    return {arith::IndexCastOp::create(b, loc, b.getI64Type(), v), "%lld"};
  unsigned width = type.getIntOrFloatBitWidth();
  if (width == 1)
    return {arith::ExtUIOp::create(b, loc, b.getI32Type(), v), "%d"};
  if (width < 32)
    return {arith::ExtSIOp::create(b, loc, b.getI32Type(), v), "%d"};
  if (width == 32)
    return {v, "%d"};
  if (width < 64)
    v = arith::ExtSIOp::create(b, loc, b.getI64Type(), v);
  return {v, "%lld"};
}

/// `text` with printf's '%' escaped.
std::string escapePercent(StringRef text) {
  std::string out;
  for (char c : text) {
    out.push_back(c);
    if (c == '%')
      out.push_back('%');
  }
  return out;
}

struct PrintPattern : OpConversionPattern<PrintOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(PrintOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    for (Value arg : op.getArgs()) {
      Type t = arg.getType();
      if (auto tensor = dyn_cast<RankedTensorType>(t)) {
        if (failed(toLinearLayout(tensor)))
          return rewriter.notifyMatchFailure(op, "operand without a layout");
        t = tensor.getElementType();
      }
      if (!t.isIntOrIndexOrFloat())
        return rewriter.notifyMatchFailure(op, "prints only scalars and "
                                               "tiles on the GPU");
    }
    SmallVector<Value> pid;
    pid.push_back(NVVM::BlockIdXOp::create(rewriter, loc, rewriter.getI32Type()));
    pid.push_back(NVVM::BlockIdYOp::create(rewriter, loc, rewriter.getI32Type()));
    pid.push_back(NVVM::BlockIdZOp::create(rewriter, loc, rewriter.getI32Type()));
    std::string prefix = escapePercent(op.getPrefix());
    std::string head = "pid (%d, %d, %d)";
    bool several = op.getArgs().size() > 1;
    auto operandTag = [&](size_t k) {
      return several ? (" (operand " + Twine(k) + ")").str() : std::string();
    };
    auto emitLine = [&](OpBuilder &b, Value guard, std::string format,
                        ArrayRef<Value> values) {
      auto ifOp = scf::IfOp::create(b, loc, guard);
      OpBuilder::InsertionGuard g(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      gpu::PrintfOp::create(b, loc, format + "\n", values);
    };

    // Scalars, and a print of nothing: once per block.
    SmallVector<Value> scalars;
    std::string scalarFormat = head;
    if (!prefix.empty())
      scalarFormat += " " + prefix;
    bool anyScalar = false;
    for (auto [k, arg] : llvm::enumerate(adaptor.getArgs())) {
      if (isa<RankedTensorType>(op.getArgs()[k].getType()))
        continue;
      auto [v, conv] = printable(rewriter, loc, arg);
      scalarFormat += operandTag(k) + " " + conv.str();
      scalars.push_back(v);
      anyScalar = true;
    }
    if (anyScalar || op.getArgs().empty()) {
      Value first = arith::CmpIOp::create(rewriter, loc,
                                          arith::CmpIPredicate::eq,
                                          threadIdX(rewriter, loc),
                                          constI32(rewriter, loc, 0));
      SmallVector<Value> values(pid);
      values.append(scalars);
      emitLine(rewriter, first, scalarFormat, values);
    }

    // Tiles: one line per element this thread owns.
    for (auto [k, arg] : llvm::enumerate(adaptor.getArgs())) {
      auto tensor = dyn_cast<RankedTensorType>(op.getArgs()[k].getType());
      if (!tensor)
        continue;
      LinearLayout layout = *toLinearLayout(tensor);
      SmallVector<Value> base = threadCoords(rewriter, loc, layout);
      Value owner = isFirstReplica(rewriter, loc, layout);
      SmallVector<Value> elems = unpackVector(rewriter, loc, arg);
      std::string format = head + " idx (";
      for (unsigned d = 0; d < layout.getRank(); ++d)
        format += d ? ", %d" : "%d";
      format += ")";
      if (!prefix.empty())
        format += " " + prefix;
      format += operandTag(k);
      std::set<SmallVector<int64_t, 4>> seen; // registers may repeat too
      for (auto [r, elem] : llvm::enumerate(elems)) {
        SmallVector<Value> values(pid);
        SmallVector<int64_t, 4> regCoord = layout.regCoord(r);
        if (!seen.insert(regCoord).second)
          continue;
        for (unsigned d = 0; d < layout.getRank(); ++d)
          values.push_back(arith::XOrIOp::create(
              rewriter, loc, base[d], constI32(rewriter, loc, regCoord[d])));
        auto [v, conv] = printable(rewriter, loc, elem);
        values.push_back(v);
        emitLine(rewriter, owner, format + " " + conv.str(), values);
      }
    }
    rewriter.eraseOp(op);
    return success();
  }
};

/// "file", line of the user's source line, when the location has one.
std::pair<std::string, unsigned> sourceLine(Location loc) {
  std::pair<std::string, unsigned> result{"<unknown>", 0};
  loc->walk([&](Location inner) {
    if (auto flc = dyn_cast<FileLineColLoc>(inner)) {
      result = {flc.getFilename().str(), flc.getLine()};
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return result;
}

/// Address of a NUL-terminated constant copy of `text` in `module`.
Value globalString(OpBuilder &b, Location loc, gpu::GPUModuleOp module,
                   StringRef text) {
  std::string bytes = text.str();
  bytes.push_back('\0');
  // Reuse an identical string; else a fresh name.
  LLVM::GlobalOp global;
  unsigned n = 0;
  for (auto g : module.getOps<LLVM::GlobalOp>()) {
    if (!g.getSymName().starts_with("__tile_assert_str"))
      continue;
    ++n;
    if (auto value = dyn_cast_or_null<StringAttr>(g.getValueOrNull()))
      if (value.getValue() == bytes)
        global = g;
  }
  if (!global) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    std::string name = "__tile_assert_str";
    while (SymbolTable::lookupSymbolIn(module, name + std::to_string(n)))
      ++n;
    auto type = LLVM::LLVMArrayType::get(b.getI8Type(), bytes.size());
    global = LLVM::GlobalOp::create(
        b, loc, type, /*isConstant=*/true, LLVM::Linkage::Internal,
        name + std::to_string(n), b.getStringAttr(bytes));
  }
  return LLVM::AddressOfOp::create(b, loc, global);
}

/// `void __assertfail(const char *message, const char *file, unsigned line,
/// const char *function, size_t charSize)`, as CUDA's assert declares it.
LLVM::LLVMFuncOp declareAssertFail(OpBuilder &b, gpu::GPUModuleOp module) {
  constexpr StringLiteral name = "__assertfail";
  if (auto func = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return func;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  MLIRContext *ctx = b.getContext();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  auto type = LLVM::LLVMFunctionType::get(
      LLVM::LLVMVoidType::get(ctx),
      {ptr, ptr, b.getI32Type(), ptr, b.getI64Type()});
  return LLVM::LLVMFuncOp::create(b, module.getLoc(), name, type);
}

struct AssertPattern : OpConversionPattern<AssertOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(AssertOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto module = op->getParentOfType<gpu::GPUModuleOp>();
    auto func = op->getParentOfType<gpu::GPUFuncOp>();
    if (!module || !func)
      return rewriter.notifyMatchFailure(op, "not in a gpu.func");
    // This thread's part of the condition, and-reduced.
    Value ok = adaptor.getCondition();
    if (isa<VectorType>(ok.getType())) {
      SmallVector<Value> elems = unpackVector(rewriter, loc, ok);
      ok = elems.front();
      for (Value e : ArrayRef(elems).drop_front())
        ok = arith::AndIOp::create(rewriter, loc, ok, e);
    }
    Value failed = arith::XOrIOp::create(
        rewriter, loc, ok,
        arith::ConstantOp::create(rewriter, loc, rewriter.getBoolAttr(true)));
    auto ifOp = scf::IfOp::create(rewriter, loc, failed);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(ifOp.thenBlock());
    auto [file, line] = sourceLine(loc);
    LLVM::LLVMFuncOp callee = declareAssertFail(rewriter, module);
    Value args[] = {
        globalString(rewriter, loc, module, op.getMessage()),
        globalString(rewriter, loc, module, file),
        constI32(rewriter, loc, line),
        globalString(rewriter, loc, module, func.getName()),
        constI64(rewriter, loc, 1)};
    LLVM::CallOp::create(rewriter, loc, callee, args);
    LLVM::Trap::create(rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::tile::populateTileToGpuDebugPatterns(TypeConverter &converter,
                                                RewritePatternSet &patterns,
                                                GpuLoweringState &state) {
  patterns.add<PrintPattern, AssertPattern>(converter, patterns.getContext());
}
