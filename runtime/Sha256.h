//===- Sha256.h - SHA-256 (FIPS 180-4) --------------------------*- C++ -*-===//
//
// A compact SHA-256 so the runtime needs no crypto library: it names cache
// entries and checks their payloads.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_RUNTIME_SHA256_H
#define TILE_RUNTIME_SHA256_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tile::runtime {

class Sha256 {
public:
  using Digest = std::array<uint8_t, 32>;

  Sha256();
  void update(const void *data, size_t size);
  void update(std::string_view s) { update(s.data(), s.size()); }
  /// Finishes the hash; the object must not be updated afterwards.
  Digest digest();
  std::string hexDigest();

  /// One-shot helpers.
  static Digest hash(std::string_view s);
  static std::string hex(std::string_view s);
  static std::string toHex(const Digest &d);

private:
  void compress(const uint8_t *block);

  std::array<uint32_t, 8> state;
  std::array<uint8_t, 64> buffer;
  uint64_t totalBytes = 0;
  size_t buffered = 0;
};

} // namespace tile::runtime

#endif
