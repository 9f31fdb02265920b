//===- TileAttrs.td - tile dialect attributes ----------------*- tablegen -*-===//
#ifndef TILE_ATTRS_TD
#define TILE_ATTRS_TD

include "dialects/tile/TileDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/TensorEncoding.td"

def Tile_AtomicKind : I32EnumAttr<"AtomicKind", "read-modify-write kind", [
    I32EnumAttrCase<"add", 0>, I32EnumAttrCase<"max", 1>,
    I32EnumAttrCase<"min", 2>, I32EnumAttrCase<"xchg", 3>,
    I32EnumAttrCase<"and_", 4, "and">, I32EnumAttrCase<"or_", 5, "or">,
    I32EnumAttrCase<"xor_", 6, "xor">,
    // Integer max/min compare as signed; these as unsigned (the IR's
    // integers are signless, so the frontend picks by the array's dtype).
    I32EnumAttrCase<"umax", 7>, I32EnumAttrCase<"umin", 8>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tile";
}

def Tile_AtomicKindAttr : EnumAttr<Tile_Dialect, Tile_AtomicKind, "atomic_kind"> {
  let assemblyFormat = "$value";
}

def Tile_GridDependencyAction : I32EnumAttr<"GridDependencyAction",
    "programmatic dependent launch: what a kernel tells the grid scheduler", [
    I32EnumAttrCase<"wait", 0>, I32EnumAttrCase<"launch_dependents", 1>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tile";
}

def Tile_GridDependencyActionAttr
    : EnumAttr<Tile_Dialect, Tile_GridDependencyAction, "grid_dependency_action"> {
  let assemblyFormat = "$value";
}

// cuTile's memory model. Absent attributes mean the defaults: weak (plain
// accesses, no scope) for loads and stores, acq_rel at device scope for
// atomics.
def Tile_MemoryOrder : I32EnumAttr<"MemoryOrder", "ordering of a memory access", [
    I32EnumAttrCase<"weak", 0>, I32EnumAttrCase<"relaxed", 1>,
    I32EnumAttrCase<"acquire", 2>, I32EnumAttrCase<"release", 3>,
    I32EnumAttrCase<"acq_rel", 4>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tile";
}

def Tile_MemoryOrderAttr : EnumAttr<Tile_Dialect, Tile_MemoryOrder, "memory_order"> {
  let assemblyFormat = "`<` $value `>`";
}

def Tile_MemoryScope : I32EnumAttr<"MemoryScope", "threads an ordering applies to", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"block", 1>,
    I32EnumAttrCase<"device", 2>, I32EnumAttrCase<"sys", 3>]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::mlir::tile";
}

def Tile_MemoryScopeAttr : EnumAttr<Tile_Dialect, Tile_MemoryScope, "memory_scope"> {
  let assemblyFormat = "`<` $value `>`";
}


//===----------------------------------------------------------------------===//
// Layout encodings: which thread and warp of a block owns which tile element.
// tile-map-threads attaches them to tensor types; convert-tile-to-gpu reads
// them (as LinearLayouts, dialects/tile/LinearLayout.h) to emit per-thread
// code.
//===----------------------------------------------------------------------===//

def Tile_LayoutAttrInterface : AttrInterface<"LayoutAttrInterface"> {
  let cppNamespace = "::mlir::tile";
  let description = [{
    A layout encoding of tile tensors: which register of which lane of which
    warp holds each element. Every layout is defined by its linear form over
    a tensor shape (`toLinearLayout`); the lowering reads only that form.
  }];
  let methods = [
    InterfaceMethod<"Rank of the tensors this layout applies to.",
      "unsigned", "getRank">,
    InterfaceMethod<"Warps per block the layout distributes over.",
      "int", "getNumWarps">,
    InterfaceMethod<[{
        The layout over a tensor of `shape` as a linear map from (register,
        lane, warp) bits to coordinates; failure where the layout does not
        apply to `shape` (see verifyShape).
      }],
      "::mlir::FailureOr<::mlir::tile::LinearLayout>", "toLinearLayout",
      (ins "::llvm::ArrayRef<int64_t>":$shape)>,
    InterfaceMethod<[{
        Checks that the layout applies to a tensor of `shape`: the layout's
        rank, and static power-of-two extents (the linear form needs them).
      }],
      "::llvm::LogicalResult", "verifyShape",
      (ins "::llvm::ArrayRef<int64_t>":$shape,
           "::llvm::function_ref<::mlir::InFlightDiagnostic()>":$emitError),
      /*methodBody=*/"",
      /*defaultImplementation=*/[{
        return ::mlir::tile::verifyLayoutShape($_attr, shape, emitError);
      }]>,
  ];
}

// A layout encoding: a tensor type carrying it is verified against it.
class Tile_LayoutAttr<string name, string attrMnemonic>
    : AttrDef<Tile_Dialect, name, [
        DeclareAttrInterfaceMethods<Tile_LayoutAttrInterface,
                                    ["getRank", "getNumWarps",
                                     "toLinearLayout"]>,
        DeclareAttrInterfaceMethods<VerifiableTensorEncoding>]> {
  let mnemonic = attrMnemonic;
}

def Tile_BlockedLayoutAttr : Tile_LayoutAttr<"BlockedLayout", "blocked"> {
  let summary = "each thread owns sizePerThread contiguous elements";
  let description = [{
    Triton's blocked layout: a thread owns a `sizePerThread` box, a warp is a
    `threadsPerWarp` grid of threads, a block a `warpsPerCTA` grid of warps;
    `order` lists the dimensions fastest-varying first. The pattern repeats
    over tiles larger than it covers (more registers per thread) and is
    replicated over tiles smaller than it (threads share elements).
  }];
  let parameters = (ins ArrayRefParameter<"unsigned">:$sizePerThread,
                        ArrayRefParameter<"unsigned">:$threadsPerWarp,
                        ArrayRefParameter<"unsigned">:$warpsPerCTA,
                        ArrayRefParameter<"unsigned">:$order);
  let assemblyFormat = [{
    `<` `{` `sizePerThread` `=` `[` $sizePerThread `]` `,`
    `threadsPerWarp` `=` `[` $threadsPerWarp `]` `,`
    `warpsPerCTA` `=` `[` $warpsPerCTA `]` `,`
    `order` `=` `[` $order `]` `}` `>`
  }];
  let genVerifyDecl = 1;
}

def Tile_SliceLayoutAttr : Tile_LayoutAttr<"SliceLayout", "slice"> {
  let summary = "the parent layout with dimension `dim` removed";
  let description = [{
    The layout of a reduction's result: threads that differed only along
    `dim` in the parent now hold the same element, so `expand_dims` and
    `broadcast` of the result back to the parent's shape move no data.
  }];
  let parameters = (ins "unsigned":$dim, "::mlir::Attribute":$parent);
  let assemblyFormat = "`<` `{` `dim` `=` $dim `,` `parent` `=` $parent `}` `>`";
  let genVerifyDecl = 1;
}

def Tile_MmaLayoutAttr : Tile_LayoutAttr<"MmaLayout", "mma"> {
  let summary = "mma.sync m16n8 accumulator fragments";
  let description = [{
    The accumulator of `mma.sync.m16n8kK` (version 2: sm_80 and sm_90): a warp
    owns 16x8 instruction tiles, lane `l` holds rows `l/4` and `l/4 + 8`,
    columns `2*(l%4)` and `2*(l%4)+1`. Warps form a `warpsPerCTA` grid of
    instruction tiles; the grid repeats over the tile (N first, then M).
    The wgmma accumulator (sm_90) is this layout too: with warps `[4w, 1]`
    each warp holds 16 rows of its warpgroup's 64-row instruction tile.
  }];
  let parameters = (ins "unsigned":$version,
                        ArrayRefParameter<"unsigned">:$warpsPerCTA);
  let assemblyFormat = [{
    `<` `{` `version` `=` $version `,` `warpsPerCTA` `=` `[` $warpsPerCTA `]` `}` `>`
  }];
  let genVerifyDecl = 1;
}

//===----------------------------------------------------------------------===//
// Tiling decisions: tile-tiling records them, the GPU lowering reads them.
//===----------------------------------------------------------------------===//

def Tile_MmaTilingAttr : AttrDef<Tile_Dialect, "MmaTiling"> {
  let mnemonic = "mma_tiling";
  let summary = "how a tile.mma splits over warps and mma.sync instructions";
  let description = [{
    Set by `tile-tiling` on tensor-core `tile.mma` ops: `warps` is the warp
    grid over the MxN block tile, `warpTile` the MxN elements each warp
    computes (`max(instr, block / warps)`; warps beyond the block's
    instruction tiles replicate), `instr` the mma.sync shape (m, n, k):
    16x8x16 for f16/bf16, 16x8x8 for tf32, 16x8x32 for int8.
    `tile-map-threads` builds the accumulator's `#tile.mma` layout from
    `warps` and the lowering steps K by `instr[2]`.

    A warpgroup tiling (sm_90 wgmma) has `instr = [64, N, 16]`: warps
    `[4w, 1]`, each group of four consecutive warps computing 64-row blocks
    of all N columns with `wgmma.mma_async.m64nNk16`; the accumulator layout
    is the same `#tile.mma` layout as for mma.sync with those warps.
  }];
  let parameters = (ins ArrayRefParameter<"int64_t">:$warps,
                        ArrayRefParameter<"int64_t">:$warpTile,
                        ArrayRefParameter<"int64_t">:$instr);
  let assemblyFormat = [{
    `<` `{` `warps` `=` `[` $warps `]` `,` `warp_tile` `=` `[` $warpTile `]`
    `,` `instr` `=` `[` $instr `]` `}` `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Whether this is a warpgroup (wgmma, m = 64) tiling.
    bool isWarpgroup() const { return getInstr()[0] == 64; }
  }];
}

#endif // TILE_ATTRS_TD
