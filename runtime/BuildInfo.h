//===- BuildInfo.h - who compiled this binary -------------------*- C++ -*-===//
//
// The compiler's identity is part of every cache key: a cubin from another
// compiler build must never be served, even from a dirty tree at the same
// commit.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_RUNTIME_BUILDINFO_H
#define TILE_RUNTIME_BUILDINFO_H

#include <string>

namespace tile::runtime {

/// "tile <version> <git hash>[-dirty] <binary>:<size>:<mtime ns>", where
/// <binary> is the shared object or executable holding the runtime, so any
/// rebuild changes it. Computed once.
const std::string &buildIdentity();

} // namespace tile::runtime

#endif
