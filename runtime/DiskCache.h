//===- DiskCache.h - compiled kernels on disk, never trusted ----*- C++ -*-===//
//
// Layout under the cache directory (TILE_CACHE_DIR, default ~/.cache/tile;
// docs/cache.md has the whole story):
//
//   cache.key            32 random bytes, 0600: the per-cache HMAC key
//   <key>/meta.json      what the entry is, what it was keyed on, checksums
//   <key>/meta.hmac      HMAC-SHA256 of the entry's key and meta.json bytes
//   <key>/payload.bin    the binary (cubin, or CPU object code)
//   <key>/stage.<name>   optional IR text of a compile stage ("ptx", ...)
//   stats.json           hits, misses, writes, evictions, rejected
//   .tmp-*, .trash-*     entries being written or deleted
//
// <key> is the SHA-256 of every compile input. An entry is built in a .tmp
// directory and published by one rename(2) of the whole directory, which
// fails when the key already exists: concurrent writers never mix files and
// the first one wins. Reads go through a descriptor of the entry directory,
// never follow symbolic links, and check, before any byte reaches a loader:
// ownership and modes, the keyed MAC of the metadata, the recorded key
// inputs, and each file's size (before reading it) and SHA-256. Anything off
// is a miss (counted as "rejected", warned about once); the entry is removed
// and the next put stores a fresh one. A cache directory or key file that
// another user owns or could write is not used at all (one warning). The
// directory's mtime is the LRU stamp: set on write and on every hit.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_RUNTIME_DISKCACHE_H
#define TILE_RUNTIME_DISKCACHE_H

#include "runtime/DirFd.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tile::runtime {

/// Everything a compiled binary depends on. Each field changes the key.
struct CacheKeyInputs {
  std::string ir;          // the tile IR text
  std::string buildId;     // the compiler's own identity
  std::string target;      // "sm_90", "cpu-x86_64", ...
  std::string options;     // canonical text of codegen options
  std::string toolVersion; // `ptxas --version` (empty when unused)

  /// Hex SHA-256 of the inputs, unambiguously framed.
  std::string key() const;
};

struct CacheEntry {
  std::string kernelName;
  int numWarps = 0;
  int sharedMem = 0;
  std::vector<std::string> signature; // Param::str() of each parameter
  std::string payloadKind;            // "cubin", "object", ...
  std::string payload;
  /// Optional text stages kept for `k.asm` on cache hits (only those named
  /// with [A-Za-z0-9_-]: names become file names).
  std::vector<std::pair<std::string, std::string>> stages;
  /// Backend-specific string attributes.
  std::map<std::string, std::string> attrs;
};

struct CacheStats {
  int64_t hits = 0, misses = 0, writes = 0, evictions = 0, rejected = 0;
};

struct CacheEntryInfo {
  std::string key;
  uint64_t bytes = 0;
  int64_t lastUseNs = 0;
};

class DiskCache {
public:
  static constexpr uint64_t kDefaultMaxBytes = uint64_t(1) << 30;
  /// Bumped whenever entries change shape: 2 added meta.hmac.
  static constexpr int kFormat = 2;

  /// TILE_CACHE_DIR (default ~/.cache/tile, or a private per-process
  /// directory when $HOME is unusable), TILE_CACHE_SIZE (bytes, or with a
  /// K/M/G suffix; default 1 GiB), TILE_ALWAYS_COMPILE=1 (skip lookups).
  static DiskCache fromEnvironment();
  /// Parses a TILE_CACHE_SIZE value; nullopt when malformed.
  static std::optional<uint64_t> parseSize(const std::string &text);

  explicit DiskCache(std::string dir, uint64_t maxBytes = kDefaultMaxBytes,
                     bool lookups = true);

  const std::string &directory() const { return dir; }
  uint64_t maxBytes() const { return capacity; }
  bool lookupsEnabled() const { return lookups; }

  /// The verified entry for `in`, or nullopt (a miss). Never throws.
  std::optional<CacheEntry> get(const CacheKeyInputs &in);
  /// Stores `entry` for `in` unless a valid entry is already there, then
  /// evicts least recently used entries above the size cap. Returns whether
  /// the entry is now present. Never throws.
  bool put(const CacheKeyInputs &in, const CacheEntry &entry);
  /// Removes the entry for `in`: it verified, but its backend could not use
  /// it (an object the JIT would not load). Counted as "rejected"; the next
  /// put stores a fresh one. Never throws.
  void reject(const CacheKeyInputs &in);

  CacheStats stats() const;
  /// Entries, least recently used first.
  std::vector<CacheEntryInfo> entries() const;
  /// Removes entries (and stale temporaries) until at most `limit` bytes.
  void evictTo(uint64_t limit);
  /// Removes every entry and the stats.
  void clear();

private:
  enum class Outcome { Hit, Miss, Rejected };
  /// How the cache directory is opened: for use (checked, and created when
  /// missing; a refused one is warned about) or to inspect and clean it.
  enum class Open { Use, Inspect };
  fs::Fd openRoot(Open how) const;
  Outcome read(int root, const std::string &secret, const CacheKeyInputs &in,
               const std::string &key, CacheEntry *out, bool touch);
  static Outcome validate(int entryFd, const std::string &secret,
                          const CacheKeyInputs &in, const std::string &key,
                          CacheEntry *out, std::string &why);
  void record(int root, int64_t CacheStats::*counter, int64_t by = 1);
  static CacheStats statsAt(int root);
  static std::vector<CacheEntryInfo> entriesAt(int root);
  void evictAt(int root, uint64_t limit);
  static bool discard(int root, const std::string &key);

  std::string dir;
  uint64_t capacity;
  bool lookups;
};

} // namespace tile::runtime

#endif
