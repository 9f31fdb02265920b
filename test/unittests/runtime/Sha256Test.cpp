//===- Sha256Test.cpp - FIPS 180-4 test vectors ---------------------------===//

#include "runtime/Sha256.h"

#include <gtest/gtest.h>

using tile::runtime::Sha256;

TEST(Sha256, Empty) {
  EXPECT_EQ(Sha256::hex(""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Sha256, Abc) {
  EXPECT_EQ(Sha256::hex("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Sha256, TwoBlocks) {
  EXPECT_EQ(
      Sha256::hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256::hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijkl"
                        "mnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopq"
                        "rstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
}

TEST(Sha256, MillionA) {
  Sha256 h;
  std::string chunk(1000, 'a');
  for (int i = 0; i < 1000; ++i)
    h.update(chunk);
  EXPECT_EQ(h.hexDigest(),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Every split of the input into two updates gives the same digest, which
// covers each buffering path (partial block, exact block, padding overflow).
TEST(Sha256, SplitUpdatesAgree) {
  std::string text;
  for (int i = 0; i < 200; ++i)
    text += char('a' + i % 26);
  for (size_t len : {0, 1, 55, 56, 63, 64, 65, 119, 120, 128, 200}) {
    std::string s = text.substr(0, len);
    std::string whole = Sha256::hex(s);
    for (size_t cut = 0; cut <= len; ++cut) {
      Sha256 h;
      h.update(s.substr(0, cut));
      h.update(s.substr(cut));
      ASSERT_EQ(h.hexDigest(), whole) << "len " << len << " cut " << cut;
    }
  }
}
