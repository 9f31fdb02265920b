//===- TileDialect.td - the tile dialect ---------------------*- tablegen -*-===//
#ifndef TILE_DIALECT_TD
#define TILE_DIALECT_TD

include "mlir/IR/OpBase.td"

def Tile_Dialect : Dialect {
  let name = "tile";
  let cppNamespace = "::mlir::tile";
  let summary = "Tile-level GPU kernel programming";
  let description = [{
    The `tile` dialect is what `@tile.kernel` Python functions are traced into.
    Tiles are builtin ranked tensors with power-of-two static shapes, so
    elementwise arithmetic is upstream `arith`/`math` on tensors and control flow
    is `scf`. Global memory is reached through `!tile.array` values, which carry
    an element type, a rank, and whatever the specialization proved about shape,
    strides and alignment.
  }];
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
  let hasRegionArgAttrVerify = 1;
  let extraClassDeclaration = [{
    void registerTypes();
    /// The argument attribute (a unit attribute) on an `!tile.array` kernel
    /// argument that TMA can describe: its base is 16-byte aligned, its
    /// inner stride 1, every other stride a positive multiple of 16 bytes
    /// below 2^40, every extent 1 to 2^32, its rank at most 5 (the launch's
    /// specialization key proves it; docs/internals.md section 1).
    static constexpr ::llvm::StringLiteral getTmaOkAttrName() {
      return ::llvm::StringLiteral("tile.tma_ok");
    }
  }];
  // LLVM: the tile.ptx ops' pointers are !llvm.ptr (their parsers make one).
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

class Tile_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tile_Dialect, mnemonic, traits>;

#endif // TILE_DIALECT_TD
