//===- TileGpuDialect.td - the GPU level of tile -------------*- tablegen -*-===//
#ifndef TILEGPU_DIALECT_TD
#define TILEGPU_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def TileGpu_Dialect : Dialect {
  let name = "tilegpu";
  let cppNamespace = "::mlir::tilegpu";
  let summary = "The asynchronous GPU level between tile and nvvm";
  let description = [{
    What the GPU middle level of docs/architecture.md makes explicit before
    the conversion to per-thread code: shared-memory buffers with their
    layout (swizzle or padded rows) and ring slots, asynchronous copies and
    the tokens that order them, mbarriers and tensor maps for TMA, and mma
    forms that read their operands from shared buffers. The pipelining pass
    (tile-pipeline-mma) writes these ops, tile-allocate-shared gives each
    buffer its offset, and convert-tile-to-gpu lowers them to nvvm.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerTypes();
    void registerAttributes();
  }];
  let dependentDialects = ["::mlir::tile::TileDialect"];
}

class TileGpu_Op<string mnemonic, list<Trait> traits = []>
    : Op<TileGpu_Dialect, mnemonic, traits>;
class TileGpu_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<TileGpu_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

#endif // TILEGPU_DIALECT_TD
