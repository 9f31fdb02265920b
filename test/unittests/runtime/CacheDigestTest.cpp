//===- CacheDigestTest.cpp - cache keys and checksums on LLVM's SHA256 ----===//
//
// The runtime hashes with llvm::SHA256 since it dropped its own copy: keys
// must be the standard SHA-256 and equal to what the old runtime computed,
// or every cache entry on disk would become unreachable.
//
//===----------------------------------------------------------------------===//

#include "runtime/DiskCache.h"
#include "runtime/Hmac.h"

#include <gtest/gtest.h>

using namespace tile::runtime;

TEST(CacheDigest, Sha256Vectors) {
  // FIPS 180-4 examples: one block, two blocks.
  EXPECT_EQ(sha256Hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256Hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(
      sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  // A payload-sized input crosses many blocks and the 55/56/64-byte padding
  // edges.
  EXPECT_EQ(sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  EXPECT_EQ(sha256Hex(std::string(55, 'x')).size(), 64u);
}

TEST(CacheDigest, KeysAreThoseOfThePreviousRuntime) {
  // Computed by the runtime's own SHA-256 before it moved to llvm::SHA256
  // (commit 20f17f0): entries written then are still found.
  CacheKeyInputs in{"module {}\n", "tile 1.2 abc", "sm_90", "opt=1;x=\xc3\xa9",
                    "ptxas 12.8"};
  EXPECT_EQ(in.key(),
            "26636cb27e709ee5ced8e07b15e860c8130f273bb33f9c5f09d020a6770fe86a");
  EXPECT_EQ(CacheKeyInputs().key(),
            "c0bb316613954ec1edbebff8fdbb53b04bece47e42f7348c9f6fd43b22c9a636");
  EXPECT_EQ(digestHex(hmacSha256("k", "m")),
            "b60090e3052297aeb5a080889ce2fc4bca957e756faeb4df7d31800ca1e771ec");
}

TEST(CacheDigest, TextThatIsNotUtf8IsNotCached) {
  // Metadata is JSON, whose strings are UTF-8: such an entry is compiled
  // every time rather than stored with its bytes replaced.
  const char *base = std::getenv("TILE_TEST_TMPDIR");
  std::string dir = std::string(base && *base ? base : "/tmp") +
                    "/cache-digest-utf8-" + std::to_string(getpid());
  fs::removeTree(dir);
  DiskCache cache(dir);
  CacheKeyInputs in{"ir", "build", "cpu", "opt", "tool"};
  CacheEntry e;
  e.kernelName = "k";
  e.payloadKind = "object";
  e.payload = "\xff\xfe binary is fine";
  e.attrs = {{"note", "caf\xc3\xa9"}};
  EXPECT_TRUE(cache.put(in, e));
  ASSERT_TRUE(cache.get(in));
  EXPECT_EQ(cache.get(in)->attrs, e.attrs);

  CacheKeyInputs other = in;
  other.ir = "ir2";
  CacheEntry bad = e;
  bad.attrs = {{"note", "caf\xe9"}}; // Latin-1
  EXPECT_FALSE(cache.put(other, bad));
  EXPECT_FALSE(cache.get(other));
  CacheKeyInputs badInputs = in;
  badInputs.options = "x=\xe9";
  EXPECT_FALSE(cache.put(badInputs, e));
  EXPECT_FALSE(cache.get(badInputs));
  fs::removeTree(dir);
}
