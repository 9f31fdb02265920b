//===- TileGpuDialect.h - the GPU level of tile -----------------*- C++ -*-===//
#ifndef TILE_DIALECT_TILEGPUDIALECT_H
#define TILE_DIALECT_TILEGPUDIALECT_H

#include "dialects/tile/TileDialect.h"

#include "dialects/tilegpu/TileGpuDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/tilegpu/TileGpuTypes.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/tilegpu/TileGpuAttrs.h.inc"

#define GET_OP_CLASSES
#include "dialects/tilegpu/TileGpuOps.h.inc"

#endif // TILE_DIALECT_TILEGPUDIALECT_H
