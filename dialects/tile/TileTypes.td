//===- TileTypes.td - tile dialect types ---------------------*- tablegen -*-===//
#ifndef TILE_TYPES_TD
#define TILE_TYPES_TD

include "dialects/tile/TileDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

class Tile_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Tile_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Tile_ArrayType : Tile_Type<"Array", "array"> {
  let summary = "a strided n-d array in global memory";
  let description = [{
    A kernel argument that points at memory: a base pointer, a shape and
    strides (in elements). What the specialization proved is part of the type:
    a static extent or stride replaces `?`; `align` is a number of bytes that
    the base pointer and every non-unit stride (in bytes) are multiples of;
    `div` is a number that the innermost extent is a multiple of (rows of
    whole 16-byte copies; a batch of 8 leaves a (8, 2048, 2048) array its
    `div = 16`).

    ```mlir
    !tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t", "extents (ShapedType::kDynamic if unknown)">:$shape,
    "Type":$elementType,
    ArrayRefParameter<"int64_t", "strides (ShapedType::kDynamic if unknown)">:$strides,
    DefaultValuedParameter<"int64_t", "1">:$alignment,
    DefaultValuedParameter<"int64_t", "1">:$divisibility);
  let builders = [
    TypeBuilderWithInferredContext<(ins "Type":$elementType, "unsigned":$rank), [{
      SmallVector<int64_t> dyn(rank, ShapedType::kDynamic);
      return $_get(elementType.getContext(), dyn, elementType, dyn, 1, 1);
    }]>
  ];
  let extraClassDeclaration = [{
    unsigned getRank() const { return getShape().size(); }
    /// True when the innermost stride is statically one.
    bool hasUnitInnerStride() const {
      return !getStrides().empty() && getStrides().back() == 1;
    }
  }];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
}

#endif // TILE_TYPES_TD
