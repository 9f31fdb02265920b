//===- BuildInfo.cpp - who compiled this binary ---------------------------===//

#include "runtime/BuildInfo.h"

#include <cstdint>
#include <dlfcn.h>
#include <sys/stat.h>

#ifndef TILE_VERSION
#define TILE_VERSION "unknown"
#endif
#ifndef TILE_GIT_HASH
#define TILE_GIT_HASH "unknown"
#endif

const std::string &tile::runtime::buildIdentity() {
  static const std::string id = [] {
    std::string s = "tile " TILE_VERSION " " TILE_GIT_HASH;
    // The configure-time hash misses rebuilds of uncommitted changes; the
    // binary's own size and timestamp do not.
    Dl_info info;
    struct stat st;
    if (dladdr(reinterpret_cast<void *>(&buildIdentity), &info) &&
        info.dli_fname && ::stat(info.dli_fname, &st) == 0)
      s += " " + std::string(info.dli_fname) + ":" +
           std::to_string(st.st_size) + ":" +
           std::to_string(int64_t(st.st_mtim.tv_sec) * 1000000000 +
                          st.st_mtim.tv_nsec);
    return s;
  }();
  return id;
}
