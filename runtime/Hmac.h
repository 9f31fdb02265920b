//===- Hmac.h - the cache's digests, on LLVM's SHA256 -----------*- C++ -*-===//
//
// SHA-256 names cache entries and checks their files; HMAC-SHA256 (RFC 2104)
// under the per-cache key guards their metadata against tampering. The hash
// is llvm::SHA256; LLVM has no HMAC, so its few lines live here.
//
// llvm::SHA256 counts the message length in 32 bits: it hashes inputs below
// 4 GiB correctly (FIPS 180-4), and the cache never hashes a larger one
// (DiskCache's blob limit).
//
//===----------------------------------------------------------------------===//
#ifndef TILE_RUNTIME_HMAC_H
#define TILE_RUNTIME_HMAC_H

#include "llvm/ADT/StringRef.h"

#include <array>
#include <cstdint>
#include <string>

namespace tile::runtime {

using Sha256Digest = std::array<uint8_t, 32>;

/// Lower-case hex SHA-256 of `data`.
std::string sha256Hex(llvm::StringRef data);
/// Lower-case hex of a digest.
std::string digestHex(const Sha256Digest &digest);
/// HMAC-SHA256 of `message` under `key`: a digest nobody without the key
/// can recompute for altered bytes.
Sha256Digest hmacSha256(llvm::StringRef key, llvm::StringRef message);
/// Compares without an early exit, so timing tells nothing of `a`.
bool equalConstantTime(llvm::StringRef a, llvm::StringRef b);

} // namespace tile::runtime

#endif
