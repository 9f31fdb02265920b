//===- TensorMap.cpp - TMA descriptors of kernel array arguments ----------===//

#include "runtime/TensorMap.h"

#include <cstring>

using namespace tile::runtime;

namespace {

struct TypeName {
  TmaDataType type;
  const char *name;
  unsigned bytes;
};

constexpr TypeName kTypes[] = {
    {TmaDataType::UInt8, "u8", 1},    {TmaDataType::UInt16, "u16", 2},
    {TmaDataType::UInt32, "u32", 4},  {TmaDataType::Int32, "i32", 4},
    {TmaDataType::UInt64, "u64", 8},  {TmaDataType::Int64, "i64", 8},
    {TmaDataType::Float16, "f16", 2}, {TmaDataType::Float32, "f32", 4},
    {TmaDataType::Float64, "f64", 8}, {TmaDataType::BFloat16, "bf16", 2},
};

const TypeName *typeName(TmaDataType type) {
  for (const TypeName &t : kTypes)
    if (t.type == type)
      return &t;
  return nullptr;
}

/// Parses a decimal number that fits in uint32_t.
std::optional<uint32_t> parseU32(std::string_view text) {
  if (text.empty() || text.size() > 10)
    return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return std::nullopt;
    v = v * 10 + uint64_t(c - '0');
  }
  if (v > UINT32_MAX)
    return std::nullopt;
  return uint32_t(v);
}

// cuda.h's CUtensorMapSwizzle and CUtensorMapL2promotion values.
constexpr uint32_t kSwizzleNone = 0, kSwizzle32 = 1, kSwizzle64 = 2,
                   kSwizzle128 = 3;
constexpr uint32_t kL2Promotion128 = 2;

} // namespace

unsigned tile::runtime::tmaElementBytes(TmaDataType type) {
  const TypeName *t = typeName(type);
  return t ? t->bytes : 0;
}

std::optional<TmaDataType>
TensorMapParam::parseDataType(std::string_view name) {
  for (const TypeName &t : kTypes)
    if (name == t.name)
      return t.type;
  return std::nullopt;
}

std::string TensorMapParam::str() const {
  std::string text = "array=" + std::to_string(array) + ";box=";
  for (size_t i = 0; i < box.size(); ++i)
    text += (i ? "x" : "") + std::to_string(box[i]);
  const TypeName *t = typeName(dataType);
  text += std::string(";type=") + (t ? t->name : "?");
  text += ";swizzle=" + std::to_string(swizzle);
  return text;
}

std::optional<TensorMapParam> TensorMapParam::parse(std::string_view text) {
  TensorMapParam p;
  const char *keys[] = {"array=", "box=", "type=", "swizzle="};
  for (int k = 0; k < 4; ++k) {
    std::string_view key = keys[k];
    if (text.substr(0, key.size()) != key)
      return std::nullopt;
    text.remove_prefix(key.size());
    size_t end = k < 3 ? text.find(';') : text.size();
    if (end == std::string_view::npos)
      return std::nullopt;
    std::string_view value = text.substr(0, end);
    text.remove_prefix(k < 3 ? end + 1 : end);
    if (k == 0 || k == 3) {
      std::optional<uint32_t> v = parseU32(value);
      if (!v)
        return std::nullopt;
      (k == 0 ? p.array : p.swizzle) = *v;
    } else if (k == 1) {
      while (true) {
        size_t x = value.find('x');
        std::optional<uint32_t> v = parseU32(value.substr(0, x));
        if (!v)
          return std::nullopt;
        p.box.push_back(*v);
        if (x == std::string_view::npos)
          break;
        value.remove_prefix(x + 1);
      }
    } else {
      std::optional<TmaDataType> t = parseDataType(value);
      if (!t)
        return std::nullopt;
      p.dataType = *t;
    }
  }
  if (p.box.empty() || p.box.size() > 5 ||
      (p.swizzle != 0 && p.swizzle != 32 && p.swizzle != 64 &&
       p.swizzle != 128))
    return std::nullopt;
  return p;
}

bool TensorMapEncoding::operator==(const TensorMapEncoding &o) const {
  return std::memcmp(this, &o, sizeof(*this)) == 0;
}

size_t TensorMapEncoding::hash() const {
  // FNV-1a over the bytes: the struct has no padding (the static_assert
  // below), so equal encodings hash alike.
  const auto *bytes = reinterpret_cast<const unsigned char *>(this);
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < sizeof(*this); ++i)
    h = (h ^ bytes[i]) * 1099511628211ull;
  return size_t(h);
}

static_assert(sizeof(TensorMapEncoding) ==
                  4 * 2 + 8 + 8 * 5 + 8 * 4 + 4 * 5 + 4 * 5 + 4 * 4,
              "TensorMapEncoding must have no padding: it is hashed and "
              "compared as bytes");

bool tile::runtime::tmaCanDescribe(uint64_t address, size_t rank,
                                   const int64_t *extents,
                                   const int64_t *strides,
                                   unsigned elementBytes, std::string *why) {
  auto no = [&](std::string reason) {
    if (why)
      *why = std::move(reason);
    return false;
  };
  if (rank < 1 || rank > 5)
    return no("its rank " + std::to_string(rank) + " is not 1 to 5");
  if (address % 16)
    return no("its base address is not 16-byte aligned");
  if (strides[rank - 1] != 1)
    return no("its inner stride is " + std::to_string(strides[rank - 1]) +
              ", not 1");
  for (size_t d = 0; d < rank; ++d) {
    if (extents[d] < 1 || uint64_t(extents[d]) > (uint64_t(1) << 32))
      return no("extent " + std::to_string(d) + " is " +
                std::to_string(extents[d]) + ", not 1 to 2^32");
    if (d + 1 == rank)
      continue;
    int64_t s = strides[d];
    if (s < 1 || uint64_t(s) >= (uint64_t(1) << 40) / elementBytes ||
        (uint64_t(s) * elementBytes) % 16)
      return no("stride " + std::to_string(d) + " is " + std::to_string(s) +
                " elements, not a positive multiple of 16 bytes below 2^40");
  }
  return true;
}

std::optional<TensorMapEncoding>
tile::runtime::tensorMapEncoding(const TensorMapParam &param, uint64_t address,
                                 const int64_t *extents, const int64_t *strides,
                                 std::string *why) {
  unsigned eb = tmaElementBytes(param.dataType);
  size_t rank = param.box.size();
  if (!eb || !tmaCanDescribe(address, rank, extents, strides, eb, why))
    return std::nullopt;
  TensorMapEncoding e;
  e.dataType = uint32_t(param.dataType);
  e.rank = uint32_t(rank);
  e.address = address;
  for (size_t i = 0; i < rank; ++i) {
    size_t d = rank - 1 - i; // the array's dimension of the driver's i
    e.globalDim[i] = uint64_t(extents[d]);
    if (i > 0)
      e.globalStrides[i - 1] = uint64_t(strides[d]) * eb;
    e.boxDim[i] = param.box[d];
    e.elementStrides[i] = 1;
  }
  switch (param.swizzle) {
  case 0:
    e.swizzle = kSwizzleNone;
    break;
  case 32:
    e.swizzle = kSwizzle32;
    break;
  case 64:
    e.swizzle = kSwizzle64;
    break;
  default:
    e.swizzle = kSwizzle128;
    break;
  }
  e.l2Promotion = kL2Promotion128;
  return e;
}

int TensorMapCache::get(const TensorMapEncoding &encoding,
                        const Encoder &encode, TensorMapBytes &out) {
  std::lock_guard<std::mutex> lock(mutex);
  auto it = index.find(encoding);
  if (it != index.end()) {
    lru.splice(lru.begin(), lru, it->second);
    out = it->second->second;
    ++hitCount;
    return 0;
  }
  ++missCount;
  TensorMapBytes map;
  if (int result = encode(map, encoding))
    return result;
  if (capacity == 0) {
    out = map;
    return 0;
  }
  if (lru.size() >= capacity) {
    index.erase(lru.back().first);
    lru.pop_back();
  }
  lru.emplace_front(encoding, map);
  index.emplace(encoding, lru.begin());
  out = map;
  return 0;
}

size_t TensorMapCache::size() const {
  std::lock_guard<std::mutex> lock(mutex);
  return lru.size();
}

uint64_t TensorMapCache::hits() const {
  std::lock_guard<std::mutex> lock(mutex);
  return hitCount;
}

uint64_t TensorMapCache::misses() const {
  std::lock_guard<std::mutex> lock(mutex);
  return missCount;
}
