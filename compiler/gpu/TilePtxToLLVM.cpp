//===- TilePtxToLLVM.cpp - tile.ptx.* ops to llvm.inline_asm --------------===//
//
// The one place the GPU lowering's own PTX is written: each tile.ptx op is
// one llvm.inline_asm with side effects (the accesses must neither move nor
// merge), every operand in a register of its type.
//
//===----------------------------------------------------------------------===//
#include "compiler/gpu/TilePtxToLLVM.h"
#include "dialects/tile/TileGpuAsmOps.h"

#include "mlir/Conversion/ConvertToLLVM/ToLLVMInterface.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;
using namespace mlir::tile;

namespace {

/// `.sem.scope` of an ordered access (".acquire.gpu"), "" for a weak one.
std::string ordering(std::optional<MemoryOrder> order,
                     std::optional<MemoryScope> scope) {
  if (!order || *order == MemoryOrder::weak)
    return "";
  const char *s = *scope == MemoryScope::block ? "cta"
                  : *scope == MemoryScope::sys ? "sys"
                                               : "gpu";
  return ("." + stringifyMemoryOrder(*order) + "." + s).str();
}

/// The register constraint of a value of `type`.
const char *reg(Type type) {
  return type.isInteger(16)   ? "h"
         : type.isInteger(64) ? "l"
         : type.isF32()       ? "f"
         : type.isF64()       ? "d"
                              : "r";
}

/// `{$first, ..., $first+n-1}`, or `$first` for one word.
std::string wordList(int64_t first, int64_t n) {
  std::string s = n > 1 ? "{" : "";
  for (int64_t i = 0; i < n; ++i)
    s += (i ? ", $" : "$") + std::to_string(first + i);
  return n > 1 ? s + "}" : s;
}

/// `.v4.b32`, `.b16`, `.u8`/`.b8` (a byte, loaded or stored).
std::string wordSuffix(TypeRange words, bool byte, const char *bytePtx) {
  std::string s = words.size() > 1 ? ".v" + std::to_string(words.size()) : "";
  if (byte)
    return s + bytePtx;
  return s + (words.front().isInteger(16) ? ".b16" : ".b32");
}

LLVM::InlineAsmOp inlineAsm(OpBuilder &b, Location loc, TypeRange results,
                            ValueRange operands, StringRef text,
                            StringRef constraints) {
  return LLVM::InlineAsmOp::create(
      b, loc, results, operands, text, constraints,
      /*has_side_effects=*/true, /*is_align_stack=*/false,
      LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr::get(b.getContext(), LLVM::AsmDialect::AD_ATT),
      ArrayAttr());
}

/// The pads moved into the results $0..$n-1, then `@$n+1 ld [$n + 0]`.
struct LoadGlobalLowering : ConvertOpToLLVMPattern<PtxLoadGlobalOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(PtxLoadGlobalOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    TypeRange words = op.getWords().getTypes();
    int64_t n = words.size();
    unsigned bits = words.front().isInteger(16) ? 16 : 32;
    std::string text, constraints;
    llvm::raw_string_ostream os(text);
    for (int64_t i = 0; i < n; ++i) {
      os << "mov.b" << bits << " $" << i << ", 0x";
      os.write_hex(static_cast<uint64_t>(op.getPad()[i]));
      os << ";\n\t";
      constraints += std::string("=") + reg(words.front()) + ",";
    }
    os << "@$" << n + 1 << " ld"
       << ordering(op.getMemoryOrder(), op.getMemoryScope()) << ".global"
       << wordSuffix(words, op.getByte(), ".u8") << " " << wordList(0, n)
       << ", [$" << n << " + 0];";
    constraints += "l,b";
    Type result = words.front();
    if (n > 1)
      result = LLVM::LLVMStructType::getLiteral(rewriter.getContext(),
                                                SmallVector<Type>(words));
    Location loc = op.getLoc();
    auto asmOp = inlineAsm(rewriter, loc, result,
                           {adaptor.getAddress(), adaptor.getPredicate()}, text,
                           constraints);
    SmallVector<Value> values;
    if (n == 1)
      values.push_back(asmOp.getResult(0));
    for (int64_t i = 0; n > 1 && i < n; ++i)
      values.push_back(LLVM::ExtractValueOp::create(
          rewriter, loc, asmOp.getResult(0), ArrayRef<int64_t>{i}));
    rewriter.replaceOp(op, values);
    return success();
  }
};

/// `@$1 st [$0 + 0], $2..`.
struct StoreGlobalLowering : ConvertOpToLLVMPattern<PtxStoreGlobalOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(PtxStoreGlobalOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    TypeRange words = op.getWords().getTypes();
    std::string text = "@$1 st" +
                       ordering(op.getMemoryOrder(), op.getMemoryScope()) +
                       ".global" + wordSuffix(words, op.getByte(), ".b8") +
                       " [$0 + 0], " + wordList(2, words.size()) + ";";
    std::string constraints = "l,b";
    for (Type t : words)
      constraints += std::string(",") + reg(t);
    SmallVector<Value> operands{adaptor.getAddress(), adaptor.getPredicate()};
    llvm::append_range(operands, adaptor.getWords());
    inlineAsm(rewriter, op.getLoc(), TypeRange{}, operands, text, constraints);
    rewriter.eraseOp(op);
    return success();
  }
};

/// `atom.relaxed.<scope>.global.<op>.<type> $0, [$1], $2`.
struct AtomGlobalLowering : ConvertOpToLLVMPattern<PtxAtomGlobalOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(PtxAtomGlobalOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Type t = op.getValue().getType();
    bool wide = t.isInteger(64) || t.isF64();
    std::string type = t.isF32()   ? ".f32"
                       : t.isF64() ? ".f64"
                       : wide      ? ".u64"
                                   : ".u32";
    std::string bits = wide ? ".b64" : ".b32";
    std::string name;
    switch (op.getKind()) {
    case AtomicKind::add:
      name = "add" + type;
      break;
    case AtomicKind::max:
    case AtomicKind::min:
      name = std::string(op.getKind() == AtomicKind::max ? "max" : "min") +
             (wide ? ".s64" : ".s32");
      break;
    case AtomicKind::umax:
      name = "max" + type;
      break;
    case AtomicKind::umin:
      name = "min" + type;
      break;
    case AtomicKind::xchg:
      name = "exch" + bits;
      break;
    case AtomicKind::and_:
      name = "and" + bits;
      break;
    case AtomicKind::or_:
      name = "or" + bits;
      break;
    case AtomicKind::xor_:
      name = "xor" + bits;
      break;
    }
    std::string text = ordering(MemoryOrder::relaxed, op.getMemoryScope());
    text = "atom" + text + ".global." + name + " $0, [$1], $2;";
    std::string constraints = std::string("=") + reg(t) + ",l," + reg(t);
    rewriter.replaceOp(op, inlineAsm(rewriter, op.getLoc(), t,
                                     {adaptor.getAddress(), adaptor.getValue()},
                                     text, constraints)
                               .getResults());
    return success();
  }
};

/// The f32 results of an asm statement returning `n` of them as a struct.
SmallVector<Value> structResults(OpBuilder &b, Location loc,
                                 LLVM::InlineAsmOp asmOp, int64_t n) {
  SmallVector<Value> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(LLVM::ExtractValueOp::create(b, loc, asmOp.getResult(0),
                                               ArrayRef<int64_t>{i}));
  return out;
}

/// `op` as the asm statement `text` whose outputs are tied to `values`
/// (f32 as "f", 32-bit integers as "r"): nothing reading a result moves
/// above it, nothing computing a value below it.
void replaceWithTiedAsm(Operation *op, ValueRange values,
                        const std::string &text,
                        ConversionPatternRewriter &rewriter) {
  int64_t n = values.size();
  if (!n) {
    // Nothing to carry: the instruction alone.
    inlineAsm(rewriter, op->getLoc(), {}, {}, text, "");
    rewriter.eraseOp(op);
    return;
  }
  std::string constraints;
  for (Value v : values)
    constraints += v.getType().isF32() ? "=f," : "=r,";
  for (int64_t i = 0; i < n; ++i)
    constraints += std::to_string(i) + (i + 1 < n ? "," : "");
  auto structType = LLVM::LLVMStructType::getLiteral(
      op->getContext(), SmallVector<Type>(values.getTypes()));
  auto asmOp =
      inlineAsm(rewriter, op->getLoc(), structType, values, text, constraints);
  rewriter.replaceOp(op, structResults(rewriter, op->getLoc(), asmOp, n));
}

/// The instruction of a tied asm op: `wgmma.wait_group.sync.aligned N;`
/// (f32 accumulators, or int8's s32 ones), or the fence (register-A
/// fragments); outputs $0..$n-1 tied to the inputs.
std::string tiedAsmText(PtxWgmmaWaitOp op) {
  return "wgmma.wait_group.sync.aligned " + std::to_string(op.getPending()) +
         ";";
}
std::string tiedAsmText(PtxWgmmaFenceOp) { return "wgmma.fence.sync.aligned;"; }

template <typename Op> struct TiedAsmLowering : ConvertOpToLLVMPattern<Op> {
  using ConvertOpToLLVMPattern<Op>::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    replaceWithTiedAsm(op, adaptor.getValues(), tiedAsmText(op), rewriter);
    return success();
  }
};

/// One register-A wgmma: the accumulators $0..$r-1 (tied to the inputs
/// $r..$2r-1), A's four words, B's descriptor; scale-d from a predicate that
/// is always true (the accumulator is always added).
struct WgmmaRegALowering : ConvertOpToLLVMPattern<PtxWgmmaRegAOp> {
  using ConvertOpToLLVMPattern::ConvertOpToLLVMPattern;
  LogicalResult
  matchAndRewrite(PtxWgmmaRegAOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    int64_t r = op.getAcc().size();
    Type in = op.getInputType();
    bool fp8 = in.getIntOrFloatBitWidth() == 8;
    std::string type = in.isBF16()                 ? "bf16"
                       : isa<Float8E4M3FNType>(in) ? "e4m3"
                       : isa<Float8E5M2Type>(in)   ? "e5m2"
                                                   : "f16";
    std::string text = "{\n.reg .pred p;\nsetp.ne.b32 p, 1, 0;\n"
                       "wgmma.mma_async.sync.aligned.m64n" +
                       std::to_string(op.getN()) + (fp8 ? "k32" : "k16") +
                       ".f32." + type + "." + type + " {";
    for (int64_t i = 0; i < r; ++i)
      text += "$" + std::to_string(i) + (i + 1 < r ? ", " : "}, {");
    for (int64_t i = 0; i < 4; ++i)
      text += "$" + std::to_string(2 * r + i) + (i < 3 ? ", " : "}, ");
    // fp8 has no transpose immediate (B is K-major).
    text += "$" + std::to_string(2 * r + 4) + ", p, 1, 1" +
            (fp8               ? ""
             : op.getBKMajor() ? ", 0"
                               : ", 1") +
            ";\n}";
    std::string constraints;
    for (int64_t i = 0; i < r; ++i)
      constraints += "=f,";
    for (int64_t i = 0; i < r; ++i)
      constraints += std::to_string(i) + ",";
    constraints += "r,r,r,r,l";
    SmallVector<Value> operands(adaptor.getAcc());
    llvm::append_range(operands, adaptor.getA());
    operands.push_back(adaptor.getBDesc());
    auto structType = LLVM::LLVMStructType::getLiteral(
        getContext(), SmallVector<Type>(r, rewriter.getF32Type()));
    auto asmOp = inlineAsm(rewriter, op.getLoc(), structType, operands, text,
                           constraints);
    rewriter.replaceOp(op, structResults(rewriter, op.getLoc(), asmOp, r));
    return success();
  }
};

struct TilePtxToLLVMInterface : ConvertToLLVMPatternInterface {
  using ConvertToLLVMPatternInterface::ConvertToLLVMPatternInterface;
  void populateConvertToLLVMConversionPatterns(
      ConversionTarget &target, LLVMTypeConverter &converter,
      RewritePatternSet &patterns) const final {
    target.addIllegalOp<PtxLoadGlobalOp, PtxStoreGlobalOp, PtxAtomGlobalOp,
                        PtxWgmmaWaitOp, PtxWgmmaFenceOp, PtxWgmmaRegAOp>();
    populateTilePtxToLLVMPatterns(converter, patterns);
  }
};

} // namespace

void mlir::tile::populateTilePtxToLLVMPatterns(LLVMTypeConverter &converter,
                                               RewritePatternSet &patterns) {
  patterns.add<LoadGlobalLowering, StoreGlobalLowering, AtomGlobalLowering,
               TiedAsmLowering<PtxWgmmaWaitOp>,
               TiedAsmLowering<PtxWgmmaFenceOp>, WgmmaRegALowering>(converter);
}

void mlir::tile::registerConvertTilePtxToLLVMInterface(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, TileDialect *dialect) {
    dialect->addInterfaces<TilePtxToLLVMInterface>();
  });
}
