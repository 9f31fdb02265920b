//===- DiskCache.cpp - compiled kernels on disk, never trusted ------------===//

#include "runtime/DiskCache.h"

#include "runtime/FileUtil.h"
#include "runtime/Json.h"
#include "runtime/Sha256.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tile::runtime;

static constexpr uint64_t kMaxMetaBytes = 1 << 20;
static constexpr uint64_t kMaxBlobBytes = uint64_t(1) << 32;
/// Temporaries older than this belong to a writer that died.
static constexpr int64_t kStaleTmpNs = int64_t(3600) * 1000000000;

std::string CacheKeyInputs::key() const {
  Sha256 h;
  // name NUL length NUL bytes: no two different inputs frame the same.
  auto field = [&](std::string_view name, std::string_view value) {
    h.update(name);
    h.update("\0", 1);
    h.update(std::to_string(value.size()));
    h.update("\0", 1);
    h.update(value);
  };
  field("tile-cache-format", std::to_string(DiskCache::kFormat));
  field("ir", ir);
  field("build", buildId);
  field("target", target);
  field("options", options);
  field("tool", toolVersion);
  return h.hexDigest();
}

static Json keyInputsJson(const CacheKeyInputs &in) {
  Json j = Json::object();
  j["ir_sha256"] = Sha256::hex(in.ir);
  j["build_id"] = in.buildId;
  j["target"] = in.target;
  j["options"] = in.options;
  j["tool_version"] = in.toolVersion;
  return j;
}

static bool isKey(const std::string &name) {
  return name.size() == 64 &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

/// Stage names become file names: keep them to a harmless alphabet.
static bool isStageName(const std::string &name) {
  return !name.empty() && name.size() <= 64 &&
         std::all_of(name.begin(), name.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                  (c >= 'A' && c <= 'Z') || c == '_' || c == '-';
         });
}

std::optional<uint64_t> DiskCache::parseSize(const std::string &text) {
  size_t pos = 0;
  uint64_t value = 0;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
    if (value > (UINT64_MAX - 9) / 10)
      return std::nullopt;
    value = value * 10 + uint64_t(text[pos++] - '0');
  }
  if (pos == 0)
    return std::nullopt;
  std::string suffix = text.substr(pos);
  for (char &c : suffix)
    c = char(std::toupper(static_cast<unsigned char>(c)));
  static const std::pair<const char *, int> units[] = {
      {"", 0},    {"B", 0},    {"K", 10},   {"KB", 10}, {"KIB", 10},
      {"M", 20},  {"MB", 20},  {"MIB", 20}, {"G", 30},  {"GB", 30},
      {"GIB", 30}, {"T", 40},  {"TB", 40},  {"TIB", 40}};
  for (const auto &[name, shift] : units)
    if (suffix == name) {
      if (shift && value > (UINT64_MAX >> shift))
        return std::nullopt;
      return value << shift;
    }
  return std::nullopt;
}

static std::string defaultDirectory() {
  const char *home = std::getenv("HOME");
  std::string base;
  if (home && *home) {
    base = home;
  } else if (const passwd *pw = ::getpwuid(::getuid())) {
    base = pw->pw_dir ? pw->pw_dir : "";
  }
  if (base.empty())
    return "/tmp/tile-cache-" + std::to_string(::getuid());
  return base + "/.cache/tile";
}

/// Set to anything but "", "0", "false", "no" or "off".
static bool envFlag(const char *name) {
  const char *v = std::getenv(name);
  if (!v)
    return false;
  std::string s = v;
  for (char &c : s)
    c = char(std::tolower(static_cast<unsigned char>(c)));
  return !(s.empty() || s == "0" || s == "false" || s == "no" || s == "off");
}

DiskCache DiskCache::fromEnvironment() {
  const char *dir = std::getenv("TILE_CACHE_DIR");
  uint64_t cap = kDefaultMaxBytes;
  if (const char *size = std::getenv("TILE_CACHE_SIZE"))
    cap = parseSize(size).value_or(kDefaultMaxBytes);
  return DiskCache(dir && *dir ? dir : defaultDirectory(), cap,
                   !envFlag("TILE_ALWAYS_COMPILE"));
}

DiskCache::DiskCache(std::string dir, uint64_t maxBytes, bool lookups)
    : dir(std::move(dir)), capacity(maxBytes), lookups(lookups) {
  while (this->dir.size() > 1 && this->dir.back() == '/')
    this->dir.pop_back();
}

/// Whether `fd` is still the directory published at `path`: a check that
/// failed on an entry someone evicted or replaced meanwhile is just a miss.
static bool stillPublished(int fd, const std::string &path) {
  struct stat a, b;
  return ::fstat(fd, &a) == 0 && ::stat(path.c_str(), &b) == 0 &&
         a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

DiskCache::Outcome DiskCache::read(const CacheKeyInputs &in,
                                   const std::string &key, CacheEntry *out,
                                   bool touch) {
  // One descriptor for the entry: every file read below comes from the same
  // directory even if the entry is replaced meanwhile.
  std::string path = dir + "/" + key;
  fs::Fd entry(
      ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!entry)
    return Outcome::Miss;
  Outcome result = validate(entry.get(), in, key, out);
  if (result == Outcome::Rejected && !stillPublished(entry.get(), path))
    return Outcome::Miss;
  if (result == Outcome::Hit && touch)
    fs::setTimes(entry.get(), fs::nowNs()); // the LRU stamp
  return result;
}

DiskCache::Outcome DiskCache::validate(int entryFd, const CacheKeyInputs &in,
                                       const std::string &key,
                                       CacheEntry *out) {
  auto metaText = fs::readAt(entryFd, "meta.json", kMaxMetaBytes);
  if (!metaText)
    return Outcome::Rejected;
  auto meta = Json::parse(*metaText);
  if (!meta || meta->getInt("format") != kFormat ||
      meta->getString("key") != key)
    return Outcome::Rejected;
  const Json *inputs = meta->get("key_inputs");
  if (!inputs || *inputs != keyInputsJson(in))
    return Outcome::Rejected;

  CacheEntry e;
  auto name = meta->getString("kernel_name");
  auto warps = meta->getInt("num_warps");
  auto shared = meta->getInt("shared_mem");
  auto kind = meta->getString("payload_kind");
  const Json *sig = meta->get("signature");
  if (!name || !warps || !shared || !kind || !sig || !sig->isArray())
    return Outcome::Rejected;
  e.kernelName = *name;
  e.numWarps = int(*warps);
  e.sharedMem = int(*shared);
  e.payloadKind = *kind;
  for (const Json &p : sig->items()) {
    if (!p.isString())
      return Outcome::Rejected;
    e.signature.push_back(p.asString());
  }

  // A blob is trusted only with the exact recorded size and checksum.
  auto readBlob = [&](const std::string &file, const Json &size,
                      const Json &sha) -> std::optional<std::string> {
    if (!size.isInt() || size.asInt() < 0 ||
        uint64_t(size.asInt()) > kMaxBlobBytes || !sha.isString())
      return std::nullopt;
    auto data = fs::readAt(entryFd, file.c_str(), uint64_t(size.asInt()));
    if (!data || data->size() != uint64_t(size.asInt()) ||
        Sha256::hex(*data) != sha.asString())
      return std::nullopt;
    return data;
  };
  const Json *psize = meta->get("payload_size");
  const Json *psha = meta->get("payload_sha256");
  if (!psize || !psha)
    return Outcome::Rejected;
  auto payload = readBlob("payload.bin", *psize, *psha);
  if (!payload)
    return Outcome::Rejected;
  e.payload = std::move(*payload);

  if (const Json *stages = meta->get("stages")) {
    if (!stages->isArray())
      return Outcome::Rejected;
    for (const Json &s : stages->items()) {
      auto sname = s.getString("name");
      const Json *ssize = s.get("size");
      const Json *ssha = s.get("sha256");
      if (!sname || !isStageName(*sname) || !ssize || !ssha)
        return Outcome::Rejected;
      auto text = readBlob("stage." + *sname, *ssize, *ssha);
      if (!text)
        return Outcome::Rejected;
      e.stages.emplace_back(*sname, std::move(*text));
    }
  }
  if (const Json *attrs = meta->get("attrs")) {
    if (!attrs->isObject())
      return Outcome::Rejected;
    for (const auto &[k, v] : attrs->fields()) {
      if (!v.isString())
        return Outcome::Rejected;
      e.attrs[k] = v.asString();
    }
  }
  if (out)
    *out = std::move(e);
  return Outcome::Hit;
}

std::optional<CacheEntry> DiskCache::get(const CacheKeyInputs &in) {
  if (!lookups)
    return std::nullopt;
  CacheEntry entry;
  switch (read(in, in.key(), &entry, /*touch=*/true)) {
  case Outcome::Hit:
    record(&CacheStats::hits);
    return entry;
  case Outcome::Rejected:
    record(&CacheStats::rejected);
    [[fallthrough]];
  case Outcome::Miss:
    record(&CacheStats::misses);
    return std::nullopt;
  }
  return std::nullopt;
}

static std::string metaText(const CacheKeyInputs &in, const std::string &key,
                            const CacheEntry &e) {
  Json meta = Json::object();
  meta["format"] = DiskCache::kFormat;
  meta["key"] = key;
  meta["key_inputs"] = keyInputsJson(in);
  meta["kernel_name"] = e.kernelName;
  meta["num_warps"] = e.numWarps;
  meta["shared_mem"] = e.sharedMem;
  Json sig = Json::array();
  for (const std::string &p : e.signature)
    sig.push(p);
  meta["signature"] = std::move(sig);
  meta["payload_kind"] = e.payloadKind;
  meta["payload_size"] = uint64_t(e.payload.size());
  meta["payload_sha256"] = Sha256::hex(e.payload);
  Json stages = Json::array();
  for (const auto &[name, text] : e.stages) {
    if (!isStageName(name))
      continue; // not a safe file name: the stage is not kept
    Json s = Json::object();
    s["name"] = name;
    s["size"] = uint64_t(text.size());
    s["sha256"] = Sha256::hex(text);
    stages.push(std::move(s));
  }
  meta["stages"] = std::move(stages);
  Json attrs = Json::object();
  for (const auto &[k, v] : e.attrs)
    attrs[k] = v;
  meta["attrs"] = std::move(attrs);
  meta["created_ns"] = fs::nowNs();
  return meta.dump();
}

bool DiskCache::discard(const std::string &key) {
  std::string trash = dir + "/.trash-" + key + "-" + fs::uniqueToken();
  if (::rename((dir + "/" + key).c_str(), trash.c_str()) != 0)
    return false;
  fs::removeTree(trash);
  return true;
}

void DiskCache::reject(const CacheKeyInputs &in) {
  discard(in.key());
  record(&CacheStats::rejected);
}

bool DiskCache::put(const CacheKeyInputs &in, const CacheEntry &entry) {
  if (!fs::makeDirs(dir))
    return false;
  std::string key = in.key();
  std::string tmp = dir + "/.tmp-" + key + "-" + fs::uniqueToken();
  if (::mkdir(tmp.c_str(), 0755) != 0)
    return false;
  fs::Fd tmpFd = fs::openDir(tmp);
  bool ok = bool(tmpFd) &&
            fs::writeNewAt(tmpFd.get(), "payload.bin", entry.payload);
  for (const auto &[name, text] : entry.stages)
    if (isStageName(name))
      ok = ok && fs::writeNewAt(tmpFd.get(), ("stage." + name).c_str(), text);
  // meta.json last: an entry without it is incomplete by construction.
  ok = ok && fs::writeNewAt(tmpFd.get(), "meta.json",
                            metaText(in, key, entry));
  ok = ok && fs::setTimes(tmpFd.get(), fs::nowNs());
  if (!ok) {
    fs::removeTree(tmp);
    return false;
  }

  std::string final = dir + "/" + key;
  bool published = false;
  for (int attempt = 0; attempt < 3 && !published; ++attempt) {
    published = ::rename(tmp.c_str(), final.c_str()) == 0;
    if (published || (errno != EEXIST && errno != ENOTEMPTY))
      break;
    // Someone got there first. Keep theirs if it is sound (the same inputs
    // give the same binary), else move the broken one aside and retry.
    if (read(in, key, nullptr, /*touch=*/false) == Outcome::Hit) {
      fs::removeTree(tmp);
      return true;
    }
    discard(key);
  }
  if (!published) {
    fs::removeTree(tmp);
    return false;
  }
  fs::setTimes(tmpFd.get(), fs::nowNs());
  record(&CacheStats::writes);
  evictTo(capacity);
  return true;
}

std::vector<CacheEntryInfo> DiskCache::entries() const {
  std::vector<CacheEntryInfo> out;
  fs::Fd root = fs::openDir(dir);
  if (!root)
    return out;
  DIR *d = ::fdopendir(::dup(root.get()));
  if (!d)
    return out;
  while (dirent *e = ::readdir(d)) {
    std::string name = e->d_name;
    if (!isKey(name))
      continue;
    fs::Fd entry = fs::openDirAt(root.get(), name.c_str());
    struct stat st;
    if (!entry || ::fstat(entry.get(), &st) != 0)
      continue;
    CacheEntryInfo info;
    info.key = name;
    info.lastUseNs = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    if (DIR *files = ::fdopendir(::dup(entry.get()))) {
      while (dirent *f = ::readdir(files)) {
        struct stat fst;
        if (::fstatat(entry.get(), f->d_name, &fst, AT_SYMLINK_NOFOLLOW) ==
                0 &&
            S_ISREG(fst.st_mode))
          info.bytes += uint64_t(fst.st_size);
      }
      ::closedir(files);
    }
    out.push_back(std::move(info));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) {
    return a.lastUseNs != b.lastUseNs ? a.lastUseNs < b.lastUseNs
                                      : a.key < b.key;
  });
  return out;
}

/// Deletes temporaries left by writers that died, and any trash.
static void sweepTemporaries(const std::string &dir) {
  fs::Fd root = fs::openDir(dir);
  if (!root)
    return;
  DIR *d = ::fdopendir(::dup(root.get()));
  if (!d)
    return;
  std::vector<std::string> doomed;
  int64_t now = fs::nowNs();
  while (dirent *e = ::readdir(d)) {
    std::string name = e->d_name;
    bool tmp = name.find(".tmp-") != std::string::npos;
    if (!tmp && name.rfind(".trash-", 0) != 0)
      continue;
    struct stat st;
    if (::fstatat(root.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
      continue;
    int64_t age =
        now - (int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec);
    if (!tmp || age > kStaleTmpNs)
      doomed.push_back(dir + "/" + name);
  }
  ::closedir(d);
  for (const std::string &path : doomed)
    fs::removeTree(path);
}

void DiskCache::evictTo(uint64_t limit) {
  // One evictor at a time; others skip rather than wait (it is only a cap).
  fs::FileLock lock(dir + "/.evict.lock", /*blocking=*/false);
  if (!lock.held())
    return;
  std::vector<CacheEntryInfo> all = entries();
  uint64_t total = 0;
  for (const CacheEntryInfo &e : all)
    total += e.bytes;
  if (total <= limit)
    return;
  sweepTemporaries(dir);
  int64_t evicted = 0;
  for (const CacheEntryInfo &e : all) {
    if (total <= limit)
      break;
    if (discard(e.key)) {
      total -= e.bytes;
      ++evicted;
    }
  }
  if (evicted)
    record(&CacheStats::evictions, evicted);
}

void DiskCache::clear() {
  for (const CacheEntryInfo &e : entries())
    discard(e.key);
  sweepTemporaries(dir);
  fs::FileLock lock(dir + "/.stats.lock", /*blocking=*/true);
  ::unlink((dir + "/stats.json").c_str());
}

static const std::pair<const char *, int64_t CacheStats::*> kCounters[] = {
    {"hits", &CacheStats::hits},
    {"misses", &CacheStats::misses},
    {"writes", &CacheStats::writes},
    {"evictions", &CacheStats::evictions},
    {"rejected", &CacheStats::rejected}};

static CacheStats parseStats(const std::optional<std::string> &text) {
  CacheStats s;
  std::optional<Json> j = text ? Json::parse(*text) : std::nullopt;
  if (!j)
    return s; // missing or damaged: start again from zero
  for (const auto &[name, field] : kCounters)
    s.*field = j->getInt(name).value_or(0);
  return s;
}

CacheStats DiskCache::stats() const {
  return parseStats(fs::readFile(dir + "/stats.json", kMaxMetaBytes));
}

void DiskCache::record(int64_t CacheStats::*counter, int64_t by) {
  if (!fs::makeDirs(dir))
    return;
  // Read-modify-write under a lock; the file itself is replaced by rename so
  // lock-free readers (python -m tile.cache stats) never see half of it.
  fs::FileLock lock(dir + "/.stats.lock", /*blocking=*/true);
  if (!lock.held())
    return;
  CacheStats s = stats();
  s.*counter += by;
  Json j = Json::object();
  for (const auto &[name, field] : kCounters)
    j[name] = s.*field;
  fs::replaceFile(dir + "/stats.json", j.dump());
}
