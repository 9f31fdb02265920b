//===- TileGpuAttrs.td - tilegpu attributes ------------------*- tablegen -*-===//
#ifndef TILEGPU_ATTRS_TD
#define TILEGPU_ATTRS_TD

include "dialects/tilegpu/TileGpuDialect.td"

def TileGpu_TensorMapOfAttr : AttrDef<TileGpu_Dialect, "TensorMapOf"> {
  let mnemonic = "tensor_map_of";
  let summary = "the array a tensor-map kernel argument describes";
  let description = [{
    The argument attribute `tilegpu.tensor_map_of` of a `!tilegpu.tensor_map`
    argument of a `tile.kernel`: the runtime encodes the map at each launch
    (cuTensorMapEncodeTiled) from the kernel's array argument number
    `array` (marked `tile.tma_ok`): its base address, extents and strides,
    dimensions innermost first as the driver takes them, with the map type's
    box (one extent per array dimension, in the array's order, innermost
    last), element type and swizzle; elements outside the array read as
    zero. Tensor-map arguments follow every other argument of the kernel,
    and the compiled kernel's metadata lists them in order
    (docs/internals.md section 3).

    ```mlir
    func.func @k(%a: !tile.array<?x?xf16, strides = [?, 1], align = 16> {tile.tma_ok},
                 %map: !tilegpu.tensor_map<128x64xf16, swizzle = 128>
                     {tilegpu.tensor_map_of = #tilegpu.tensor_map_of<array = 0>})
    ```
  }];
  let parameters = (ins "int64_t":$array);
  let assemblyFormat = "`<` `array` `=` $array `>`";
  let extraClassDeclaration = [{
    /// The argument attribute's name.
    static constexpr ::llvm::StringLiteral getArgAttrName() {
      return ::llvm::StringLiteral("tilegpu.tensor_map_of");
    }
  }];
}

def TileGpu_WarpSpecializedAttr : AttrDef<TileGpu_Dialect, "WarpSpecialized"> {
  let mnemonic = "warp_specialized";
  let summary = "the warp roles of a warp-specialized kernel";
  let description = [{
    The attribute `tilegpu.warp_specialized` of the `scf.if` that
    tile-warp-specialize splits a kernel's warps with. The block has
    `consumers + producers` warps; the then-region runs on the `producers`
    warps after the first `consumers` (threads 32 * consumers and up), the
    else-region on the first `consumers` warps, with the layouts
    tile-map-threads gave the kernel. convert-tile-to-gpu lowers what one
    thread issues (mbarrier and TMA ops) on the first thread of the region,
    and a block barrier in a region synchronizes that region's threads (a
    named barrier).

    ```mlir
    scf.if %is_producer {
      ...
    } else {
      ...
    } {tilegpu.warp_specialized = #tilegpu.warp_specialized<consumers = 8, producers = 4>}
    ```
  }];
  let parameters = (ins "int64_t":$consumers, "int64_t":$producers);
  let assemblyFormat =
      "`<` `consumers` `=` $consumers `,` `producers` `=` $producers `>`";
  let extraClassDeclaration = [{
    /// The name of the attribute on the scf.if.
    static constexpr ::llvm::StringLiteral getAttrName() {
      return ::llvm::StringLiteral("tilegpu.warp_specialized");
    }
  }];
}

#endif // TILEGPU_ATTRS_TD
