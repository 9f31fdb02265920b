//===- Sha256.h - SHA-256 (FIPS 180-4) --------------------------*- C++ -*-===//
//
// A compact SHA-256 so the runtime needs no crypto library: it names cache
// entries and checks their payloads (keyed, as HMAC-SHA256, against
// tampering).
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
  /// HMAC-SHA256 (RFC 2104) of `message` under `key`: a digest nobody
  /// without the key can recompute for altered bytes.
  static Digest hmac(std::string_view key, std::string_view message);
  /// Compares without an early exit, so timing tells nothing of `a`.
  static bool equalConstantTime(std::string_view a, std::string_view b);

private:
  void compress(const uint8_t *block);

  std::array<uint32_t, 8> state;
  std::array<uint8_t, 64> buffer;
  uint64_t totalBytes = 0;
  size_t buffered = 0;
};

} // namespace tile::runtime

#endif
