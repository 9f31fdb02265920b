//===- HostRuntime.cpp - functions JIT-compiled kernels call --------------===//
//
// Blocks run on several threads at once: a print assembles its line in a
// per-thread buffer and writes it whole, so lines of different blocks never
// mix.
//
//===----------------------------------------------------------------------===//
#include "compiler/cpu/HostRuntime.h"

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {

thread_local std::string printLine;
std::mutex outputMutex;

template <typename T> void appendShortest(T value) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), value);
  if (ec == std::errc())
    printLine.append(buf, end);
}

/// Ranked memref descriptors as MLIR lays them out, behind an unranked one.
struct UnrankedDescriptor {
  int64_t rank;
  void *descriptor;
};
struct StridedView {
  char *data;
  const int64_t *sizes, *strides;
};

StridedView view(const UnrankedDescriptor *d, int64_t elemSize) {
  auto *fields = static_cast<int64_t *>(d->descriptor);
  char *aligned = reinterpret_cast<char *>(fields[1]);
  return {aligned + fields[2] * elemSize, fields + 3, fields + 3 + d->rank};
}

} // namespace

extern "C" {

static void tilePrintBegin(int32_t x, int32_t y, int32_t z) {
  printLine = "pid (" + std::to_string(x) + ", " + std::to_string(y) + ", " +
              std::to_string(z) + ") ";
}
static void tilePrintStr(const char *s) { printLine += s; }
static void tilePrintI64(int64_t v) { printLine += std::to_string(v); }
static void tilePrintF32(float v) { appendShortest(v); }
static void tilePrintF64(double v) { appendShortest(v); }
static void tilePrintEnd() {
  printLine.push_back('\n');
  std::lock_guard<std::mutex> lock(outputMutex);
  std::fwrite(printLine.data(), 1, printLine.size(), stdout);
  std::fflush(stdout);
}

static void tileAssertFail(const char *message, int32_t x, int32_t y,
                           int32_t z) {
  {
    std::lock_guard<std::mutex> lock(outputMutex);
    std::fflush(stdout);
    std::fprintf(stderr, "tile: assertion failed in block (%d, %d, %d): %s\n",
                 x, y, z, message);
    std::fflush(stderr);
  }
  std::abort();
}

/// memref.copy between non-contiguous buffers: row by row, with memcpy
/// where both rows are contiguous.
static void tileMemrefCopy(int64_t elemSize, UnrankedDescriptor *src,
                           UnrankedDescriptor *dst) {
  int64_t rank = src->rank;
  StridedView s = view(src, elemSize), d = view(dst, elemSize);
  if (rank == 0) {
    std::memcpy(d.data, s.data, elemSize);
    return;
  }
  for (int64_t i = 0; i < rank; ++i)
    if (s.sizes[i] == 0)
      return;
  int64_t inner = s.sizes[rank - 1];
  int64_t sInner = s.strides[rank - 1] * elemSize;
  int64_t dInner = d.strides[rank - 1] * elemSize;
  bool contiguous = sInner == elemSize && dInner == elemSize;
  std::vector<int64_t> index(rank, 0);
  char *sp = s.data, *dp = d.data;
  for (;;) {
    if (contiguous) {
      std::memcpy(dp, sp, inner * elemSize);
    } else {
      for (int64_t i = 0; i < inner; ++i)
        std::memcpy(dp + i * dInner, sp + i * sInner, elemSize);
    }
    // Advance the outer indices like an odometer.
    int64_t dim = rank - 2;
    for (; dim >= 0; --dim) {
      sp += s.strides[dim] * elemSize;
      dp += d.strides[dim] * elemSize;
      if (++index[dim] < s.sizes[dim])
        break;
      sp -= s.strides[dim] * elemSize * s.sizes[dim];
      dp -= d.strides[dim] * elemSize * s.sizes[dim];
      index[dim] = 0;
    }
    if (dim < 0)
      return;
  }
}

} // extern "C"

llvm::orc::SymbolMap
mlir::tile::getHostRuntimeSymbols(llvm::orc::MangleAndInterner mangle) {
  llvm::orc::SymbolMap symbols;
  auto add = [&](const char *name, auto *fn) {
    symbols[mangle(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                             llvm::JITSymbolFlags::Exported};
  };
  add("__tile_print_begin", &tilePrintBegin);
  add("__tile_print_str", &tilePrintStr);
  add("__tile_print_i64", &tilePrintI64);
  add("__tile_print_f32", &tilePrintF32);
  add("__tile_print_f64", &tilePrintF64);
  add("__tile_print_end", &tilePrintEnd);
  add("__tile_assert_fail", &tileAssertFail);
  add("memrefCopy", &tileMemrefCopy);
  return symbols;
}
