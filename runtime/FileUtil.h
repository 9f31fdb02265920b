//===- FileUtil.h - POSIX file helpers for the disk cache -------*- C++ -*-===//
//
// Small wrappers that make the cache's crash- and race-safety visible: files
// are read through a directory descriptor (a consistent snapshot of one
// entry), written whole, and published only by rename.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_RUNTIME_FILEUTIL_H
#define TILE_RUNTIME_FILEUTIL_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tile::runtime::fs {

/// An owned file descriptor.
class Fd {
public:
  Fd() = default;
  explicit Fd(int fd) : fd(fd) {}
  Fd(Fd &&o) noexcept : fd(o.release()) {}
  Fd &operator=(Fd &&o) noexcept;
  ~Fd();
  int get() const { return fd; }
  explicit operator bool() const { return fd >= 0; }
  int release() {
    int f = fd;
    fd = -1;
    return f;
  }

private:
  int fd = -1;
};

Fd openDir(const std::string &path);
Fd openDirAt(int dirfd, const char *name);
/// The whole file, or nullopt when missing, unreadable or above `maxSize`.
std::optional<std::string> readAt(int dirfd, const char *name,
                                  uint64_t maxSize);
std::optional<std::string> readFile(const std::string &path, uint64_t maxSize);
/// Creates `name` (which must not exist) and writes all of `data`.
bool writeNewAt(int dirfd, const char *name, std::string_view data);
/// Writes `path` via a temporary file beside it and rename: readers see the
/// old or the new content, never a mix.
bool replaceFile(const std::string &path, std::string_view data);
/// `mkdir -p`.
bool makeDirs(const std::string &path);
/// Deletes a file or a directory tree; missing is fine.
void removeTree(const std::string &path);
/// A name part no other process or thread will produce.
std::string uniqueToken();
/// Wall-clock nanoseconds (finer than file timestamps the kernel stamps).
int64_t nowNs();
/// Sets a path's access and modification time to `ns` since the epoch.
bool setTimes(int fd, int64_t ns);

/// An advisory lock (flock) held on a lock file for a scope.
class FileLock {
public:
  FileLock(const std::string &path, bool blocking);
  bool held() const { return locked; }
  ~FileLock();

private:
  Fd fd;
  bool locked = false;
};

} // namespace tile::runtime::fs

#endif
