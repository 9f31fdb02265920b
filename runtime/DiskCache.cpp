//===- DiskCache.cpp - compiled kernels on disk, never trusted ------------===//

#include "runtime/DiskCache.h"

#include "runtime/DirFd.h"
#include "runtime/Hmac.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <mutex>
#include <pwd.h>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

using namespace tile::runtime;
namespace json = llvm::json;
using llvm::sys::fs::file_type;

static constexpr uint64_t kMaxMetaBytes = 1 << 20;
/// Below 4 GiB: llvm::SHA256 counts the length in 32 bits (Hmac.h).
static constexpr uint64_t kMaxBlobBytes = (uint64_t(1) << 32) - 1;
/// The per-cache HMAC key: created once, 0600, by the first user of the
/// directory; an entry verifies only under the key it was written with.
static constexpr const char *kKeyFile = "cache.key";
static constexpr size_t kSecretBytes = 32;
/// Domain separation for the entry MAC (and the format it belongs to).
static constexpr std::string_view kMacDomain = "tile-cache-entry-v2";
/// Temporaries older than this belong to a writer that died.
static constexpr int64_t kStaleTmpNs = int64_t(3600) * 1000000000;

std::string CacheKeyInputs::key() const {
  llvm::SHA256 h;
  // name NUL length NUL bytes: no two different inputs frame the same.
  auto field = [&](llvm::StringRef name, llvm::StringRef value) {
    h.update(name);
    h.update(llvm::StringRef("\0", 1));
    h.update(std::to_string(value.size()));
    h.update(llvm::StringRef("\0", 1));
    h.update(value);
  };
  field("tile-cache-format", std::to_string(DiskCache::kFormat));
  field("ir", ir);
  field("build", buildId);
  field("target", target);
  field("options", options);
  field("tool", toolVersion);
  return digestHex(h.final());
}

/// JSON strings are UTF-8 (llvm::json would replace other bytes): inputs or
/// entries with other text are neither stored nor looked up.
static bool isText(llvm::StringRef s) { return json::isUTF8(s); }

static bool keyInputsAreText(const CacheKeyInputs &in) {
  return isText(in.buildId) && isText(in.target) && isText(in.options) &&
         isText(in.toolVersion);
}

static json::Object keyInputsJson(const CacheKeyInputs &in) {
  return json::Object{{"ir_sha256", sha256Hex(in.ir)},
                      {"build_id", in.buildId},
                      {"target", in.target},
                      {"options", in.options},
                      {"tool_version", in.toolVersion}};
}

/// Deterministic text: object keys sorted, two-space indentation.
static std::string dumpJson(json::Value value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  json::OStream(os, /*IndentSize=*/2).value(value);
  return text;
}

/// The object `text` holds, or nullopt when it is not JSON or not an object.
static std::optional<json::Object> parseObject(llvm::StringRef text) {
  llvm::Expected<json::Value> value = json::parse(text);
  if (!value) {
    llvm::consumeError(value.takeError());
    return std::nullopt;
  }
  if (json::Object *object = value->getAsObject())
    return std::move(*object);
  return std::nullopt;
}

static std::optional<int64_t> getInt(const json::Object &o,
                                     llvm::StringRef key) {
  return o.getInteger(key);
}

static std::optional<std::string> getString(const json::Object &o,
                                            llvm::StringRef key) {
  if (std::optional<llvm::StringRef> s = o.getString(key))
    return s->str();
  return std::nullopt;
}

static bool isKey(const std::string &name) {
  return name.size() == 64 && std::all_of(name.begin(), name.end(), [](char c) {
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
      {"", 0},     {"B", 0},   {"K", 10},   {"KB", 10}, {"KIB", 10},
      {"M", 20},   {"MB", 20}, {"MIB", 20}, {"G", 30},  {"GB", 30},
      {"GIB", 30}, {"T", 40},  {"TB", 40},  {"TIB", 40}};
  for (const auto &[name, shift] : units)
    if (suffix == name) {
      if (shift && value > (UINT64_MAX >> shift))
        return std::nullopt;
      return value << shift;
    }
  return std::nullopt;
}

/// Prints `message` on stderr the first time `topic` comes up in this
/// process: a refused cache or a damaged entry is news once, not per kernel.
static void warnOnce(const std::string &topic, const std::string &message) {
  static std::mutex mutex;
  static std::set<std::string> seen;
  std::lock_guard<std::mutex> lock(mutex);
  if (seen.insert(topic).second)
    std::fprintf(stderr, "tile: warning: %s\n", message.c_str());
}

/// The HMAC of an entry's metadata bytes, bound to the entry's key.
static std::string entryMac(const std::string &secret, const std::string &key,
                            std::string_view metaText) {
  std::string message(kMacDomain);
  message += '\0';
  message += key;
  message += '\0';
  message += metaText;
  return digestHex(hmacSha256(secret, message));
}

/// The cache's secret key, created (0600, published whole by link(2)) when
/// missing. nullopt with `why` when it cannot be made or is not private.
static std::optional<std::string> loadSecret(int root, std::string &why) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    errno = 0;
    bool found = fs::statusAt(root, kKeyFile).has_value();
    int statErrno = errno;
    if (found) {
      auto secret =
          fs::readAt(root, kKeyFile, kSecretBytes, fs::Require::Private);
      if (secret && secret->size() == kSecretBytes)
        return secret;
      why = std::string("its key file ") + kKeyFile +
            " is not a private (0600) 32-byte file of this user";
      return std::nullopt;
    }
    auto bytes = fs::randomBytes(kSecretBytes);
    std::string tmp = ".tmp-key-" + fs::uniqueToken();
    if (statErrno != ENOENT || !bytes ||
        !fs::writeNewAt(root, tmp.c_str(), *bytes)) {
      ::unlinkat(root, tmp.c_str(), 0);
      why = std::string("its key file ") + kKeyFile + " cannot be created";
      return std::nullopt;
    }
    int linked = ::linkat(root, tmp.c_str(), root, kKeyFile, 0);
    int linkErrno = errno;
    ::unlinkat(root, tmp.c_str(), 0);
    if (linked == 0)
      return bytes;
    if (linkErrno != EEXIST)
      break;
    // Another process created it first: read theirs.
  }
  why = std::string("its key file ") + kKeyFile + " cannot be created";
  return std::nullopt;
}

/// Removed at exit: the private directory is this process's alone.
static std::string *fallbackDirectory = nullptr;

/// Without a usable home, a fresh private directory (mkdtemp, 0700) rather
/// than a predictable name in a world-writable /tmp that anyone could plant.
static std::string privateFallbackDirectory() {
  static std::once_flag once;
  std::call_once(once, [] {
    const char *tmp = std::getenv("TMPDIR");
    std::string pattern =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/tile-cache-XXXXXX";
    if (!::mkdtemp(pattern.data()))
      return;
    fallbackDirectory = new std::string(pattern);
    static const pid_t owner = ::getpid();
    std::atexit([] {
      if (::getpid() == owner) // not a forked child that calls exit()
        fs::removeTree(*fallbackDirectory);
    });
  });
  return fallbackDirectory ? *fallbackDirectory : std::string();
}

static std::string defaultDirectory() {
  const char *home = std::getenv("HOME");
  std::string base;
  if (home && *home) {
    base = home;
  } else if (const passwd *pw = ::getpwuid(::geteuid())) {
    base = pw->pw_dir ? pw->pw_dir : "";
  }
  if (base.empty() || !llvm::sys::fs::is_directory(base))
    return privateFallbackDirectory();
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

fs::Fd DiskCache::openRoot(Open how) const {
  if (how == Open::Use && !fs::makeDirs(dir))
    return fs::Fd();
  fs::Fd root = fs::openDir(dir);
  std::optional<fs::file_status> st = fs::statusOf(root.get());
  if (!st)
    return fs::Fd();
  if (how == Open::Inspect)
    return root;
  std::string why = fs::distrustReason(*st);
  if (why.empty())
    return root;
  // Anyone who can write it could plant code for us to run.
  warnOnce("dir:" + dir, "not using the kernel cache " + dir + ": " + why +
                             "; kernels are compiled without caching (make "
                             "it private with chmod 700, or set "
                             "TILE_CACHE_DIR to a directory of your own)");
  return fs::Fd();
}

/// The secret of a usable cache, or nullopt (warned about once).
static std::optional<std::string> secretOf(int root, const std::string &dir) {
  std::string why;
  auto secret = loadSecret(root, why);
  if (!secret)
    warnOnce("key:" + dir, "not using the kernel cache " + dir + ": " + why +
                               "; kernels are compiled without caching");
  return secret;
}

/// Whether `entryFd` is still the directory published as `key`: a check
/// that failed on an entry someone evicted or replaced meanwhile is a miss.
static bool stillPublished(int root, int entryFd, const std::string &key) {
  std::optional<fs::file_status> a = fs::statusOf(entryFd);
  std::optional<fs::file_status> b = fs::statusAt(root, key.c_str());
  return a && b && a->getUniqueID() == b->getUniqueID();
}

DiskCache::Outcome DiskCache::read(int root, const std::string &secret,
                                   const CacheKeyInputs &in,
                                   const std::string &key, CacheEntry *out,
                                   bool touch) {
  // One descriptor for the entry: every file read below comes from the same
  // directory even if the entry is replaced meanwhile.
  fs::Fd entry = fs::openDirAt(root, key.c_str());
  if (!entry)
    return Outcome::Miss;
  std::string why;
  Outcome result = validate(entry.get(), secret, in, key, out, why);
  if (result == Outcome::Rejected) {
    if (!stillPublished(root, entry.get(), key))
      return Outcome::Miss;
    warnOnce("entry:" + dir, "ignored a damaged entry of the kernel cache " +
                                 dir + " (" + key.substr(0, 16) + ": " + why +
                                 "); it was removed and the kernel is "
                                 "compiled again");
    discard(root, key);
  }
  if (result == Outcome::Hit && touch)
    fs::setTimes(entry.get(), fs::nowNs()); // the LRU stamp
  return result;
}

DiskCache::Outcome DiskCache::validate(int entryFd, const std::string &secret,
                                       const CacheKeyInputs &in,
                                       const std::string &key, CacheEntry *out,
                                       std::string &why) {
  auto reject = [&](std::string reason) {
    why = std::move(reason);
    return Outcome::Rejected;
  };
  std::optional<fs::file_status> st = fs::statusOf(entryFd);
  if (!st)
    return reject("its directory cannot be read");
  if (std::string distrust = fs::distrustReason(*st); !distrust.empty())
    return reject("its directory: " + distrust);
  // The MAC first: nothing an attacker wrote is parsed, sized or hashed.
  auto metaText =
      fs::readAt(entryFd, "meta.json", kMaxMetaBytes, fs::Require::Trusted);
  auto mac = fs::readAt(entryFd, "meta.hmac", 64, fs::Require::Trusted);
  if (!metaText || !mac)
    return reject("meta.json or meta.hmac is missing, too large, a link, or "
                  "writable by others");
  if (!equalConstantTime(*mac, entryMac(secret, key, *metaText)))
    return reject("its metadata fails the keyed check (HMAC-SHA256)");
  std::optional<json::Object> meta = parseObject(*metaText);
  if (!meta || getInt(*meta, "format") != kFormat ||
      getString(*meta, "key") != key)
    return reject("its metadata is of another format or key");
  const json::Object *inputs = meta->getObject("key_inputs");
  if (!inputs || *inputs != keyInputsJson(in))
    return reject("it was recorded for other compile inputs");

  CacheEntry e;
  auto name = getString(*meta, "kernel_name");
  auto warps = getInt(*meta, "num_warps");
  auto shared = getInt(*meta, "shared_mem");
  auto kind = getString(*meta, "payload_kind");
  const json::Array *sig = meta->getArray("signature");
  if (!name || !warps || !shared || !kind || !sig)
    return reject("its metadata lacks a field");
  e.kernelName = *name;
  e.numWarps = int(*warps);
  e.sharedMem = int(*shared);
  e.payloadKind = *kind;
  for (const json::Value &p : *sig) {
    std::optional<llvm::StringRef> text = p.getAsString();
    if (!text)
      return reject("its signature is malformed");
    e.signature.push_back(text->str());
  }

  // A blob is trusted only with the exact recorded size (checked before a
  // byte is read) and checksum.
  auto readBlob = [&](const std::string &file, const json::Value &size,
                      const json::Value &sha) -> std::optional<std::string> {
    std::optional<int64_t> bytes = size.getAsInteger();
    std::optional<llvm::StringRef> digest = sha.getAsString();
    if (!bytes || *bytes < 0 || uint64_t(*bytes) > kMaxBlobBytes || !digest)
      return std::nullopt;
    auto data = fs::readAt(entryFd, file.c_str(), uint64_t(*bytes),
                           fs::Require::Trusted);
    if (!data || data->size() != uint64_t(*bytes) ||
        sha256Hex(*data) != *digest)
      return std::nullopt;
    return data;
  };
  // Why a blob failed, worked out only then (for the one warning).
  auto blobProblem = [&](const std::string &file, const json::Value &size) {
    std::optional<fs::file_status> fst = fs::statusAt(entryFd, file.c_str());
    if (!fst)
      return file + " is missing";
    if (fst->type() != file_type::regular_file)
      return file + " is not a regular file";
    if (std::string distrust = fs::distrustReason(*fst); !distrust.empty())
      return file + ": " + distrust;
    std::optional<int64_t> bytes = size.getAsInteger();
    if (!bytes || fst->getSize() != uint64_t(*bytes))
      return file + " does not have its recorded size";
    return file + " fails its recorded SHA-256";
  };
  const json::Value *psize = meta->get("payload_size");
  const json::Value *psha = meta->get("payload_sha256");
  if (!psize || !psha)
    return reject("its metadata lacks the payload's size or checksum");
  auto payload = readBlob("payload.bin", *psize, *psha);
  if (!payload)
    return reject(blobProblem("payload.bin", *psize));
  e.payload = std::move(*payload);

  if (const json::Value *stages = meta->get("stages")) {
    const json::Array *list = stages->getAsArray();
    if (!list)
      return reject("its stage list is malformed");
    for (const json::Value &v : *list) {
      const json::Object *s = v.getAsObject();
      std::optional<std::string> sname =
          s ? getString(*s, "name") : std::nullopt;
      const json::Value *ssize = s ? s->get("size") : nullptr;
      const json::Value *ssha = s ? s->get("sha256") : nullptr;
      if (!sname || !isStageName(*sname) || !ssize || !ssha)
        return reject("its stage list is malformed");
      auto text = readBlob("stage." + *sname, *ssize, *ssha);
      if (!text)
        return reject(blobProblem("stage." + *sname, *ssize));
      e.stages.emplace_back(*sname, std::move(*text));
    }
  }
  if (const json::Value *attrs = meta->get("attrs")) {
    const json::Object *fields = attrs->getAsObject();
    if (!fields)
      return reject("its attributes are malformed");
    for (const auto &[k, v] : *fields) {
      std::optional<llvm::StringRef> text = v.getAsString();
      if (!text)
        return reject("its attributes are malformed");
      e.attrs[k.str()] = text->str();
    }
  }
  if (out)
    *out = std::move(e);
  return Outcome::Hit;
}

std::optional<CacheEntry> DiskCache::get(const CacheKeyInputs &in) {
  if (!lookups || !keyInputsAreText(in))
    return std::nullopt;
  fs::Fd root = openRoot(Open::Use);
  if (!root)
    return std::nullopt;
  auto secret = secretOf(root.get(), dir);
  if (!secret)
    return std::nullopt;
  CacheEntry entry;
  switch (read(root.get(), *secret, in, in.key(), &entry, /*touch=*/true)) {
  case Outcome::Hit:
    record(root.get(), &CacheStats::hits);
    return entry;
  case Outcome::Rejected:
    record(root.get(), &CacheStats::rejected);
    [[fallthrough]];
  case Outcome::Miss:
    record(root.get(), &CacheStats::misses);
    return std::nullopt;
  }
  return std::nullopt;
}

/// Whether `e` can be stored: its text is UTF-8 (JSON's) and its files are
/// within what get() reads back.
static bool isStorable(const CacheKeyInputs &in, const CacheEntry &e) {
  if (!keyInputsAreText(in) || !isText(e.kernelName) ||
      !isText(e.payloadKind) || e.payload.size() > kMaxBlobBytes)
    return false;
  for (const std::string &p : e.signature)
    if (!isText(p))
      return false;
  for (const auto &[k, v] : e.attrs)
    if (!isText(k) || !isText(v))
      return false;
  for (const auto &[name, text] : e.stages)
    if (text.size() > kMaxBlobBytes)
      return false;
  return true;
}

static std::string metaText(const CacheKeyInputs &in, const std::string &key,
                            const CacheEntry &e) {
  json::Array sig;
  for (const std::string &p : e.signature)
    sig.push_back(p);
  json::Array stages;
  for (const auto &[name, text] : e.stages) {
    if (!isStageName(name))
      continue; // not a safe file name: the stage is not kept
    stages.push_back(json::Object{{"name", name},
                                  {"size", uint64_t(text.size())},
                                  {"sha256", sha256Hex(text)}});
  }
  json::Object attrs;
  for (const auto &[k, v] : e.attrs)
    attrs[k] = v;
  return dumpJson(json::Object{
      {"format", DiskCache::kFormat},
      {"key", key},
      {"key_inputs", keyInputsJson(in)},
      {"kernel_name", e.kernelName},
      {"num_warps", e.numWarps},
      {"shared_mem", e.sharedMem},
      {"signature", std::move(sig)},
      {"payload_kind", e.payloadKind},
      {"payload_size", uint64_t(e.payload.size())},
      {"payload_sha256", sha256Hex(e.payload)},
      {"stages", std::move(stages)},
      {"attrs", std::move(attrs)},
      {"created_ns", fs::nowNs()},
  });
}

bool DiskCache::discard(int root, const std::string &key) {
  std::string trash = ".trash-" + key + "-" + fs::uniqueToken();
  if (::renameat(root, key.c_str(), root, trash.c_str()) != 0)
    return false;
  fs::removeTreeAt(root, trash.c_str());
  return true;
}

void DiskCache::reject(const CacheKeyInputs &in) {
  fs::Fd root = openRoot(Open::Use);
  if (!root)
    return;
  discard(root.get(), in.key());
  record(root.get(), &CacheStats::rejected);
}

bool DiskCache::put(const CacheKeyInputs &in, const CacheEntry &entry) {
  if (!isStorable(in, entry))
    return false;
  fs::Fd root = openRoot(Open::Use);
  if (!root)
    return false;
  auto secret = secretOf(root.get(), dir);
  if (!secret)
    return false;
  std::string key = in.key();
  std::string tmp = ".tmp-" + key + "-" + fs::uniqueToken();
  if (::mkdirat(root.get(), tmp.c_str(), 0700) != 0)
    return false;
  fs::Fd tmpFd = fs::openDirAt(root.get(), tmp.c_str());
  bool ok =
      bool(tmpFd) && fs::writeNewAt(tmpFd.get(), "payload.bin", entry.payload);
  for (const auto &[name, text] : entry.stages)
    if (isStageName(name))
      ok = ok && fs::writeNewAt(tmpFd.get(), ("stage." + name).c_str(), text);
  // The metadata and its MAC last: an entry without them never verifies.
  std::string meta = metaText(in, key, entry);
  ok = ok && fs::writeNewAt(tmpFd.get(), "meta.json", meta);
  ok = ok &&
       fs::writeNewAt(tmpFd.get(), "meta.hmac", entryMac(*secret, key, meta));
  ok = ok && fs::setTimes(tmpFd.get(), fs::nowNs());
  if (!ok) {
    fs::removeTreeAt(root.get(), tmp.c_str());
    return false;
  }

  bool published = false;
  for (int attempt = 0; attempt < 3 && !published; ++attempt) {
    published =
        ::renameat(root.get(), tmp.c_str(), root.get(), key.c_str()) == 0;
    if (published || (errno != EEXIST && errno != ENOTEMPTY))
      break;
    // Someone got there first. Keep theirs if it is sound (the same inputs
    // give the same binary), else move the broken one aside and retry.
    if (read(root.get(), *secret, in, key, nullptr, /*touch=*/false) ==
        Outcome::Hit) {
      fs::removeTreeAt(root.get(), tmp.c_str());
      return true;
    }
    discard(root.get(), key);
  }
  if (!published) {
    fs::removeTreeAt(root.get(), tmp.c_str());
    return false;
  }
  fs::setTimes(tmpFd.get(), fs::nowNs());
  record(root.get(), &CacheStats::writes);
  evictAt(root.get(), capacity);
  return true;
}

std::vector<CacheEntryInfo> DiskCache::entries() const {
  fs::Fd root = openRoot(Open::Inspect);
  return root ? entriesAt(root.get()) : std::vector<CacheEntryInfo>();
}

std::vector<CacheEntryInfo> DiskCache::entriesAt(int root) {
  std::vector<CacheEntryInfo> out;
  for (const std::string &name : fs::listAt(root)) {
    if (!isKey(name))
      continue;
    fs::Fd entry = fs::openDirAt(root, name.c_str());
    std::optional<fs::file_status> st = fs::statusOf(entry.get());
    if (!st)
      continue;
    CacheEntryInfo info;
    info.key = name;
    info.lastUseNs = fs::mtimeNs(*st);
    for (const std::string &file : fs::listAt(entry.get())) {
      std::optional<fs::file_status> fst =
          fs::statusAt(entry.get(), file.c_str());
      if (fst && fst->type() == file_type::regular_file)
        info.bytes += fst->getSize();
    }
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) {
    return a.lastUseNs != b.lastUseNs ? a.lastUseNs < b.lastUseNs
                                      : a.key < b.key;
  });
  return out;
}

/// Deletes temporaries left by writers that died, any trash, and (for
/// clear) anything else named like an entry: links and files included.
///
/// This, entriesAt and evictAt are tile's own LRU pruning rather than
/// llvm::pruneCache: that one considers only top-level *files* named
/// "llvmcache-*" or "Thin-*" (tile's entries are directories named by their
/// key), ages them by access time (tile stamps the modification time on a
/// hit, as noatime/relatime mounts need), removes by path where tile renames
/// an entry aside first (a reader never sees half an entry), and warns about
/// ThinLTO on stderr.
static void sweep(int root, bool everyKey) {
  std::vector<std::string> doomed;
  int64_t now = fs::nowNs();
  for (const std::string &name : fs::listAt(root)) {
    bool tmp = name.find(".tmp-") != std::string::npos;
    bool trash = name.rfind(".trash-", 0) == 0;
    if (!tmp && !trash && !(everyKey && isKey(name)))
      continue;
    std::optional<fs::file_status> st = fs::statusAt(root, name.c_str());
    if (!st)
      continue;
    if (!tmp || now - fs::mtimeNs(*st) > kStaleTmpNs)
      doomed.push_back(name);
  }
  for (const std::string &name : doomed)
    fs::removeTreeAt(root, name.c_str());
}

void DiskCache::evictTo(uint64_t limit) {
  if (fs::Fd root = openRoot(Open::Inspect))
    evictAt(root.get(), limit);
}

void DiskCache::evictAt(int root, uint64_t limit) {
  // One evictor at a time; others skip rather than wait (it is only a cap).
  fs::FileLock lock(root, ".evict.lock", /*blocking=*/false);
  if (!lock.held())
    return;
  std::vector<CacheEntryInfo> all = entriesAt(root);
  uint64_t total = 0;
  for (const CacheEntryInfo &e : all)
    total += e.bytes;
  if (total <= limit)
    return;
  sweep(root, /*everyKey=*/false);
  int64_t evicted = 0;
  for (const CacheEntryInfo &e : all) {
    if (total <= limit)
      break;
    if (discard(root, e.key)) {
      total -= e.bytes;
      ++evicted;
    }
  }
  if (evicted)
    record(root, &CacheStats::evictions, evicted);
}

void DiskCache::clear() {
  // Works on any cache, even one refused for use: it only removes.
  fs::Fd root = openRoot(Open::Inspect);
  if (!root)
    return;
  for (const CacheEntryInfo &e : entriesAt(root.get()))
    discard(root.get(), e.key);
  sweep(root.get(), /*everyKey=*/true);
  fs::FileLock lock(root.get(), ".stats.lock", /*blocking=*/true);
  ::unlinkat(root.get(), "stats.json", 0);
}

static const std::pair<const char *, int64_t CacheStats::*> kCounters[] = {
    {"hits", &CacheStats::hits},
    {"misses", &CacheStats::misses},
    {"writes", &CacheStats::writes},
    {"evictions", &CacheStats::evictions},
    {"rejected", &CacheStats::rejected}};

CacheStats DiskCache::statsAt(int root) {
  CacheStats s;
  auto text = fs::readAt(root, "stats.json", kMaxMetaBytes);
  std::optional<json::Object> j = text ? parseObject(*text) : std::nullopt;
  if (!j)
    return s; // missing or damaged: start again from zero
  for (const auto &[name, field] : kCounters)
    s.*field = getInt(*j, name).value_or(0);
  return s;
}

CacheStats DiskCache::stats() const {
  fs::Fd root = openRoot(Open::Inspect);
  return root ? statsAt(root.get()) : CacheStats();
}

void DiskCache::record(int root, int64_t CacheStats::*counter, int64_t by) {
  // Read-modify-write under a lock; the file itself is replaced by rename so
  // lock-free readers (python -m tile.cache stats) never see half of it.
  fs::FileLock lock(root, ".stats.lock", /*blocking=*/true);
  if (!lock.held())
    return;
  CacheStats s = statsAt(root);
  s.*counter += by;
  json::Object j;
  for (const auto &[name, field] : kCounters)
    j[name] = s.*field;
  fs::replaceFileAt(root, "stats.json", dumpJson(std::move(j)));
}
