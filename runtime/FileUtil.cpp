//===- FileUtil.cpp - POSIX file helpers for the disk cache ---------------===//

#include "runtime/FileUtil.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <random>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace tile::runtime;
using namespace tile::runtime::fs;

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

bool fs::isTrusted(const struct stat &st) { return distrustReason(st).empty(); }

std::string fs::distrustReason(const struct stat &st) {
  if (st.st_uid != ::geteuid() && st.st_uid != 0)
    return "it is owned by uid " + std::to_string(st.st_uid) +
           ", not by this user (uid " + std::to_string(::geteuid()) + ")";
  if (st.st_mode & (S_IWGRP | S_IWOTH)) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", unsigned(st.st_mode & 07777));
    return std::string("it is writable by group or others (mode ") + mode + ")";
  }
  return "";
}

Fd fs::openDir(const std::string &path) {
  return Fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

Fd fs::openDirAt(int dirfd, const char *name) {
  return Fd(
      ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

std::optional<std::string> fs::readAt(int dirfd, const char *name,
                                      uint64_t maxSize, Require require) {
  // O_NONBLOCK: a planted FIFO must not hang the reader; fstat rejects it.
  Fd fd(::openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st;
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      uint64_t(st.st_size) > maxSize)
    return std::nullopt;
  if (require != Require::Nothing && !isTrusted(st))
    return std::nullopt;
  if (require == Require::Private &&
      (st.st_uid != ::geteuid() || (st.st_mode & 077)))
    return std::nullopt;
  std::string data(size_t(st.st_size), '\0');
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::read(fd.get(), data.data() + done, data.size() - done);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
      continue;
    if (n <= 0)
      return std::nullopt; // shrank under us, or an I/O error
    done += size_t(n);
  }
  return data;
}

static bool writeAll(int fd, std::string_view data) {
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

bool fs::writeNewAt(int dirfd, const char *name, std::string_view data) {
  Fd fd(::openat(dirfd, name,
                 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  return fd && writeAll(fd.get(), data);
}

bool fs::replaceFileAt(int dirfd, const char *name, std::string_view data) {
  std::string tmp = std::string(name) + ".tmp-" + uniqueToken();
  if (!writeNewAt(dirfd, tmp.c_str(), data) ||
      ::renameat(dirfd, tmp.c_str(), dirfd, name) != 0) {
    ::unlinkat(dirfd, tmp.c_str(), 0);
    return false;
  }
  return true;
}

bool fs::makeDirs(const std::string &path) {
  if (path.empty())
    return false;
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos != path.size() && path[pos] != '/')
      continue;
    std::string prefix = path.substr(0, pos);
    if (::mkdir(prefix.c_str(), 0700) != 0 && errno != EEXIST)
      return false;
  }
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

void fs::removeTreeAt(int parent, const char *name) {
  // unlinkat removes a file or a symbolic link itself, never its target.
  if (::unlinkat(parent, name, 0) == 0 || errno == ENOENT)
    return;
  Fd dir = openDirAt(parent, name);
  if (!dir)
    return;
  if (DIR *d = ::fdopendir(::dup(dir.get()))) {
    while (dirent *e = ::readdir(d)) {
      std::string child = e->d_name;
      if (child != "." && child != "..")
        removeTreeAt(dir.get(), child.c_str());
    }
    ::closedir(d);
  }
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
  size_t done = 0;
  while (done < n) {
    ssize_t got = ::getrandom(out.data() + done, n - done, 0);
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return std::nullopt;
    done += size_t(got);
  }
  return out;
}

int64_t fs::nowNs() {
  timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

bool fs::setTimes(int fd, int64_t ns) {
  timespec times[2];
  times[0].tv_sec = times[1].tv_sec = time_t(ns / 1000000000);
  times[0].tv_nsec = times[1].tv_nsec = long(ns % 1000000000);
  return ::futimens(fd, times) == 0;
}

int64_t fs::mtimeNs(const struct stat &st) {
  return int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
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
  struct stat st;
  if (!fd || ::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
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
