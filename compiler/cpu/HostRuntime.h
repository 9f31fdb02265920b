//===- HostRuntime.h - functions JIT-compiled kernels call ------*- C++ -*-===//
#ifndef TILE_COMPILER_CPU_HOSTRUNTIME_H
#define TILE_COMPILER_CPU_HOSTRUNTIME_H

#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"

namespace mlir::tile {

/// The runtime the host lowering calls into: __tile_print_* (tile.print),
/// __tile_assert_fail (tile.assert), and memrefCopy (memref.copy between
/// strided buffers).
llvm::orc::SymbolMap getHostRuntimeSymbols(llvm::orc::MangleAndInterner mangle);

} // namespace mlir::tile

#endif // TILE_COMPILER_CPU_HOSTRUNTIME_H
