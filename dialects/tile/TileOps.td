//===- TileOps.td - tile dialect operations ------------------*- tablegen -*-===//
#ifndef TILE_OPS_TD
#define TILE_OPS_TD

include "dialects/tile/TileDialect.td"
include "dialects/tile/TileTypes.td"
include "dialects/tile/TileAttrs.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// A tile: a ranked tensor with a static shape (rank 0 is a scalar tile).
def Tile_Tile : StaticShapeTensorOf<[AnyType]>;
def Tile_IntTile : StaticShapeTensorOf<[AnySignlessInteger]>;
def Tile_MaskTile : StaticShapeTensorOf<[I1]>;
def Tile_Array : Type<CPred<"::llvm::isa<::mlir::tile::ArrayType>($_self)">,
                      "tile array", "::mlir::tile::ArrayType">;

//===----------------------------------------------------------------------===//
// Block indexing and array metadata
//===----------------------------------------------------------------------===//

class Tile_BlockQueryOp<string mnemonic, string what>
    : Tile_Op<mnemonic, [Pure]> {
  let summary = what;
  let arguments = (ins I32Attr:$axis);
  let results = (outs I32:$result);
  let assemblyFormat = "$axis attr-dict";
  let hasVerifier = 1;
}

def Tile_BidOp : Tile_BlockQueryOp<"bid", "the index of this block along an axis of the grid">;
def Tile_NumBlocksOp : Tile_BlockQueryOp<"num_blocks", "the number of blocks along an axis of the grid">;

class Tile_ArrayQueryOp<string mnemonic, string what>
    : Tile_Op<mnemonic, [Pure]> {
  let summary = what;
  let arguments = (ins Tile_Array:$array, I32Attr:$dim);
  let results = (outs I32:$result);
  let assemblyFormat = "$array `,` $dim attr-dict `:` qualified(type($array))";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_DimOp : Tile_ArrayQueryOp<"dim", "the extent of an array along a dimension">;
def Tile_StrideOp : Tile_ArrayQueryOp<"stride", "the stride, in elements, of an array along a dimension">;

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

def Tile_LoadOp : Tile_Op<"load", [MemoryEffects<[MemRead]>]> {
  let summary = "load a tile-indexed block of an array";
  let description = [{
    Reads the block of `array` whose origin in dimension `d` is
    `indices[d] * block[d]`, where `block` is the result shape with `order`
    undone. Elements outside the array read as `padding` (zero when absent).
    With `order`, the result is the block with its axes permuted:
    `result.shape[i] == block[order[i]]`; `order = [1, 0]` loads a transpose.
  }];
  let arguments = (ins Tile_Array:$array, Variadic<I32>:$indices,
                   OptionalAttr<TypedAttrInterface>:$padding,
                   OptionalAttr<DenseI64ArrayAttr>:$order,
                   OptionalAttr<Tile_MemoryOrderAttr>:$memory_order,
                   OptionalAttr<Tile_MemoryScopeAttr>:$memory_scope);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $array `[` $indices `]` attr-dict `:` qualified(type($array)) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The block's shape in the array's own axes (the result with order undone).
    SmallVector<int64_t> getBlockShape();
  }];
}

def Tile_StoreOp : Tile_Op<"store", [MemoryEffects<[MemWrite]>]> {
  let summary = "store a tile into a tile-indexed block of an array";
  let description = [{
    Writes `value` to the block of `array` whose origin in dimension `d` is
    `indices[d] * shape(value)[d]`. Elements outside the array are dropped.
  }];
  let arguments = (ins Tile_Array:$array, Variadic<I32>:$indices, Tile_Tile:$value,
                   OptionalAttr<Tile_MemoryOrderAttr>:$memory_order,
                   OptionalAttr<Tile_MemoryScopeAttr>:$memory_scope);
  let assemblyFormat = [{
    $array `[` $indices `]` `,` $value attr-dict `:` qualified(type($array)) `,` type($value)
  }];
  let hasVerifier = 1;
}

// Views: arrays over the memory of another. Accesses through a view use
// the view's extents for bounds; the lowerings rebuild the view's base
// pointer, extents and strides from the viewed array's.
def Tile_ArraySliceOp : Tile_Op<"array_slice", [Pure]> {
  let summary = "the elements [start, stop) of an array along one axis";
  let description = [{
    cuTile's `Array.slice`: the result's element `i` along `axis` is the
    array's element `start + i`; its extent there is `stop - start` (both
    clamped into `[0, extent]`). Other axes and every stride are the array's.
  }];
  let arguments = (ins Tile_Array:$array, I32Attr:$axis, I32:$start, I32:$stop);
  let results = (outs Tile_Array:$result);
  let assemblyFormat = [{
    $array `[` $axis `]` $start `,` $stop attr-dict `:` qualified(type($array))
    `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Tile_RawViewOp : Tile_Op<"raw_view", [Pure]> {
  let summary = "an array's memory as elements at offsets from its base";
  let description = [{
    cuTile's `Array.get_raw_memory`: a rank-1, unit-stride array starting at
    the array's base pointer, unbounded (its extent is the largest i64), so
    that element-indexed accesses through it address `base + offset`.
  }];
  let arguments = (ins Tile_Array:$array);
  let results = (outs Tile_Array:$result);
  let assemblyFormat = [{
    $array attr-dict `:` qualified(type($array)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def Tile_ArraySelectOp : Tile_Op<"array_select", [Pure]> {
  let summary = "one array of a list of arrays, chosen by a runtime index";
  let description = [{
    A kernel parameter that is a list of N arrays (cuTile's grouped GEMM)
    arrives as N arguments of one array type; `list[index]` with a runtime
    index selects one of them. The index is clamped into `[0, N)`: below 0
    it selects the first array, from N on the last, so no index reads
    outside the list. All operands and the result have the same type.

    ```mlir
    %a = tile.array_select %g, %a0, %a1, %a2 : i32, !tile.array<?x?xf16>
    ```
  }];
  let arguments = (ins AnySignlessInteger:$index, Variadic<Tile_Array>:$arrays);
  let results = (outs Tile_Array:$result);
  let assemblyFormat = [{
    $index `,` $arrays attr-dict `:` type($index) `,` qualified(type($result))
    custom<SameArrayTypes>(ref($arrays), type($arrays), ref(type($result)))
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

// Masks are i1 tiles of the lanes' shape; spelled once, in the result type.
class Tile_MaskMatches<string lanes> : OptionalTypesMatchWith<
    "mask is an i1 tile of the lanes' shape", lanes, "mask",
    "::llvm::cast<::mlir::RankedTensorType>($_self).clone("
    "::mlir::IntegerType::get($_self.getContext(), 1))">;

def Tile_GatherOp : Tile_Op<"gather", [MemoryEffects<[MemRead]>, AttrSizedOperandSegments,
    Tile_MaskMatches<"result">,
    OptionalTypesMatchWith<"other has the result type", "result", "other", "$_self">]> {
  let summary = "element-indexed load";
  let description = [{
    `result[i] = array[indices[0][i], indices[1][i], ...]`. Lanes out of
    bounds or where `mask` is false read `other` (zero when absent).
  }];
  let arguments = (ins Tile_Array:$array, Variadic<Tile_IntTile>:$indices,
                   Optional<Tile_MaskTile>:$mask, Optional<Tile_Tile>:$other,
                   OptionalAttr<Tile_MemoryOrderAttr>:$memory_order,
                   OptionalAttr<Tile_MemoryScopeAttr>:$memory_scope);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $array `[` $indices `]` (`mask` $mask^)? (`other` $other^)? attr-dict `:`
    qualified(type($array)) `[` type($indices) `]` `->` type($result)
  }];
  let hasVerifier = 1;
}

def Tile_ScatterOp : Tile_Op<"scatter", [MemoryEffects<[MemWrite]>,
    AttrSizedOperandSegments, Tile_MaskMatches<"value">]> {
  let summary = "element-indexed store";
  let description = [{
    `array[indices[0][i], ...] = value[i]` for every lane in bounds where
    `mask` is true (all lanes when absent).
  }];
  let arguments = (ins Tile_Array:$array, Variadic<Tile_IntTile>:$indices,
                   Tile_Tile:$value, Optional<Tile_MaskTile>:$mask,
                   OptionalAttr<Tile_MemoryOrderAttr>:$memory_order,
                   OptionalAttr<Tile_MemoryScopeAttr>:$memory_scope);
  let assemblyFormat = [{
    $array `[` $indices `]` `,` $value (`mask` $mask^)? attr-dict `:`
    qualified(type($array)) `[` type($indices) `]` `,` type($value)
  }];
  let hasVerifier = 1;
}

def Tile_AtomicRMWOp : Tile_Op<"atomic_rmw", [MemoryEffects<[MemRead, MemWrite]>,
    AttrSizedOperandSegments, Tile_MaskMatches<"value">,
    AllTypesMatch<["value", "result"]>]> {
  let summary = "element-indexed atomic read-modify-write";
  let description = [{
    Atomically combines `value` into `array[indices...]` for every lane in
    bounds where `mask` is true, and returns the old values (`0` for lanes
    not performed).
  }];
  // `value` comes before the variadic `indices`: ODS infers the result type
  // from a fixed operand position, which after `indices` was an index for
  // any array of rank 2 or more.
  let arguments = (ins Tile_AtomicKindAttr:$kind, Tile_Array:$array,
                   Tile_Tile:$value, Variadic<Tile_IntTile>:$indices,
                   Optional<Tile_MaskTile>:$mask,
                   OptionalAttr<Tile_MemoryOrderAttr>:$memory_order,
                   OptionalAttr<Tile_MemoryScopeAttr>:$memory_scope);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $kind $array `[` $indices `]` `,` $value (`mask` $mask^)? attr-dict `:`
    qualified(type($array)) `[` type($indices) `]` `,` type($value)
  }];
  let hasVerifier = 1;
}

def Tile_AtomicCASOp : Tile_Op<"atomic_cas", [MemoryEffects<[MemRead, MemWrite]>,
    AllTypesMatch<["cmp", "value", "result"]>]> {
  let summary = "element-indexed atomic compare-and-swap";
  let description = [{
    For every lane in bounds: if `array[indices...] == cmp`, store `value`.
    Returns the old values.
  }];
  // `cmp` and `value` before `indices`, as in tile.atomic_rmw.
  let arguments = (ins Tile_Array:$array, Tile_Tile:$cmp, Tile_Tile:$value,
                   Variadic<Tile_IntTile>:$indices,
                   OptionalAttr<Tile_MemoryOrderAttr>:$memory_order,
                   OptionalAttr<Tile_MemoryScopeAttr>:$memory_scope);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $array `[` $indices `]` `,` $cmp `,` $value attr-dict `:`
    qualified(type($array)) `[` type($indices) `]` `,` type($value)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

def Tile_MmaOp : Tile_Op<"mma", [Pure, AllTypesMatch<["acc", "result"]>]> {
  let summary = "matrix multiply-accumulate: a @ b + acc";
  let description = [{
    2-d (`MxK @ KxN + MxN`) or 3-d batched. Supported operand/accumulator
    dtypes: f16/bf16 with f32 or f16, f32 with f32 (`allow_tf32` lets the
    hardware round inputs to tf32), f64 with f64, i8 with i32.
    `fast_accumulation` (cuTile's `use_fast_acc`, on fp8 products widened to
    f16) lets sm_90's fp8 tensor cores compute them, whose accumulation keeps
    fewer bits than f32 (about 1e-4 of the sum of |products| on the H200);
    without it an fp8 mma is exact in f32.
  }];
  let arguments = (ins Tile_Tile:$a, Tile_Tile:$b, Tile_Tile:$acc,
                   UnitAttr:$allow_tf32, UnitAttr:$fast_accumulation,
                   OptionalAttr<Tile_MmaTilingAttr>:$tiling);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $acc attr-dict `:` type($a) `,` type($b) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The mma.sync shape (m, n, k) that computes this op on tensor cores,
    /// or empty when its types or shapes have none (FMA).
    SmallVector<int64_t> getTensorCoreShape();
    /// The checks of a `tiling` against the op's shapes and types.
    LogicalResult verifyTiling(MmaTilingAttr tiling);
    /// The checks of a warpgroup (wgmma) tiling.
    LogicalResult verifyWarpgroupTiling(MmaTilingAttr tiling);
  }];
}

def Tile_ReduceOp : Tile_Op<"reduce", [Pure, SameVariadicOperandSize,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "reduce tiles along an axis with a combiner region";
  let description = [{
    Reduces `N` tiles of one shape along `axis` with a combiner whose block
    takes `2N` scalars (the accumulated values, then the new ones) and yields
    `N`. The results drop `axis`. The combiner must be associative and
    commutative up to the order the lowering chooses.
  }];
  let arguments = (ins Variadic<Tile_Tile>:$srcs, I32Attr:$axis);
  let results = (outs Variadic<Tile_Tile>:$results);
  let regions = (region SizedRegion<1>:$combiner);
  let assemblyFormat = [{
    `(` $srcs `)` `axis` `=` $axis attr-dict-with-keyword `:`
    functional-type($srcs, $results) $combiner
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "ValueRange":$srcs, "int":$axis)>
  ];
}

def Tile_ScanOp : Tile_Op<"scan", [Pure, SameVariadicOperandSize,
    SingleBlockImplicitTerminator<"YieldOp">]> {
  let summary = "inclusive scan of tiles along an axis";
  let description = [{
    `result[..., i, ...] = combine(result[..., i-1, ...], src[..., i, ...])`
    along `axis` (from the end when `reverse`). The combiner is as for
    `tile.reduce`; results have the sources' shapes.
  }];
  let arguments = (ins Variadic<Tile_Tile>:$srcs, I32Attr:$axis, UnitAttr:$reverse);
  let results = (outs Variadic<Tile_Tile>:$results);
  let regions = (region SizedRegion<1>:$combiner);
  let assemblyFormat = [{
    `(` $srcs `)` `axis` `=` $axis attr-dict-with-keyword `:`
    functional-type($srcs, $results) $combiner
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    OpBuilder<(ins "ValueRange":$srcs, "int":$axis, "bool":$reverse)>
  ];
}

def Tile_YieldOp : Tile_Op<"yield", [Pure, Terminator, ReturnLike,
    ParentOneOf<["ReduceOp", "ScanOp"]>]> {
  let summary = "yield the combined scalars of a reduce or scan combiner";
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
  let builders = [OpBuilder<(ins), [{ /* empty */ }]>];
}

//===----------------------------------------------------------------------===//
// Shape
//===----------------------------------------------------------------------===//

def Tile_BroadcastOp : Tile_Op<"broadcast", [Pure, SameOperandsAndResultElementType]> {
  let summary = "broadcast size-1 dimensions of a tile";
  let arguments = (ins Tile_Tile:$src);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

def Tile_ExpandDimsOp : Tile_Op<"expand_dims", [Pure, SameOperandsAndResultElementType]> {
  let summary = "insert a size-1 dimension";
  let arguments = (ins Tile_Tile:$src, I32Attr:$axis);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$src `,` $axis attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_ReshapeOp : Tile_Op<"reshape", [Pure, SameOperandsAndResultElementType]> {
  let summary = "reinterpret a tile with another shape (row-major order)";
  let arguments = (ins Tile_Tile:$src);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  // A loop-carried tile reshaped on entry and reshaped back before the yield
  // is carried in the inner shape (TileReshapeLoopFolding.cpp).
  let hasCanonicalizer = 1;
}

def Tile_PermuteOp : Tile_Op<"permute", [Pure, SameOperandsAndResultElementType]> {
  let summary = "permute the axes of a tile";
  let description = "`result.shape[i] == src.shape[perm[i]]`.";
  let arguments = (ins Tile_Tile:$src, DenseI64ArrayAttr:$perm);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$src `,` $perm attr-dict `:` type($src) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Tile_IotaOp : Tile_Op<"iota", [Pure]> {
  let summary = "the 1-d tile [0, 1, ..., n-1]";
  let results = (outs StaticShapeTensorOf<[AnySignlessInteger]>:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Tile_SplatOp : Tile_Op<"splat", [Pure,
    TypesMatchWith<"element type matches the scalar", "result", "src",
                   "::llvm::cast<::mlir::TensorType>($_self).getElementType()">]> {
  let summary = "a tile filled with a scalar";
  let arguments = (ins AnyTypeOf<[AnySignlessInteger, AnyFloat, Index]>:$src);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Layouts (after tile-map-threads)
//===----------------------------------------------------------------------===//

def Tile_ConvertLayoutOp : Tile_Op<"convert_layout", [Pure,
    SameOperandsAndResultShape, SameOperandsAndResultElementType]> {
  let summary = "move a tile's elements between thread layouts";
  let description = [{
    Inserted by `tile-map-threads` where a producer's layout differs from
    what a consumer needs. The value is unchanged; only which thread holds
    which element changes (through registers, or shared memory).
  }];
  let arguments = (ins Tile_Tile:$src);
  let results = (outs Tile_Tile:$result);
  let assemblyFormat = "$src attr-dict `:` type($src) `->` type($result)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Launch ordering
//===----------------------------------------------------------------------===//

def Tile_GridDependencyControlOp : Tile_Op<"grid_dependency_control",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "programmatic dependent launch: wait for, or release, a grid";
  let description = [{
    `wait`: blocks until the grid this one was launched after (as a
    programmatic dependent launch) has completed and its memory is visible;
    immediately true for a plain launch. `launch_dependents`: lets the next
    programmatic dependent launch on the stream start before this grid ends.
    cuTile's `grid_dependency_control_wait` / `_launch_dependents`; PTX
    `griddepcontrol` on sm_90, nothing on the CPU (launches run in order).
    Memory effects keep loads after a wait and stores before a release.
  }];
  let arguments = (ins Tile_GridDependencyActionAttr:$action);
  let assemblyFormat = "$action attr-dict";
}

//===----------------------------------------------------------------------===//
// Debugging
//===----------------------------------------------------------------------===//

def Tile_PrintOp : Tile_Op<"print", [MemoryEffects<[MemWrite]>]> {
  let summary = "print scalars and tiles from every block";
  let arguments = (ins StrAttr:$prefix, Variadic<AnyType>:$args);
  let assemblyFormat = "$prefix attr-dict ($args^ `:` type($args))?";
}

def Tile_AssertOp : Tile_Op<"assert", [MemoryEffects<[MemWrite]>]> {
  let summary = "abort the kernel when any lane of a condition is false";
  let arguments = (ins AnyTypeOf<[I1, Tile_MaskTile]>:$condition, StrAttr:$message);
  let assemblyFormat = "$condition `,` $message attr-dict `:` type($condition)";
}

#endif // TILE_OPS_TD
