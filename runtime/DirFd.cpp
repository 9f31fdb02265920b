//===- DirFd.cpp - file access relative to directory descriptors ----------===//

#include "runtime/DirFd.h"

#include "llvm/Support/Chrono.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/RandomNumberGenerator.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <dirent.h>
#include <fcntl.h>
#include <random>
#include <sys/file.h>
#include <unistd.h>

using namespace tile::runtime;
using namespace tile::runtime::fs;
namespace sysfs = llvm::sys::fs;

Fd &Fd::operator=(Fd &&o) noexcept {
  if (this != &o) {
    if (fd >= 0)
      ::close(fd);
    fd = o.release();
  }
  return *this;
}

Fd::~Fd() {
  if (fd >= 0)
    ::close(fd);
}

bool fs::isTrusted(const file_status &st) { return distrustReason(st).empty(); }

std::string fs::distrustReason(const file_status &st) {
  if (st.getUser() != ::geteuid() && st.getUser() != 0)
    return "it is owned by uid " + std::to_string(st.getUser()) +
           ", not by this user (uid " + std::to_string(::geteuid()) + ")";
  unsigned mode = unsigned(st.permissions());
  if (mode & (sysfs::group_write | sysfs::others_write)) {
    char text[8];
    std::snprintf(text, sizeof(text), "%04o", mode & sysfs::all_perms);
    return std::string("it is writable by group or others (mode ") + text + ")";
  }
  return "";
}

bool fs::isPrivate(const file_status &st) {
  return st.getUser() == ::geteuid() &&
         (unsigned(st.permissions()) & (sysfs::all_all & ~sysfs::owner_all)) ==
             0;
}

std::optional<file_status> fs::statusOf(int fd) {
  file_status st;
  if (fd < 0 || sysfs::status(fd, st))
    return std::nullopt;
  return st;
}

std::optional<file_status> fs::statusAt(int dirfd, const char *name) {
  // O_PATH | O_NOFOLLOW names the entry itself, a link included, and opens
  // nothing (a FIFO does not block, a device is not touched).
  Fd fd(::openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC));
  return statusOf(fd.get());
}

Fd fs::openDir(const std::string &path) {
  return Fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

Fd fs::openDirAt(int dirfd, const char *name) {
  return Fd(
      ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

std::vector<std::string> fs::listAt(int dirfd) {
  std::vector<std::string> names;
  DIR *d = ::fdopendir(::dup(dirfd));
  if (!d)
    return names;
  ::rewinddir(d); // a dup shares the offset an earlier listing moved
  while (dirent *e = ::readdir(d)) {
    std::string name = e->d_name;
    if (name != "." && name != "..")
      names.push_back(std::move(name));
  }
  ::closedir(d);
  return names;
}

std::optional<std::string> fs::readAt(int dirfd, const char *name,
                                      uint64_t maxSize, Require require) {
  // O_NONBLOCK: a planted FIFO must not hang the reader; the status check
  // rejects it.
  Fd fd(::openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  std::optional<file_status> st = statusOf(fd.get());
  if (!st || st->type() != sysfs::file_type::regular_file ||
      st->getSize() > maxSize)
    return std::nullopt;
  if (require != Require::Nothing && !isTrusted(*st))
    return std::nullopt;
  if (require == Require::Private && !isPrivate(*st))
    return std::nullopt;
  std::string data(size_t(st->getSize()), '\0');
  size_t done = 0;
  while (done < data.size()) {
    llvm::Expected<size_t> n = sysfs::readNativeFile(
        sysfs::convertFDToNativeFile(fd.get()),
        llvm::MutableArrayRef<char>(data.data() + done, data.size() - done));
    if (!n) {
      llvm::consumeError(n.takeError());
      return std::nullopt; // an I/O error
    }
    if (*n == 0)
      return std::nullopt; // shrank under us
    done += *n;
  }
  return data;
}

static bool writeAll(int fd, llvm::StringRef data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += size_t(n);
  }
  return true;
}

bool fs::writeNewAt(int dirfd, const char *name, llvm::StringRef data) {
  Fd fd(::openat(dirfd, name,
                 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  return fd && writeAll(fd.get(), data);
}

bool fs::replaceFileAt(int dirfd, const char *name, llvm::StringRef data) {
  std::string tmp = std::string(name) + ".tmp-" + uniqueToken();
  if (!writeNewAt(dirfd, tmp.c_str(), data) ||
      ::renameat(dirfd, tmp.c_str(), dirfd, name) != 0) {
    ::unlinkat(dirfd, tmp.c_str(), 0);
    return false;
  }
  return true;
}

bool fs::makeDirs(const std::string &path) {
  return !path.empty() &&
         !sysfs::create_directories(path, /*IgnoreExisting=*/true,
                                    sysfs::owner_all) &&
         sysfs::is_directory(path);
}

void fs::removeTreeAt(int parent, const char *name) {
  // unlinkat removes a file or a symbolic link itself, never its target.
  if (::unlinkat(parent, name, 0) == 0 || errno == ENOENT)
    return;
  Fd dir = openDirAt(parent, name);
  if (!dir)
    return;
  for (const std::string &child : listAt(dir.get()))
    removeTreeAt(dir.get(), child.c_str());
  ::unlinkat(parent, name, AT_REMOVEDIR);
}

void fs::removeTree(const std::string &path) {
  removeTreeAt(AT_FDCWD, path.c_str());
}

std::string fs::uniqueToken() {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t salt = [] {
    std::random_device rd;
    return (uint64_t(rd()) << 32) ^ rd();
  }();
  uint64_t n = counter.fetch_add(1);
  char buf[64];
  snprintf(buf, sizeof(buf), "%d-%llx-%llx", int(::getpid()),
           (unsigned long long)(salt ^ uint64_t(nowNs())),
           (unsigned long long)n);
  return buf;
}

std::optional<std::string> fs::randomBytes(size_t n) {
  std::string out(n, '\0');
  if (llvm::getRandomBytes(out.data(), n))
    return std::nullopt;
  return out;
}

int64_t fs::nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool fs::setTimes(int fd, int64_t ns) {
  llvm::sys::TimePoint<> t{std::chrono::nanoseconds(ns)};
  return !sysfs::setLastAccessAndModificationTime(fd, t);
}

int64_t fs::mtimeNs(const file_status &st) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             st.getLastModificationTime().time_since_epoch())
      .count();
}

static int openLockFile(int dirfd, const char *name) {
  int flags = O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
  int fd = ::openat(dirfd, name, flags, 0600);
  // A planted link: drop it (never touching its target) and make ours.
  if (fd < 0 && errno == ELOOP && ::unlinkat(dirfd, name, 0) == 0)
    fd = ::openat(dirfd, name, flags | O_EXCL, 0600);
  return fd;
}

FileLock::FileLock(int dirfd, const char *name, bool blocking)
    : fd(openLockFile(dirfd, name)) {
  std::optional<file_status> st = statusOf(fd.get());
  if (!st || st->type() != sysfs::file_type::regular_file)
    return;
  int op = LOCK_EX | (blocking ? 0 : LOCK_NB);
  int r;
  do
    r = ::flock(fd.get(), op);
  while (r != 0 && errno == EINTR);
  locked = r == 0;
}

FileLock::~FileLock() {
  if (locked)
    ::flock(fd.get(), LOCK_UN);
}
