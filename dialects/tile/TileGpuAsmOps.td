//===- TileGpuAsmOps.td - PTX the GPU lowering writes itself -*- tablegen -*-===//
//
// The global accesses convert-tile-to-gpu needs in forms neither LLVM nor the
// NVVM dialect has: NVPTX has no predicated or scoped forms of LLVM's loads,
// stores and atomics (it prints every atomicrmw at gpu scope), and
// nvvm.inline_ptx turns constant operands into immediates ("n"), which an
// f32/f64 atomic or a constant predicate cannot take. Each op is one PTX
// instruction with typed operands; TilePtxToLLVM.cpp lowers all of them to
// llvm.inline_asm (in convert-gpu-to-nvvm).
//
//===----------------------------------------------------------------------===//
#ifndef TILE_GPU_ASM_OPS_TD
#define TILE_GPU_ASM_OPS_TD

include "dialects/tile/TileDialect.td"
include "dialects/tile/TileAttrs.td"
include "mlir/Dialect/LLVMIR/LLVMOpBase.td"

def Tile_GlobalPtr : LLVM_PointerInAddressSpace<1>;
def Tile_PtxWord : AnyTypeOf<[I16, I32]>;

def Tile_PtxLoadGlobalOp : Tile_Op<"ptx.ld_global"> {
  let summary = "predicated ld.global of 1, 2 or 4 words; other lanes read the pad";
  let description = [{
    `mov` of each `pad` word into its result, then
    `@predicate ld{.sem.scope}.global{.vN}.{b32,b16,u8}` of the words at
    `address`: lanes off the predicate keep the pad. i16 words are one b16
    word, or with `byte` one u8 (widened into the b16 register). An ordered
    load has `memory_order` (relaxed or acquire) and `memory_scope`.
  }];
  let arguments = (ins Tile_GlobalPtr:$address, I1:$predicate,
                       DenseI64ArrayAttr:$pad, UnitAttr:$byte,
                       OptionalAttr<Tile_MemoryOrderAttr>:$memory_order,
                       OptionalAttr<Tile_MemoryScopeAttr>:$memory_scope);
  let results = (outs Variadic<Tile_PtxWord>:$words);
  let assemblyFormat = "$address `,` $predicate attr-dict `:` type($words)";
  let hasVerifier = 1;
}

def Tile_PtxStoreGlobalOp : Tile_Op<"ptx.st_global"> {
  let summary = "predicated st.global of 1, 2 or 4 words";
  let description = [{
    `@predicate st{.sem.scope}.global{.vN}.{b32,b16,b8}` of `words` at
    `address`; with `byte` the one i16 word stores its low byte. An ordered
    store has `memory_order` (relaxed or release) and `memory_scope`.
  }];
  let arguments = (ins Tile_GlobalPtr:$address, I1:$predicate,
                       Variadic<Tile_PtxWord>:$words, UnitAttr:$byte,
                       OptionalAttr<Tile_MemoryOrderAttr>:$memory_order,
                       OptionalAttr<Tile_MemoryScopeAttr>:$memory_scope);
  let assemblyFormat = [{
    $address `,` $predicate `,` $words attr-dict `:` type($words)
  }];
  let hasVerifier = 1;
}

def Tile_PtxAtomGlobalOp : Tile_Op<"ptx.atom_global",
    [AllTypesMatch<["value", "result"]>]> {
  let summary = "atom.relaxed.<scope>.global.<kind>: a relaxed scoped atomic";
  let description = [{
    The old value at `address` after a relaxed read-modify-write with
    `value` at `memory_scope` (block: cta, device: gpu, sys): add on
    i32/i64/f32/f64, the others on i32/i64 (max/min signed, umax/umin
    unsigned). `supports(kind, type)` says which.
  }];
  let arguments = (ins Tile_AtomicKindAttr:$kind, Tile_GlobalPtr:$address,
                       AnyTypeOf<[I32, I64, F32, F64]>:$value,
                       Tile_MemoryScopeAttr:$memory_scope);
  let results = (outs AnyTypeOf<[I32, I64, F32, F64]>:$result);
  let assemblyFormat = "$kind $address `,` $value attr-dict `:` type($value)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Whether PTX has atom.<kind> for `type`.
    static bool supports(::mlir::tile::AtomicKind kind, ::mlir::Type type);
  }];
}

def Tile_PtxWgmmaWaitOp : Tile_Op<"ptx.wgmma_wait"> {
  let summary = "wgmma.wait_group that passes the accumulators through";
  let description = [{
    `wgmma.wait_group.sync.aligned pending`, its outputs tied to `values`:
    no read of an accumulator of an in-flight wgmma can be scheduled before
    the wait (NVVM's wait takes no operands, and ptxas serializes every
    wgmma when a register may be read early).
  }];
  let arguments = (ins Variadic<AnyTypeOf<[F32, I32]>>:$values,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$pending);
  let results = (outs Variadic<AnyTypeOf<[F32, I32]>>:$results);
  let assemblyFormat = [{
    $values `pending` `=` $pending attr-dict `:` type($values) `->` type($results)
  }];
  let hasVerifier = 1;
}

def Tile_PtxWgmmaFenceOp : Tile_Op<"ptx.wgmma_fence"> {
  let summary = "wgmma.fence that passes register-A fragments through";
  let description = [{
    `wgmma.fence.sync.aligned`, its outputs tied to `values` (the A
    fragments of the register-A wgmmas after it): every fragment is
    computed before the fence. NVVM's fence takes no operands, so LLVM
    sank fragment arithmetic (fp8's shuffled P, f16's converted P) between
    the wgmmas, and ptxas then injected a fence in front of each, or
    serialized every wgmma of the kernel where one landed on a divergent
    path. convert-tile-to-gpu's `tied-wgmma-fence=false` keeps NVVM's fence
    for 16-bit fragments.
  }];
  let arguments = (ins Variadic<I32>:$values);
  let results = (outs Variadic<I32>:$results);
  let assemblyFormat = [{
    $values attr-dict `:` type($values) `->` type($results)
  }];
  let hasVerifier = 1;
}

def Tile_PtxWgmmaRegAOp : Tile_Op<"ptx.wgmma_reg_a", [AttrSizedOperandSegments]> {
  let summary = "wgmma.mma_async.m64nNk16 (k32 for fp8) with A in registers";
  let description = [{
    One `wgmma.mma_async.sync.aligned.m64n<n>k16.f32.<in>.<in>` with A as
    four 32-bit fragment registers and B through the shared-memory
    descriptor `b_desc` (N-major, or K-major with `b_k_major`),
    accumulating into `acc` (n / 2 f32, tied to the results). fp8 inputs
    (e4m3, e5m2) take 32 of K per instruction (`m64n<n>k32`) and B only
    K-major. NVVM's wgmma op has only the shared-memory form of A.
  }];
  let arguments = (ins Variadic<F32>:$acc, Variadic<I32>:$a, I64:$b_desc,
                       ConfinedAttr<I64Attr, [IntPositive]>:$n,
                       TypeAttrOf<AnyTypeOf<[F16, BF16, F8E4M3FN, F8E5M2]>>:$input_type,
                       UnitAttr:$b_k_major);
  let results = (outs Variadic<F32>:$results);
  let assemblyFormat = [{
    `(` $acc `)` `,` `(` $a `)` `,` $b_desc attr-dict `:` `(` type($acc) `)`
    `,` `(` type($a) `)` `->` type($results)
  }];
  let hasVerifier = 1;
}

#endif // TILE_GPU_ASM_OPS_TD
