//===- TileAttrs.td - tile dialect attributes ----------------*- tablegen -*-===//
#ifndef TILE_ATTRS_TD
#define TILE_ATTRS_TD

include "dialects/tile/TileDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

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
// them (through compiler/gpu/LinearLayout.h) to emit per-thread code.
//===----------------------------------------------------------------------===//

class Tile_LayoutAttr<string name, string attrMnemonic>
    : AttrDef<Tile_Dialect, name> {
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
}

def Tile_MmaLayoutAttr : Tile_LayoutAttr<"MmaLayout", "mma"> {
  let summary = "mma.sync m16n8 accumulator fragments";
  let description = [{
    The accumulator of `mma.sync.m16n8kK` (version 2: sm_80 and sm_90): a warp
    owns 16x8 instruction tiles, lane `l` holds rows `l/4` and `l/4 + 8`,
    columns `2*(l%4)` and `2*(l%4)+1`. Warps form a `warpsPerCTA` grid of
    instruction tiles; the grid repeats over the tile (N first, then M).
  }];
  let parameters = (ins "unsigned":$version,
                        ArrayRefParameter<"unsigned">:$warpsPerCTA);
  let assemblyFormat = [{
    `<` `{` `version` `=` $version `,` `warpsPerCTA` `=` `[` $warpsPerCTA `]` `}` `>`
  }];
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
