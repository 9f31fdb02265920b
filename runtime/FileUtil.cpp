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

Fd fs::openDir(const std::string &path) {
  return Fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

Fd fs::openDirAt(int dirfd, const char *name) {
  return Fd(::openat(dirfd, name,
                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

static std::optional<std::string> readAll(int fd, uint64_t maxSize) {
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
      uint64_t(st.st_size) > maxSize)
    return std::nullopt;
  std::string data(size_t(st.st_size), '\0');
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::read(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return std::nullopt; // shrank under us, or an I/O error
    done += size_t(n);
  }
  return data;
}

std::optional<std::string> fs::readAt(int dirfd, const char *name,
                                      uint64_t maxSize) {
  Fd fd(::openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  return readAll(fd.get(), maxSize);
}

std::optional<std::string> fs::readFile(const std::string &path,
                                        uint64_t maxSize) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  return readAll(fd.get(), maxSize);
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
  Fd fd(::openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
  return fd && writeAll(fd.get(), data);
}

bool fs::replaceFile(const std::string &path, std::string_view data) {
  std::string tmp = path + ".tmp-" + uniqueToken();
  {
    Fd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (!fd || !writeAll(fd.get(), data)) {
      ::unlink(tmp.c_str());
      return false;
    }
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    ::unlink(tmp.c_str());
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
    if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
      return false;
  }
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

static void removeTreeAt(int parent, const char *name) {
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

FileLock::FileLock(const std::string &path, bool blocking)
    : fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
  if (!fd)
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
