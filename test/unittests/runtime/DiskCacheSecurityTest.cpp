//===- DiskCacheSecurityTest.cpp - the cache against a hostile writer -----===//
//
// Issue 13 items 10, 14 and 15: a rewritten entry (payload and checksum
// both) must not verify without the cache's key; a cache directory, key or
// entry that someone else owns or could write is not used; symbolic links
// are never followed out of the cache; huge files are not read.
//
//===----------------------------------------------------------------------===//

#include "runtime/DirFd.h"
#include "runtime/DiskCache.h"
#include "runtime/Hmac.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace tile::runtime;
namespace json = llvm::json;

namespace {

constexpr uid_t kOtherUid = 12345;

class DiskCacheSecurityTest : public ::testing::Test {
protected:
  void SetUp() override {
    const char *base = std::getenv("TILE_TEST_TMPDIR");
    root = std::string(base && *base ? base : "/tmp") + "/security-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() +
           "-" + std::to_string(getpid());
    fs::removeTree(root);
    ASSERT_TRUE(fs::makeDirs(root));
    dir = root + "/cache";
  }
  void TearDown() override { fs::removeTree(root); }

  static CacheKeyInputs inputs(const std::string &ir = "func @k") {
    return {ir, "tile 0.1.0 abc123", "cpu", "opt_level=3", "x86_64"};
  }
  static CacheEntry entry(const std::string &payload) {
    CacheEntry e;
    e.kernelName = "vadd";
    e.signature = {"array:1", "i32"};
    e.payloadKind = "object";
    e.payload = payload;
    e.stages = {{"tile", "module {}"}};
    return e;
  }
  std::string entryDir(const CacheKeyInputs &in) const {
    return dir + "/" + in.key();
  }
  static std::string slurp(const std::string &p) {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }
  static void spit(const std::string &p, const std::string &data) {
    std::ofstream f(p, std::ios::binary | std::ios::trunc);
    f << data;
  }
  static bool exists(const std::string &p) {
    struct stat st;
    return ::lstat(p.c_str(), &st) == 0;
  }
  static mode_t modeOf(const std::string &p) {
    struct stat st;
    return ::lstat(p.c_str(), &st) == 0 ? st.st_mode & 07777 : 0;
  }
  /// What an attacker without the key does: new payload bytes, and the
  /// size and SHA-256 that describe them written into meta.json.
  void forge(const CacheKeyInputs &in, const std::string &payload) {
    std::string meta = entryDir(in) + "/meta.json";
    editMeta(meta, [&](json::Object &j) {
      j["payload_size"] = uint64_t(payload.size());
      j["payload_sha256"] = sha256Hex(payload);
    });
    spit(entryDir(in) + "/payload.bin", payload);
  }
  /// Rewrites the JSON object in `file` through `change`.
  static void editMeta(const std::string &file,
                       llvm::function_ref<void(json::Object &)> change) {
    auto value = json::parse(slurp(file));
    ASSERT_TRUE(bool(value)) << llvm::toString(value.takeError());
    change(*value->getAsObject());
    std::string text;
    llvm::raw_string_ostream os(text);
    os << *value;
    spit(file, text);
  }

  std::string root, dir;
};

} // namespace

TEST(HmacSha256, Rfc4231Vectors) {
  EXPECT_EQ(digestHex(hmacSha256(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(digestHex(hmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // A key longer than the block is hashed first (test case 6).
  EXPECT_EQ(digestHex(hmacSha256(
                std::string(131, '\xaa'),
                "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  EXPECT_TRUE(equalConstantTime("abc", "abc"));
  EXPECT_FALSE(equalConstantTime("abc", "abd"));
  EXPECT_FALSE(equalConstantTime("abc", "ab"));
}

TEST_F(DiskCacheSecurityTest, RewrittenPayloadAndChecksumDoNotVerify) {
  DiskCache cache(dir);
  auto in = inputs();
  ASSERT_TRUE(cache.put(in, entry("the real object code")));
  ASSERT_TRUE(cache.get(in));
  forge(in, "the real object codE"); // one bit, same length, fresh SHA-256
  EXPECT_FALSE(cache.get(in));
  EXPECT_EQ(cache.stats().rejected, 1);
  EXPECT_FALSE(exists(entryDir(in))) << "the forged entry was kept";
  ASSERT_TRUE(cache.put(in, entry("the real object code")));
  auto hit = cache.get(in);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->payload, "the real object code");
}

TEST_F(DiskCacheSecurityTest, EntryFromAnotherCacheDoesNotVerify) {
  // Same inputs, same format, another cache's key: a planted copy fails.
  DiskCache other(root + "/other");
  auto in = inputs();
  ASSERT_TRUE(other.put(in, entry("planted")));
  DiskCache cache(dir);
  ASSERT_TRUE(cache.put(inputs("unrelated"), entry("x"))); // creates the key
  ASSERT_EQ(
      ::rename((root + "/other/" + in.key()).c_str(), entryDir(in).c_str()), 0);
  EXPECT_FALSE(cache.get(in));
  EXPECT_EQ(cache.stats().rejected, 1);
}

TEST_F(DiskCacheSecurityTest, EverythingIsCreatedPrivate) {
  ::umask(0); // even so: the modes are the cache's own
  DiskCache cache(dir + "/nested");
  auto in = inputs();
  ASSERT_TRUE(cache.put(in, entry("x")));
  ::umask(022);
  std::string d = dir + "/nested";
  EXPECT_EQ(modeOf(dir), 0700u);
  EXPECT_EQ(modeOf(d), 0700u);
  EXPECT_EQ(modeOf(d + "/cache.key"), 0600u);
  EXPECT_EQ(slurp(d + "/cache.key").size(), 32u);
  EXPECT_EQ(modeOf(d + "/" + in.key()), 0700u);
  for (const char *f : {"meta.json", "meta.hmac", "payload.bin", "stage.tile"})
    EXPECT_EQ(modeOf(d + "/" + in.key() + "/" + f), 0600u) << f;
  EXPECT_EQ(modeOf(d + "/stats.json"), 0600u);
  EXPECT_EQ(modeOf(d + "/.stats.lock"), 0600u);
}

TEST_F(DiskCacheSecurityTest, DirectoryWritableByOthersIsNotUsed) {
  DiskCache cache(dir);
  auto in = inputs();
  ASSERT_TRUE(cache.put(in, entry("x")));
  for (mode_t mode : {0777, 0770, 0702}) {
    ASSERT_EQ(::chmod(dir.c_str(), mode), 0);
    EXPECT_FALSE(cache.get(in)) << std::oct << mode;
    EXPECT_FALSE(cache.put(inputs("new"), entry("y"))) << std::oct << mode;
  }
  ASSERT_EQ(::chmod(dir.c_str(), 0755), 0); // readable is fine
  EXPECT_TRUE(cache.get(in));
}

TEST_F(DiskCacheSecurityTest, DirectoryOfAnotherUserIsNotUsed) {
  if (::geteuid() != 0)
    GTEST_SKIP() << "chown to another uid needs root";
  DiskCache cache(dir);
  auto in = inputs();
  ASSERT_TRUE(cache.put(in, entry("x")));
  ASSERT_EQ(::chown(dir.c_str(), kOtherUid, kOtherUid), 0);
  EXPECT_FALSE(cache.get(in));
  EXPECT_FALSE(cache.put(inputs("new"), entry("y")));
  ASSERT_EQ(::chown(dir.c_str(), 0, 0), 0);
  EXPECT_TRUE(cache.get(in));
}

TEST_F(DiskCacheSecurityTest, EntryOfAnotherUserOrWritableIsRejected) {
  DiskCache cache(dir);
  auto in = inputs();
  ASSERT_TRUE(cache.put(in, entry("x")));
  ASSERT_EQ(::chmod((entryDir(in) + "/payload.bin").c_str(), 0666), 0);
  EXPECT_FALSE(cache.get(in));
  ASSERT_TRUE(cache.put(in, entry("x")));
  ASSERT_EQ(::chmod(entryDir(in).c_str(), 0777), 0);
  EXPECT_FALSE(cache.get(in));
  if (::geteuid() == 0) {
    ASSERT_TRUE(cache.put(in, entry("x")));
    ASSERT_EQ(::chown((entryDir(in) + "/meta.json").c_str(), kOtherUid, 0), 0);
    EXPECT_FALSE(cache.get(in));
  }
  EXPECT_EQ(cache.stats().rejected, ::geteuid() == 0 ? 3 : 2);
}

TEST_F(DiskCacheSecurityTest, KeyFileMustBePrivate) {
  DiskCache cache(dir);
  auto in = inputs();
  ASSERT_TRUE(cache.put(in, entry("x")));
  std::string key = dir + "/cache.key";
  ASSERT_EQ(::chmod(key.c_str(), 0644), 0); // others could forge MACs
  EXPECT_FALSE(cache.get(in));
  EXPECT_FALSE(cache.put(inputs("new"), entry("y")));
  ASSERT_EQ(::chmod(key.c_str(), 0600), 0);
  EXPECT_TRUE(cache.get(in));
  // A key file that is a link to someone's bytes is no key.
  std::string secret = slurp(key);
  spit(root + "/elsewhere.key", secret);
  ::chmod((root + "/elsewhere.key").c_str(), 0600);
  ASSERT_EQ(::unlink(key.c_str()), 0);
  ASSERT_EQ(::symlink((root + "/elsewhere.key").c_str(), key.c_str()), 0);
  EXPECT_FALSE(cache.get(in));
}

TEST_F(DiskCacheSecurityTest, SymbolicLinksAreNotFollowed) {
  DiskCache cache(dir);
  auto in = inputs();
  ASSERT_TRUE(cache.put(in, entry("x")));
  // A payload that is a link to an identical file elsewhere.
  std::string outside = root + "/payload-outside";
  spit(outside, slurp(entryDir(in) + "/payload.bin"));
  ::chmod(outside.c_str(), 0600);
  ASSERT_EQ(::unlink((entryDir(in) + "/payload.bin").c_str()), 0);
  ASSERT_EQ(::symlink(outside.c_str(), (entryDir(in) + "/payload.bin").c_str()),
            0);
  EXPECT_FALSE(cache.get(in));
  EXPECT_TRUE(exists(outside)) << "removing the entry followed the link";

  // A lock file that is a link: its target is neither created nor locked.
  std::string target = root + "/created-by-the-cache";
  ASSERT_EQ(::unlink((dir + "/.stats.lock").c_str()), 0);
  ASSERT_EQ(::symlink(target.c_str(), (dir + "/.stats.lock").c_str()), 0);
  cache.get(in);
  cache.put(in, entry("x"));
  EXPECT_FALSE(exists(target));
  EXPECT_EQ(modeOf(dir + "/.stats.lock"), 0600u); // replaced by a real one
  EXPECT_GE(cache.stats().misses, 2);             // and the stats still kept

  // An entry directory that is a link to a sound entry elsewhere.
  DiskCache other(root + "/other");
  ASSERT_TRUE(other.put(inputs("linked"), entry("x")));
  ASSERT_EQ(::symlink((root + "/other/" + inputs("linked").key()).c_str(),
                      entryDir(inputs("linked")).c_str()),
            0);
  EXPECT_FALSE(cache.get(inputs("linked")));
  // clear removes the links, not what they point at.
  cache.clear();
  EXPECT_FALSE(exists(entryDir(inputs("linked"))));
  EXPECT_TRUE(exists(root + "/other/" + inputs("linked").key() + "/meta.json"));
}

TEST_F(DiskCacheSecurityTest, HugePayloadIsNotRead) {
  DiskCache cache(dir);
  auto in = inputs();
  ASSERT_TRUE(cache.put(in, entry("x")));
  // A 3 GiB sparse payload, with metadata that claims it.
  uint64_t huge = uint64_t(3) << 30;
  std::string payload = entryDir(in) + "/payload.bin";
  ASSERT_EQ(::truncate(payload.c_str(), off_t(huge)), 0);
  std::string meta = entryDir(in) + "/meta.json";
  editMeta(meta, [&](json::Object &j) { j["payload_size"] = huge; });
  auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(cache.get(in));
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_LT(seconds, 2.0) << "the payload was read before the metadata check";

  // Honest metadata, and a payload grown to 3 GiB: its size is checked
  // before a byte is read.
  ASSERT_TRUE(cache.put(in, entry("x")));
  ASSERT_EQ(::truncate(payload.c_str(), off_t(huge)), 0);
  start = std::chrono::steady_clock::now();
  EXPECT_FALSE(cache.get(in));
  seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  EXPECT_LT(seconds, 2.0);
}

TEST_F(DiskCacheSecurityTest, FifoInAnEntryDoesNotHang) {
  DiskCache cache(dir);
  auto in = inputs();
  ASSERT_TRUE(cache.put(in, entry("x")));
  std::string payload = entryDir(in) + "/payload.bin";
  ASSERT_EQ(::unlink(payload.c_str()), 0);
  ASSERT_EQ(::mkfifo(payload.c_str(), 0600), 0);
  EXPECT_FALSE(cache.get(in)); // returns: a FIFO is not a regular file
}

TEST_F(DiskCacheSecurityTest, FallbackWithoutHomeIsPrivateAndUnpredictable) {
  const char *saved = std::getenv("HOME");
  std::string home = saved ? saved : "";
  ::unsetenv("TILE_CACHE_DIR");
  ::setenv("HOME", (root + "/no-such-home").c_str(), 1);
  std::string a = DiskCache::fromEnvironment().directory();
  if (saved)
    ::setenv("HOME", home.c_str(), 1);
  ASSERT_FALSE(a.empty());
  EXPECT_NE(a, "/tmp/tile-cache-" + std::to_string(::getuid()));
  struct stat st;
  ASSERT_EQ(::lstat(a.c_str(), &st), 0);
  EXPECT_TRUE(S_ISDIR(st.st_mode));
  EXPECT_EQ(st.st_uid, ::geteuid());
  EXPECT_EQ(st.st_mode & 077, 0u);
  DiskCache cache(a);
  EXPECT_TRUE(cache.put(inputs(), entry("x")));
  EXPECT_TRUE(cache.get(inputs()));
}
