//===- DirFd.h - file access relative to directory descriptors --*- C++ -*-===//
//
// The disk cache's crash-, race- and tamper-safety rests on what POSIX's
// *at() calls give and llvm::sys::fs, which works on path names, does not:
// every file of an entry is opened relative to one descriptor of its
// directory without following symbolic links (O_NOFOLLOW, O_NONBLOCK against
// planted FIFOs), and published or removed by renameat/unlinkat in it. The
// rest goes through LLVM: file status (sys::fs::status on a descriptor),
// reading (sys::fs::readNativeFile), time stamps, `mkdir -p`
// (sys::fs::create_directories), random bytes (llvm::getRandomBytes).
//
// Not LLVM's on purpose: sys::fs::lockFile takes fcntl record locks, which
// are per process (two threads of one process both "hold" them) and do not
// exclude the flock(2) that `python -m tile.cache` takes on the same lock
// file, so FileLock keeps flock. sys::fs::TempFile installs signal handlers
// (RemoveFileOnSignal) in the host Python process, and publishes files, not
// the entry directories the cache renames into place.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_RUNTIME_DIRFD_H
#define TILE_RUNTIME_DIRFD_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tile::runtime::fs {

using llvm::sys::fs::file_status;

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
bool isTrusted(const file_status &st);
/// Why `st` is not trusted ("owned by uid 1234", "writable by group or
/// others (mode 0775)"), or "" when it is.
std::string distrustReason(const file_status &st);
/// Owned by this user with no access at all for group and others.
bool isPrivate(const file_status &st);

/// The status of an open descriptor, or nullopt.
std::optional<file_status> statusOf(int fd);
/// The status of `name` in `dirfd` itself (a symbolic link is not followed),
/// or nullopt when it is missing.
std::optional<file_status> statusAt(int dirfd, const char *name);

/// Opens a directory, following symbolic links (the user's own path).
Fd openDir(const std::string &path);
/// Opens the directory `name` in `dirfd`; a symbolic link is not followed.
Fd openDirAt(int dirfd, const char *name);
/// The names in the directory `dirfd`, without "." and "..".
std::vector<std::string> listAt(int dirfd);
/// What a file must be, besides regular, for readAt to return it.
enum class Require {
  Nothing,
  Trusted, // isTrusted
  Private, // isPrivate
};
/// The whole regular file `name` in `dirfd` (never through a symbolic link,
/// never blocking on a FIFO), or nullopt when missing, unreadable, above
/// `maxSize` (checked before reading) or not what `require` asks.
std::optional<std::string> readAt(int dirfd, const char *name, uint64_t maxSize,
                                  Require require = Require::Nothing);
/// Creates `name` (which must not exist) 0600 and writes all of `data`.
bool writeNewAt(int dirfd, const char *name, llvm::StringRef data);
/// Writes `name` in `dirfd` via a temporary file beside it and rename:
/// readers see the old or the new content, never a mix.
bool replaceFileAt(int dirfd, const char *name, llvm::StringRef data);
/// `mkdir -p`, creating missing directories 0700; whether `path` is now a
/// directory.
bool makeDirs(const std::string &path);
/// Deletes the file or directory tree `name` in `dirfd` without following
/// symbolic links (a link is removed, not its target); missing is fine.
void removeTreeAt(int dirfd, const char *name);
void removeTree(const std::string &path);
/// A name part no other process or thread will produce.
std::string uniqueToken();
/// `n` bytes from the kernel's random source, or nullopt.
std::optional<std::string> randomBytes(size_t n);
/// Wall-clock nanoseconds since the epoch (finer than file time stamps).
int64_t nowNs();
/// Sets an open file's access and modification time to `ns` since the epoch.
bool setTimes(int fd, int64_t ns);
/// The modification time of `st` in nanoseconds since the epoch.
int64_t mtimeNs(const file_status &st);

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
