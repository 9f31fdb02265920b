//===- FileUtil.h - POSIX file helpers for the disk cache -------*- C++ -*-===//
//
// Small wrappers that make the cache's crash-, race- and tamper-safety
// visible: everything is opened relative to a directory descriptor without
// following symbolic links, files are read only when they are regular, owned
// by this user and not writable by anybody else, written whole and private
// (0600, directories 0700), and published only by rename.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_RUNTIME_FILEUTIL_H
#define TILE_RUNTIME_FILEUTIL_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

struct stat;

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

/// Whether a file or directory can be trusted: owned by this user (or root)
/// and not writable by group or others, as ssh's StrictModes asks.
bool isTrusted(const struct stat &st);
/// Why `st` is not trusted ("owned by uid 1234", "writable by group or
/// others (mode 0775)"), or "" when it is.
std::string distrustReason(const struct stat &st);

/// Opens a directory, following symbolic links (the user's own path).
Fd openDir(const std::string &path);
/// Opens the directory `name` in `dirfd`; a symbolic link is not followed.
Fd openDirAt(int dirfd, const char *name);
/// What a file must be, besides regular, for readAt to return it.
enum class Require {
  Nothing,
  Trusted, // isTrusted
  Private, // owned by this user, no access at all for group and others
};
/// The whole regular file `name` in `dirfd` (never through a symbolic link,
/// never blocking on a FIFO), or nullopt when missing, unreadable, above
/// `maxSize` (checked before reading) or not what `require` asks.
std::optional<std::string> readAt(int dirfd, const char *name, uint64_t maxSize,
                                  Require require = Require::Nothing);
/// Creates `name` (which must not exist) 0600 and writes all of `data`.
bool writeNewAt(int dirfd, const char *name, std::string_view data);
/// Writes `name` in `dirfd` via a temporary file beside it and rename:
/// readers see the old or the new content, never a mix.
bool replaceFileAt(int dirfd, const char *name, std::string_view data);
/// `mkdir -p`, creating missing directories 0700.
bool makeDirs(const std::string &path);
/// Deletes the file or directory tree `name` in `dirfd` without following
/// symbolic links (a link is removed, not its target); missing is fine.
void removeTreeAt(int dirfd, const char *name);
void removeTree(const std::string &path);
/// A name part no other process or thread will produce.
std::string uniqueToken();
/// `n` bytes from the kernel's random source, or nullopt.
std::optional<std::string> randomBytes(size_t n);
/// Wall-clock nanoseconds (finer than file timestamps the kernel stamps).
int64_t nowNs();
/// Sets a path's access and modification time to `ns` since the epoch.
bool setTimes(int fd, int64_t ns);
/// The modification time of `st` in nanoseconds.
int64_t mtimeNs(const struct stat &st);

/// An advisory lock (flock) held on the lock file `name` in `dirfd` for a
/// scope. The file is created 0600 and never through a symbolic link.
class FileLock {
public:
  FileLock(int dirfd, const char *name, bool blocking);
  bool held() const { return locked; }
  ~FileLock();

private:
  Fd fd;
  bool locked = false;
};

} // namespace tile::runtime::fs

#endif
