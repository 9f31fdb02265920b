//===- DiskCacheTest.cpp - the on-disk kernel cache -----------------------===//

#include "runtime/DiskCache.h"
#include "runtime/DirFd.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <fstream>
#include <functional>
#include <set>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace tile::runtime;
namespace json = llvm::json;

namespace {

class DiskCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    const char *base = std::getenv("TILE_TEST_TMPDIR");
    std::string root = base && *base ? base : "/tmp";
    fs::makeDirs(root);
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir = root + "/cache-" + info->name() + "-" + std::to_string(getpid());
    fs::removeTree(dir);
  }
  void TearDown() override { fs::removeTree(dir); }

  static CacheKeyInputs inputs(const std::string &ir = "func @k") {
    return {ir, "tile 0.1.0 abc123", "sm_90", "num_warps=4;opt_level=3",
            "ptxas 13.0"};
  }
  static CacheEntry entry(const std::string &payload) {
    CacheEntry e;
    e.kernelName = "vadd";
    e.numWarps = 4;
    e.sharedMem = 1024;
    e.signature = {"array:1", "array:1", "i32"};
    e.payloadKind = "cubin";
    e.payload = payload;
    e.stages = {{"tile", "module {}"}, {"ptx", ".version 8.0"}};
    e.attrs = {{"abi", "v1"}};
    return e;
  }
  std::string path(const CacheKeyInputs &in, const std::string &file) {
    return dir + "/" + in.key() + "/" + file;
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

  /// What the compile entry does: look up, else "compile" and store.
  std::string getOrCompile(DiskCache &cache, const CacheKeyInputs &in,
                           const std::string &fresh) {
    if (auto hit = cache.get(in))
      return hit->payload;
    ++compiles;
    cache.put(in, entry(fresh));
    return fresh;
  }

  std::string dir;
  int compiles = 0;
};

} // namespace

TEST_F(DiskCacheTest, RoundTrip) {
  DiskCache cache(dir);
  auto in = inputs();
  EXPECT_FALSE(cache.get(in));
  std::string payload("\0\x7f" "ELF binary\xff", 13);
  ASSERT_TRUE(cache.put(in, entry(payload)));
  auto hit = cache.get(in);
  ASSERT_TRUE(hit);
  CacheEntry want = entry(payload);
  EXPECT_EQ(hit->payload, payload);
  EXPECT_EQ(hit->kernelName, want.kernelName);
  EXPECT_EQ(hit->numWarps, 4);
  EXPECT_EQ(hit->sharedMem, 1024);
  EXPECT_EQ(hit->signature, want.signature);
  EXPECT_EQ(hit->payloadKind, "cubin");
  EXPECT_EQ(hit->stages, want.stages);
  EXPECT_EQ(hit->attrs, want.attrs);

  CacheStats s = DiskCache(dir).stats(); // persisted, seen by a new object
  EXPECT_EQ(s.hits, 1);
  EXPECT_EQ(s.misses, 1);
  EXPECT_EQ(s.writes, 1);
  EXPECT_EQ(s.evictions, 0);
  EXPECT_EQ(s.rejected, 0);
}

TEST_F(DiskCacheTest, MetadataIsReadableJson) {
  DiskCache cache(dir);
  auto in = inputs();
  ASSERT_TRUE(cache.put(in, entry("payload")));
  std::string text = slurp(path(in, "meta.json"));
  auto value = json::parse(text);
  ASSERT_TRUE(bool(value)) << llvm::toString(value.takeError());
  const json::Object *meta = value->getAsObject();
  ASSERT_TRUE(meta);
  EXPECT_EQ(meta->getString("key"), in.key());
  EXPECT_EQ(meta->getString("kernel_name"), "vadd");
  EXPECT_EQ(meta->getInteger("payload_size"), 7);
  EXPECT_EQ(meta->getObject("key_inputs")->getString("target"), "sm_90");
  // Deterministic text for people and `python -m tile.cache`: sorted keys,
  // two-space indentation.
  EXPECT_EQ(text.rfind("{\n  \"attrs\": {\n    \"abi\": \"v1\"\n  },\n", 0), 0u)
      << text;
  EXPECT_LT(text.find("\"created_ns\""), text.find("\"format\""));
  EXPECT_EQ(slurp(path(in, "payload.bin")), "payload");
  EXPECT_EQ(slurp(path(in, "stage.ptx")), ".version 8.0");
}

TEST_F(DiskCacheTest, EveryKeyInputChangesTheKey) {
  CacheKeyInputs base = inputs();
  std::vector<CacheKeyInputs> variants;
  for (int field = 0; field < 5; ++field) {
    CacheKeyInputs v = base;
    std::string *f[] = {&v.ir, &v.buildId, &v.target, &v.options,
                        &v.toolVersion};
    *f[field] += " ";
    variants.push_back(v);
  }
  // Moving bytes from one field to the next must change the key too.
  CacheKeyInputs shifted = base;
  shifted.ir += shifted.buildId.substr(0, 1);
  shifted.buildId = shifted.buildId.substr(1);
  variants.push_back(shifted);
  std::set<std::string> keys{base.key()};
  for (const auto &v : variants)
    keys.insert(v.key());
  EXPECT_EQ(keys.size(), variants.size() + 1);
  EXPECT_EQ(base.key(), inputs().key()); // and it is deterministic
  EXPECT_EQ(base.key().size(), 64u);
}

TEST_F(DiskCacheTest, DifferentInputsDoNotHit) {
  DiskCache cache(dir);
  ASSERT_TRUE(cache.put(inputs("a"), entry("A")));
  EXPECT_FALSE(cache.get(inputs("b")));
  CacheKeyInputs other = inputs("a");
  other.target = "sm_80";
  EXPECT_FALSE(cache.get(other));
}

TEST_F(DiskCacheTest, CorruptPayloadIsRecompiled) {
  DiskCache cache(dir);
  auto in = inputs();
  EXPECT_EQ(getOrCompile(cache, in, "good-binary"), "good-binary");
  std::string p = path(in, "payload.bin");
  spit(p, "gooD-binary"); // same size, one byte flipped
  EXPECT_EQ(getOrCompile(cache, in, "fresh-binary"), "fresh-binary");
  EXPECT_EQ(compiles, 2);
  EXPECT_EQ(cache.stats().rejected, 1);
  // The broken entry was replaced: the next lookup hits the fresh one.
  EXPECT_EQ(getOrCompile(cache, in, "unused"), "fresh-binary");
  EXPECT_EQ(compiles, 2);
}

TEST_F(DiskCacheTest, RejectedEntryIsReplaced) {
  // An entry that verifies but its backend cannot use (an object the JIT
  // will not load): reject() drops it, and the next put stores a fresh one.
  DiskCache cache(dir);
  auto in = inputs();
  ASSERT_TRUE(cache.put(in, entry("unloadable")));
  ASSERT_TRUE(cache.get(in));
  cache.reject(in);
  EXPECT_EQ(cache.stats().rejected, 1);
  EXPECT_FALSE(cache.get(in));
  ASSERT_TRUE(cache.put(in, entry("loadable")));
  auto hit = cache.get(in);
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->payload, "loadable");
  EXPECT_EQ(cache.stats().writes, 2);
  cache.reject(inputs("absent")); // nothing there: only counted
  EXPECT_EQ(cache.stats().rejected, 2);
}

TEST_F(DiskCacheTest, TruncatedFilesAreMisses) {
  DiskCache cache(dir);
  auto in = inputs();
  for (const char *file : {"payload.bin", "meta.json", "stage.ptx"}) {
    cache.put(in, entry("0123456789"));
    ASSERT_TRUE(cache.get(in)) << file;
    std::string p = path(in, file);
    ASSERT_EQ(::truncate(p.c_str(), 3), 0);
    EXPECT_FALSE(cache.get(in)) << file;
    ::unlink(p.c_str()); // missing is a miss too
    EXPECT_FALSE(cache.get(in)) << file;
    EXPECT_EQ(getOrCompile(cache, in, "0123456789"), "0123456789");
    EXPECT_TRUE(cache.get(in)) << file;
  }
  // Per file: the truncated entry is rejected and removed; the lookups
  // after that are plain misses.
  EXPECT_EQ(cache.stats().rejected, 3);
}

TEST_F(DiskCacheTest, GarbageMetadataIsAMiss) {
  DiskCache cache(dir);
  auto in = inputs();
  cache.put(in, entry("x"));
  for (const char *garbage : {"", "{", "null", "[]", "{\"format\": 1}",
                              "\x00\x01\x02"}) {
    spit(path(in, "meta.json"), garbage);
    EXPECT_FALSE(cache.get(in)) << garbage;
  }
}

TEST_F(DiskCacheTest, MismatchedMetadataIsAMiss) {
  DiskCache cache(dir);
  auto in = inputs();
  ASSERT_TRUE(cache.put(in, entry("payload")));
  std::string metaPath = path(in, "meta.json");

  // A rejected entry is removed: each edit starts from a fresh one.
  auto edit = [&](const std::function<void(json::Object &)> &change) {
    ASSERT_TRUE(cache.put(in, entry("payload")));
    auto meta = json::parse(slurp(metaPath));
    ASSERT_TRUE(bool(meta)) << llvm::toString(meta.takeError());
    change(*meta->getAsObject());
    std::string text;
    llvm::raw_string_ostream os(text);
    os << *meta;
    spit(metaPath, text);
  };
  // Valid JSON with correct checksums, but recorded for other inputs.
  edit([](json::Object &m) {
    (*m.getObject("key_inputs"))["build_id"] = "tile 0.0.9";
  });
  EXPECT_FALSE(cache.get(in));
  edit([](json::Object &m) {
    (*m.getObject("key_inputs"))["ir_sha256"] = std::string(64, '0');
  });
  EXPECT_FALSE(cache.get(in));
  edit([](json::Object &m) { m["key"] = std::string(64, 'a'); });
  EXPECT_FALSE(cache.get(in));
  edit([](json::Object &m) { m["format"] = 1; });
  EXPECT_FALSE(cache.get(in));
  edit([](json::Object &m) { m["payload_size"] = 6; });
  EXPECT_FALSE(cache.get(in));
  // A stage name must not escape the entry directory.
  edit([](json::Object &m) {
    m["stages"] = json::Array{json::Object{
        {"name", "../../etc/passwd"}, {"size", 0}, {"sha256", ""}}};
  });
  EXPECT_FALSE(cache.get(in));
  ASSERT_TRUE(cache.put(in, entry("payload")));
  EXPECT_TRUE(cache.get(in));
  EXPECT_EQ(cache.stats().rejected, 6);
}

// An entry copied under another key (say, by hand) is never served for it.
TEST_F(DiskCacheTest, EntryUnderWrongKeyIsAMiss) {
  DiskCache cache(dir);
  auto a = inputs("a"), b = inputs("b");
  ASSERT_TRUE(cache.put(a, entry("A")));
  ASSERT_EQ(::rename((dir + "/" + a.key()).c_str(),
                     (dir + "/" + b.key()).c_str()),
            0);
  EXPECT_FALSE(cache.get(b));
}

TEST_F(DiskCacheTest, StagesWithUnsafeNamesAreDropped) {
  DiskCache cache(dir);
  CacheEntry e = entry("x");
  e.stages.emplace_back("../escape", "no");
  e.stages.emplace_back("has.dot", "no");
  ASSERT_TRUE(cache.put(inputs(), e));
  auto hit = cache.get(inputs());
  ASSERT_TRUE(hit);
  EXPECT_EQ(hit->stages, entry("x").stages);
}

TEST_F(DiskCacheTest, EvictsLeastRecentlyUsed) {
  auto in = [](const char *name) { return inputs(name); };
  DiskCache probe(dir);
  probe.put(in("size-probe"), entry(std::string(10000, 'p')));
  uint64_t each = probe.entries().at(0).bytes;
  probe.clear();

  // Room for three entries, not four.
  DiskCache cache(dir, 3 * each + each / 2);
  for (const char *name : {"A", "B", "C"})
    ASSERT_TRUE(cache.put(in(name), entry(std::string(10000, name[0]))));
  ASSERT_TRUE(cache.get(in("A"))); // A is now the most recently used
  ASSERT_TRUE(cache.put(in("D"), entry(std::string(10000, 'D'))));
  EXPECT_TRUE(cache.get(in("A")));
  EXPECT_FALSE(cache.get(in("B")));
  EXPECT_TRUE(cache.get(in("C")));
  EXPECT_TRUE(cache.get(in("D")));
  EXPECT_EQ(cache.stats().evictions, 1);

  // Order of use so far: A, C, D (B gone). Touch A again; E pushes out C.
  ASSERT_TRUE(cache.get(in("A")));
  ASSERT_TRUE(cache.put(in("E"), entry(std::string(10000, 'E'))));
  EXPECT_FALSE(cache.get(in("C")));
  auto left = cache.entries();
  ASSERT_EQ(left.size(), 3u);
  EXPECT_EQ(cache.stats().evictions, 2);

  cache.evictTo(0);
  EXPECT_TRUE(cache.entries().empty());
  EXPECT_EQ(cache.stats().evictions, 5);
}

TEST_F(DiskCacheTest, StaleTemporariesAreSwept) {
  DiskCache cache(dir, 1);
  fs::makeDirs(dir + "/.tmp-dead-writer");
  fs::makeDirs(dir + "/.trash-dead-evictor");
  struct timeval old[2] = {{1000, 0}, {1000, 0}};
  ::utimes((dir + "/.tmp-dead-writer").c_str(), old);
  fs::makeDirs(dir + "/.tmp-live-writer");
  cache.put(inputs(), entry("x")); // over the 1-byte cap: evicts and sweeps
  struct stat st;
  EXPECT_NE(::stat((dir + "/.tmp-dead-writer").c_str(), &st), 0);
  EXPECT_NE(::stat((dir + "/.trash-dead-evictor").c_str(), &st), 0);
  EXPECT_EQ(::stat((dir + "/.tmp-live-writer").c_str(), &st), 0);
}

TEST_F(DiskCacheTest, Clear) {
  DiskCache cache(dir);
  cache.put(inputs("a"), entry("A"));
  cache.put(inputs("b"), entry("B"));
  cache.get(inputs("a"));
  cache.clear();
  EXPECT_TRUE(cache.entries().empty());
  EXPECT_EQ(cache.stats().hits, 0);
  EXPECT_FALSE(cache.get(inputs("a")));
}

TEST_F(DiskCacheTest, Environment) {
  ::setenv("TILE_CACHE_DIR", dir.c_str(), 1);
  ::setenv("TILE_CACHE_SIZE", "64M", 1);
  ::setenv("TILE_ALWAYS_COMPILE", "1", 1);
  DiskCache cache = DiskCache::fromEnvironment();
  EXPECT_EQ(cache.directory(), dir);
  EXPECT_EQ(cache.maxBytes(), uint64_t(64) << 20);
  EXPECT_FALSE(cache.lookupsEnabled());
  cache.put(inputs(), entry("x"));
  EXPECT_FALSE(cache.get(inputs())); // bypassed, though the entry exists
  EXPECT_TRUE(DiskCache(dir).get(inputs()));

  ::unsetenv("TILE_ALWAYS_COMPILE");
  ::setenv("TILE_CACHE_SIZE", "bogus", 1);
  DiskCache defaults = DiskCache::fromEnvironment();
  EXPECT_TRUE(defaults.lookupsEnabled());
  EXPECT_EQ(defaults.maxBytes(), DiskCache::kDefaultMaxBytes);
  ::unsetenv("TILE_CACHE_DIR");
  ::unsetenv("TILE_CACHE_SIZE");
  EXPECT_NE(DiskCache::fromEnvironment().directory().find(".cache/tile"),
            std::string::npos);
}

TEST_F(DiskCacheTest, ParseSize) {
  EXPECT_EQ(DiskCache::parseSize("1024"), 1024u);
  EXPECT_EQ(DiskCache::parseSize("2k"), 2048u);
  EXPECT_EQ(DiskCache::parseSize("3MiB"), uint64_t(3) << 20);
  EXPECT_EQ(DiskCache::parseSize("1G"), uint64_t(1) << 30);
  EXPECT_EQ(DiskCache::parseSize("0"), 0u);
  EXPECT_FALSE(DiskCache::parseSize(""));
  EXPECT_FALSE(DiskCache::parseSize("G"));
  EXPECT_FALSE(DiskCache::parseSize("1X"));
  EXPECT_FALSE(DiskCache::parseSize("-1"));
  EXPECT_FALSE(DiskCache::parseSize("99999999999999999999"));
  EXPECT_FALSE(DiskCache::parseSize("99999999999T"));
}

TEST_F(DiskCacheTest, UnwritableDirectoryIsJustAMiss) {
  DiskCache cache("/proc/tile-cache-cannot-exist");
  EXPECT_FALSE(cache.put(inputs(), entry("x")));
  EXPECT_FALSE(cache.get(inputs()));
}

// Many processes hammer one key with gets, puts and evictions: every read is
// a miss or exactly the payload, and every lookup is counted.
TEST_F(DiskCacheTest, ConcurrentProcessesNeverCorrupt) {
  constexpr int kProcs = 8, kIters = 150;
  std::string payload;
  for (int i = 0; i < 200000; ++i)
    payload += char('a' + (i * 7) % 26);
  auto in = inputs("shared-kernel");
  std::vector<pid_t> children;
  for (int p = 0; p < kProcs; ++p) {
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      DiskCache cache(dir, uint64_t(1) << 30);
      int status = 0;
      for (int i = 0; i < kIters && !status; ++i) {
        if (auto hit = cache.get(in)) {
          if (hit->payload != payload || hit->kernelName != "vadd")
            status = 1;
        } else {
          cache.put(in, entry(payload)); // false only if evicted meanwhile
        }
        if (p == 0 && i % 10 == 5)
          cache.evictTo(0); // churn: the entry disappears under the others
      }
      ::_exit(status);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "a read returned a wrong payload";
  }
  DiskCache cache(dir);
  CacheStats s = cache.stats();
  EXPECT_EQ(s.hits + s.misses, kProcs * kIters);
  EXPECT_GE(s.writes, 1);
  EXPECT_EQ(s.rejected, 0);
  if (!cache.get(in))
    cache.put(in, entry(payload));
  auto final = cache.get(in);
  ASSERT_TRUE(final);
  EXPECT_EQ(final->payload, payload);
  // Nothing half-written is left behind.
  for (const auto &e : cache.entries())
    EXPECT_EQ(e.key, in.key());
}
