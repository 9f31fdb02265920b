//===- HostDebugOps.cpp - tile.print and tile.assert on the host ----------===//
//
// Both become calls into the host runtime (compiler/cpu/HostRuntime.cpp):
// a print is one line per block, assembled in a per-thread buffer between
// __tile_print_begin and __tile_print_end so that blocks running on other
// threads do not interleave inside it; a failed assert reports the block and
// the message, then aborts the process.
//
//===----------------------------------------------------------------------===//
#include "compiler/cpu/HostPatterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace mlir::tile;
using namespace mlir::tile::host;

namespace {

/// Emits runtime calls, declaring callees and string constants on demand.
class RuntimeCalls {
public:
  explicit RuntimeCalls(ModuleOp module) : module(module), symbols(module) {}

  void call(OpBuilder &b, Location loc, StringRef name, ValueRange args) {
    declare(name, args.getTypes());
    func::CallOp::create(b, loc, name, TypeRange{}, args);
  }

  /// The address of a NUL-terminated copy of `text`.
  Value string(OpBuilder &b, Location loc, StringRef text) {
    LLVM::GlobalOp &global = strings[text];
    if (!global) {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(module.getBody());
      std::string bytes = text.str();
      bytes.push_back('\0');
      auto type = LLVM::LLVMArrayType::get(b.getI8Type(), bytes.size());
      global = LLVM::GlobalOp::create(b, loc, type, /*isConstant=*/true,
                                      LLVM::Linkage::Internal, "__tile_str",
                                      b.getStringAttr(bytes));
      symbols.insert(global); // renames it to be unique
    }
    return LLVM::AddressOfOp::create(b, loc, global);
  }

private:
  void declare(StringRef name, TypeRange argTypes) {
    if (symbols.lookup(name))
      return;
    OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
    auto func = func::FuncOp::create(
        b, module.getLoc(), name,
        FunctionType::get(module.getContext(), argTypes, {}));
    func.setPrivate();
    symbols.insert(func);
  }

  ModuleOp module;
  SymbolTable symbols;
  llvm::StringMap<LLVM::GlobalOp> strings;
};

/// Prints one scalar with the runtime function for its kind.
void printScalar(OpBuilder &b, Location loc, RuntimeCalls &rt, Value v) {
  Type type = v.getType();
  if (auto ft = dyn_cast<FloatType>(type)) {
    if (ft.getWidth() == 64) {
      rt.call(b, loc, "__tile_print_f64", v);
      return;
    }
    if (ft.getWidth() != 32)
      v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    rt.call(b, loc, "__tile_print_f32", v);
    return;
  }
  if (type.isIndex()) {
    v = arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
  } else if (type.getIntOrFloatBitWidth() == 1) {
    v = arith::ExtUIOp::create(b, loc, b.getI64Type(), v);
  } else if (type.getIntOrFloatBitWidth() < 64) {
    v = arith::ExtSIOp::create(b, loc, b.getI64Type(), v);
  }
  rt.call(b, loc, "__tile_print_i64", v);
}

/// Prints a tile as nested lists: [[a, b], [c, d]].
void printTile(OpBuilder &b, Location loc, RuntimeCalls &rt, Value tile,
               SmallVector<Value> &ivs) {
  auto type = cast<RankedTensorType>(tile.getType());
  if (ivs.size() == static_cast<size_t>(type.getRank())) {
    printScalar(b, loc, rt, tensor::ExtractOp::create(b, loc, tile, ivs));
    return;
  }
  rt.call(b, loc, "__tile_print_str", rt.string(b, loc, "["));
  int64_t n = type.getDimSize(ivs.size());
  auto loop = scf::ForOp::create(b, loc, indexConst(b, loc, 0),
                                 indexConst(b, loc, n), indexConst(b, loc, 1));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(loop.getBody()->getTerminator());
    Value i = loop.getInductionVar();
    Value notFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                           i, indexConst(b, loc, 0));
    auto sep = scf::IfOp::create(b, loc, notFirst);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(sep.thenBlock());
      rt.call(b, loc, "__tile_print_str", rt.string(b, loc, ", "));
    }
    ivs.push_back(i);
    printTile(b, loc, rt, tile, ivs);
    ivs.pop_back();
  }
  rt.call(b, loc, "__tile_print_str", rt.string(b, loc, "]"));
}

void lowerPrint(PrintOp op, ValueRange grid, RuntimeCalls &rt) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  rt.call(b, loc, "__tile_print_begin", grid.take_front(3));
  StringRef prefix = op.getPrefix();
  if (!prefix.empty())
    rt.call(b, loc, "__tile_print_str", rt.string(b, loc, prefix));
  for (auto [i, arg] : llvm::enumerate(op.getArgs())) {
    if (i > 0 || !prefix.empty())
      rt.call(b, loc, "__tile_print_str", rt.string(b, loc, " "));
    if (isa<RankedTensorType>(arg.getType())) {
      SmallVector<Value> ivs;
      printTile(b, loc, rt, arg, ivs);
    } else if (arg.getType().isIntOrIndexOrFloat()) {
      printScalar(b, loc, rt, arg);
    } else {
      rt.call(b, loc, "__tile_print_str", rt.string(b, loc, "<array>"));
    }
  }
  rt.call(b, loc, "__tile_print_end", {});
  op.erase();
}

/// "file:line: " of the user's line, when the location has one.
std::string locationPrefix(Location loc) {
  std::string text;
  loc->walk([&](Location inner) {
    if (auto flc = dyn_cast<FileLineColLoc>(inner)) {
      text = (flc.getFilename().getValue() + ":" + Twine(flc.getLine()) + ": ")
                 .str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return text;
}

void lowerAssert(AssertOp op, ValueRange grid, RuntimeCalls &rt) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value ok = op.getCondition();
  if (auto type = dyn_cast<RankedTensorType>(ok.getType())) {
    // All lanes must hold: and-reduce to a scalar.
    Value init = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{},
                                         b.getI1Type());
    Value trueValue = arith::ConstantIntOp::create(b, loc, 1, 1);
    init = linalg::FillOp::create(b, loc, ValueRange{trueValue},
                                  ValueRange{init})
               .getResult(0);
    if (type.getRank() > 0) {
      auto all = linalg::ReduceOp::create(
          b, loc, ValueRange{ok}, ValueRange{init},
          llvm::to_vector(llvm::seq<int64_t>(0, type.getRank())),
          [](OpBuilder &b, Location loc, ValueRange args) {
            linalg::YieldOp::create(
                b, loc,
                arith::AndIOp::create(b, loc, args[0], args[1]).getResult());
          });
      init = all.getResult(0);
    } else {
      init = ok;
    }
    ok = tensor::ExtractOp::create(b, loc, init, ValueRange{});
  }
  Value failed = arith::XOrIOp::create(
      b, loc, ok, arith::ConstantIntOp::create(b, loc, 1, 1));
  auto ifOp = scf::IfOp::create(b, loc, failed);
  b.setInsertionPointToStart(ifOp.thenBlock());
  std::string message = locationPrefix(loc) + op.getMessage().str();
  SmallVector<Value> args{rt.string(b, loc, message)};
  llvm::append_range(args, grid.take_front(3));
  rt.call(b, loc, "__tile_assert_fail", args);
  op.erase();
}

} // namespace

LogicalResult host::lowerDebugOps(func::FuncOp func) {
  ValueRange grid = func.getArguments().take_back(kNumGridArgs);
  SmallVector<Operation *> ops;
  func.walk([&](Operation *op) {
    if (isa<PrintOp, AssertOp>(op))
      ops.push_back(op);
  });
  if (ops.empty())
    return success();
  RuntimeCalls rt(func->getParentOfType<ModuleOp>());
  for (Operation *op : ops) {
    if (auto print = dyn_cast<PrintOp>(op))
      lowerPrint(print, grid, rt);
    else
      lowerAssert(cast<AssertOp>(op), grid, rt);
  }
  return success();
}
