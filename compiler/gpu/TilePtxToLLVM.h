//===- TilePtxToLLVM.h - tile.ptx.* ops to llvm.inline_asm ------*- C++ -*-===//
#ifndef TILE_COMPILER_GPU_TILEPTXTOLLVM_H
#define TILE_COMPILER_GPU_TILEPTXTOLLVM_H

namespace mlir {
class DialectRegistry;
class LLVMTypeConverter;
class RewritePatternSet;
} // namespace mlir

namespace mlir::tile {

/// The patterns that lower tile.ptx.ld_global/st_global/atom_global to
/// llvm.inline_asm.
void populateTilePtxToLLVMPatterns(LLVMTypeConverter &converter,
                                   RewritePatternSet &patterns);

/// Makes the tile dialect a ConvertToLLVMPatternInterface provider of those
/// patterns, so convert-gpu-to-nvvm (and convert-to-llvm) lower the ops.
void registerConvertTilePtxToLLVMInterface(DialectRegistry &registry);

} // namespace mlir::tile

#endif
