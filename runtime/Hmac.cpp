//===- Hmac.cpp - the cache's digests, on LLVM's SHA256 -------------------===//

#include "runtime/Hmac.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

#include <algorithm>

using namespace tile::runtime;

std::string tile::runtime::digestHex(const Sha256Digest &digest) {
  return llvm::toHex(digest, /*LowerCase=*/true);
}

std::string tile::runtime::sha256Hex(llvm::StringRef data) {
  return digestHex(llvm::SHA256::hash(llvm::arrayRefFromStringRef(data)));
}

Sha256Digest tile::runtime::hmacSha256(llvm::StringRef key,
                                       llvm::StringRef message) {
  constexpr size_t kBlock = 64;
  std::array<uint8_t, kBlock> block{};
  if (key.size() > kBlock) {
    Sha256Digest d = llvm::SHA256::hash(llvm::arrayRefFromStringRef(key));
    std::copy(d.begin(), d.end(), block.begin());
  } else {
    std::copy(key.begin(), key.end(), block.begin());
  }
  std::array<uint8_t, kBlock> inner, outer;
  for (size_t i = 0; i < kBlock; ++i) {
    inner[i] = block[i] ^ 0x36;
    outer[i] = block[i] ^ 0x5c;
  }
  llvm::SHA256 in;
  in.update(inner);
  in.update(message);
  Sha256Digest innerDigest = in.final();
  llvm::SHA256 out;
  out.update(outer);
  out.update(innerDigest);
  return out.final();
}

bool tile::runtime::equalConstantTime(llvm::StringRef a, llvm::StringRef b) {
  if (a.size() != b.size())
    return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i)
    diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}
