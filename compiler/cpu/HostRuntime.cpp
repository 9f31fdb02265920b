//===- HostRuntime.cpp - functions JIT-compiled kernels call --------------===//
//
// Blocks run on several threads at once: a print assembles its line in a
// per-thread buffer and writes it whole, so lines of different blocks never
// mix.
//
//===----------------------------------------------------------------------===//
#include "compiler/cpu/HostRuntime.h"

#include <charconv>
#include <cmath>
#include <limits>
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

/// IEEE half bits of `v`, rounded to nearest even.
uint16_t toHalfBits(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  uint16_t sign = (bits >> 48) & 0x8000;
  int64_t exp = (bits >> 52) & 0x7ff;
  uint64_t mant = bits & ((uint64_t(1) << 52) - 1);
  if (exp == 0x7ff)
    return sign | 0x7c00 | (mant ? 0x200 : 0);
  if (exp == 0)
    return sign; // double subnormals are far below half's range
  int64_t e = exp - 1023;
  if (e > 15)
    return sign | 0x7c00;
  uint64_t sig = mant | (uint64_t(1) << 52);
  int64_t shift = 42; // 52 fraction bits down to 10
  uint16_t hexp = 0;
  if (e >= -14)
    hexp = static_cast<uint16_t>(e + 15);
  else
    shift += -14 - e; // subnormal: the implicit bit moves into the fraction
  if (shift > 63)
    return sign;
  uint64_t kept = sig >> shift, rest = sig & ((uint64_t(1) << shift) - 1);
  uint64_t halfway = uint64_t(1) << (shift - 1);
  if (rest > halfway || (rest == halfway && (kept & 1)))
    ++kept;
  if (hexp == 0)
    return sign | static_cast<uint16_t>(kept); // may round up to the min normal
  if (kept >> 11) {
    kept >>= 1;
    ++hexp;
  }
  if (hexp >= 31)
    return sign | 0x7c00;
  return sign | (hexp << 10) | (kept & 0x3ff);
}

double fromHalfBits(uint16_t h) {
  double sign = (h & 0x8000) ? -1.0 : 1.0;
  int exp = (h >> 10) & 0x1f;
  int mant = h & 0x3ff;
  if (exp == 0x1f)
    return mant ? std::numeric_limits<double>::quiet_NaN()
                : sign * std::numeric_limits<double>::infinity();
  if (exp == 0)
    return sign * std::ldexp(mant, -24);
  return sign * std::ldexp(mant + 1024, exp - 25);
}

/// bfloat16 bits of `v`, rounded to nearest even.
uint16_t toBFloatBits(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  if ((bits & 0x7fffffff) > 0x7f800000)
    return static_cast<uint16_t>((bits >> 16) | 0x40); // quiet NaN
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

/// tile.atomic_cas on one element: returns the old value.
template <typename T> T tileCas(int64_t address, T cmp, T value) {
  T *p = reinterpret_cast<T *>(address);
  __atomic_compare_exchange_n(p, &cmp, value, /*weak=*/false,
                              __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
  return cmp; // on failure, the value found
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

static int16_t tileCas16(int64_t a, int16_t c, int16_t v) {
  return tileCas(a, c, v);
}
static int32_t tileCas32(int64_t a, int32_t c, int32_t v) {
  return tileCas(a, c, v);
}
static int64_t tileCas64(int64_t a, int64_t c, int64_t v) {
  return tileCas(a, c, v);
}

// Soft-float conversions LLVM calls where the target lacks instructions
// (f16 fma goes through f64). x86-64 passes half and bfloat16 in the low 16
// bits of an XMM register, as the low bits of a float here.
static float halfInXmm(uint16_t bits) {
  uint32_t word = bits;
  float f;
  std::memcpy(&f, &word, sizeof(f));
  return f;
}
static uint16_t halfFromXmm(float f) {
  uint32_t word;
  std::memcpy(&word, &f, sizeof(word));
  return static_cast<uint16_t>(word);
}

static float tileTruncDfHf(double v) { return halfInXmm(toHalfBits(v)); }
static float tileTruncSfHf(float v) { return halfInXmm(toHalfBits(v)); }
static float tileExtendHfSf(float h) {
  return static_cast<float>(fromHalfBits(halfFromXmm(h)));
}
static double tileExtendHfDf(float h) { return fromHalfBits(halfFromXmm(h)); }
static float tileTruncSfBf(float v) { return halfInXmm(toBFloatBits(v)); }
static float tileTruncDfBf(double v) {
  return halfInXmm(toBFloatBits(static_cast<float>(v)));
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
  add("__tile_cas_16", &tileCas16);
  add("__tile_cas_32", &tileCas32);
  add("__tile_cas_64", &tileCas64);
  add("__truncdfhf2", &tileTruncDfHf);
  add("__truncsfhf2", &tileTruncSfHf);
  add("__extendhfsf2", &tileExtendHfSf);
  add("__extendhfdf2", &tileExtendHfDf);
  add("__truncsfbf2", &tileTruncSfBf);
  add("__truncdfbf2", &tileTruncDfBf);
  return symbols;
}
