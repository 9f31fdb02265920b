//===- TileGpuAsmOps.h - PTX the GPU lowering writes itself -----*- C++ -*-===//
#ifndef TILE_DIALECT_TILEGPUASMOPS_H
#define TILE_DIALECT_TILEGPUASMOPS_H

#include "dialects/tile/TileDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"

#define GET_OP_CLASSES
#include "dialects/tile/TileGpuAsmOps.h.inc"

#endif
