//===- TensorMap.h - TMA descriptors of kernel array arguments --*- C++ -*-===//
//
// A kernel compiled for TMA (sm_90) takes, after its other parameters, one
// 128-byte CUtensorMap per `tilegpu.tensor_map_of` argument
// (docs/internals.md section 3). The compiled kernel's metadata lists them
// as TensorMapParams; at each launch the runtime encodes each from the flat
// values of the array it names (base, extents, strides) through the driver's
// cuTensorMapEncodeTiled, and keeps the encoded maps in a small cache.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_RUNTIME_TENSORMAP_H
#define TILE_RUNTIME_TENSORMAP_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tile::runtime {

/// cuda.h's CUtensorMapDataType values of the element types tile moves.
enum class TmaDataType : uint32_t {
  UInt8 = 0,
  UInt16 = 1,
  UInt32 = 2,
  Int32 = 3,
  UInt64 = 4,
  Int64 = 5,
  Float16 = 6,
  Float32 = 7,
  Float64 = 8,
  BFloat16 = 9,
};

/// One tensor-map parameter as the compiler describes it.
struct TensorMapParam {
  uint32_t array = 0;        // signature index of the array parameter
  std::vector<uint32_t> box; // elements per dimension, the array's order
  TmaDataType dataType = TmaDataType::UInt8;
  uint32_t swizzle = 0; // bytes: 0, 32, 64 or 128

  /// "array=0;box=128x64;type=f16;swizzle=128" (the cache metadata).
  std::string str() const;
  static std::optional<TensorMapParam> parse(std::string_view text);
  /// "f16", "bf16", "f32", "f64", "u8", "u16", "u32", "i32", "u64", "i64".
  static std::optional<TmaDataType> parseDataType(std::string_view name);
  bool operator==(const TensorMapParam &o) const {
    return array == o.array && box == o.box && dataType == o.dataType &&
           swizzle == o.swizzle;
  }
};

/// Bytes of one element of `type`.
unsigned tmaElementBytes(TmaDataType type);

/// The arguments of cuTensorMapEncodeTiled, dimensions innermost first as
/// the driver numbers them (dimension 0 is the array's last).
struct TensorMapEncoding {
  uint32_t dataType = 0;
  uint32_t rank = 0;
  uint64_t address = 0;
  uint64_t globalDim[5] = {};
  uint64_t globalStrides[4] = {}; // bytes, of dimensions 1 .. rank-1
  uint32_t boxDim[5] = {};
  uint32_t elementStrides[5] = {};
  uint32_t interleave = 0;  // CU_TENSOR_MAP_INTERLEAVE_NONE
  uint32_t swizzle = 0;     // CUtensorMapSwizzle
  uint32_t l2Promotion = 0; // CUtensorMapL2promotion
  uint32_t oobFill = 0;     // CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: zeros

  bool operator==(const TensorMapEncoding &o) const;
  size_t hash() const;
};

/// Whether TMA can describe an array: base 16-byte aligned, rank 1 to 5,
/// inner stride 1, every other stride a positive multiple of 16 bytes below
/// 2^40, every extent 1 to 2^32. The launch's specialization key marks such
/// arrays (interop.TMA in Python, the tma bit of DispatchKey.cpp), so that a
/// TMA binary is only ever chosen for them.
bool tmaCanDescribe(uint64_t address, size_t rank, const int64_t *extents,
                    const int64_t *strides, unsigned elementBytes,
                    std::string *why = nullptr);

/// The encoding of `param` for an array at `address` with `extents` and
/// `strides` (in elements, the array's order): 128-byte swizzle as the
/// param asks, zeros out of bounds, L2 promotion of 128 bytes. nullopt
/// (and why) when TMA cannot describe the array.
std::optional<TensorMapEncoding> tensorMapEncoding(const TensorMapParam &param,
                                                   uint64_t address,
                                                   const int64_t *extents,
                                                   const int64_t *strides,
                                                   std::string *why = nullptr);

/// A CUtensorMap: 128 opaque bytes, 64-byte aligned.
struct alignas(64) TensorMapBytes {
  uint64_t words[16] = {};
};

/// Encoded maps by their encoding, at most `capacity`, least recently used
/// out first. Thread-safe.
class TensorMapCache {
public:
  /// Encodes a map (a CUresult: 0 on success).
  using Encoder =
      std::function<int(TensorMapBytes &, const TensorMapEncoding &)>;

  explicit TensorMapCache(size_t capacity = 128) : capacity(capacity) {}

  /// Writes the map of `encoding` into `out`, through `encode` on a miss;
  /// returns encode's result (a failed encoding is not cached).
  int get(const TensorMapEncoding &encoding, const Encoder &encode,
          TensorMapBytes &out);

  size_t size() const;
  uint64_t hits() const;
  uint64_t misses() const;

private:
  struct Hash {
    size_t operator()(const TensorMapEncoding &e) const { return e.hash(); }
  };
  using Lru = std::list<std::pair<TensorMapEncoding, TensorMapBytes>>;
  size_t capacity;
  mutable std::mutex mutex;
  Lru lru; // most recently used first
  std::unordered_map<TensorMapEncoding, Lru::iterator, Hash> index;
  uint64_t hitCount = 0, missCount = 0;
};

} // namespace tile::runtime

#endif
