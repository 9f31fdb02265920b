//===- TensorMapTest.cpp - TMA descriptor arguments and their cache -------===//
//
// What the runtime hands cuTensorMapEncodeTiled for a kernel's tensor-map
// parameter (dimensions innermost first, strides in bytes, the box, 128-byte
// swizzle, zeros out of bounds, L2 promotion of 128 bytes), which arrays it
// refuses, the bounded cache of encoded maps, and the fake driver's entry
// point (the real one is checked on a GPU: test_tma.py).
//
//===----------------------------------------------------------------------===//

#include "runtime/TensorMap.h"
#include "runtime/CudaDriver.h"

#include <gtest/gtest.h>

#ifdef TILE_HAVE_CUDA_H
#include <cuda.h>
#endif

using namespace tile::runtime;

namespace {

TensorMapParam param(uint32_t array, std::vector<uint32_t> box,
                     TmaDataType type = TmaDataType::Float16,
                     uint32_t swizzle = 128) {
  TensorMapParam p;
  p.array = array;
  p.box = std::move(box);
  p.dataType = type;
  p.swizzle = swizzle;
  return p;
}

} // namespace

TEST(TensorMap, ParamText) {
  TensorMapParam p = param(2, {128, 64});
  EXPECT_EQ(p.str(), "array=2;box=128x64;type=f16;swizzle=128");
  EXPECT_EQ(TensorMapParam::parse(p.str()), p);
  TensorMapParam q = param(0, {1, 64, 32}, TmaDataType::BFloat16, 64);
  EXPECT_EQ(TensorMapParam::parse(q.str()), q);
  for (const char *bad : {"", "array=0", "array=0;box=;type=f16;swizzle=128",
                          "array=0;box=128x64;type=f17;swizzle=128",
                          "array=0;box=128x64;type=f16;swizzle=48",
                          "array=0;box=1x1x1x1x1x1;type=f16;swizzle=0",
                          "array=-1;box=128x64;type=f16;swizzle=128",
                          "box=128x64;array=0;type=f16;swizzle=128"})
    EXPECT_FALSE(TensorMapParam::parse(bad)) << bad;
}

// A (200 x 136) f16 row-major array read by 128 x 64 boxes: the driver's
// dimension 0 is the array's last (136 elements, 272-byte rows).
TEST(TensorMap, EncodingOfARowMajorOperand) {
  int64_t extents[] = {200, 136}, strides[] = {136, 1};
  auto e = tensorMapEncoding(param(0, {128, 64}), 0x10000, extents, strides);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->dataType, 6u); // CU_TENSOR_MAP_DATA_TYPE_FLOAT16
  EXPECT_EQ(e->rank, 2u);
  EXPECT_EQ(e->address, 0x10000u);
  EXPECT_EQ(e->globalDim[0], 136u);
  EXPECT_EQ(e->globalDim[1], 200u);
  EXPECT_EQ(e->globalStrides[0], 272u);
  EXPECT_EQ(e->boxDim[0], 64u);
  EXPECT_EQ(e->boxDim[1], 128u);
  EXPECT_EQ(e->elementStrides[0], 1u);
  EXPECT_EQ(e->elementStrides[1], 1u);
  EXPECT_EQ(e->interleave, 0u);  // none
  EXPECT_EQ(e->swizzle, 3u);     // 128B
  EXPECT_EQ(e->l2Promotion, 2u); // 128B
  EXPECT_EQ(e->oobFill, 0u);     // zeros
}

// A padded (batch, K, N) bf16 array read by 1 x 64 x 64 boxes, 64-byte
// swizzle: strides in bytes of the driver's dimensions 1 and 2.
TEST(TensorMap, EncodingOfABatchedOperand) {
  int64_t extents[] = {8, 520, 100}, strides[] = {520 * 104, 104, 1};
  auto e = tensorMapEncoding(param(1, {1, 64, 64}, TmaDataType::BFloat16, 64),
                             0x20000, extents, strides);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->dataType, 9u); // BFLOAT16
  EXPECT_EQ(e->rank, 3u);
  EXPECT_EQ(e->globalDim[0], 100u);
  EXPECT_EQ(e->globalDim[1], 520u);
  EXPECT_EQ(e->globalDim[2], 8u);
  EXPECT_EQ(e->globalStrides[0], 208u);
  EXPECT_EQ(e->globalStrides[1], 520u * 208u);
  EXPECT_EQ(e->boxDim[0], 64u);
  EXPECT_EQ(e->boxDim[1], 64u);
  EXPECT_EQ(e->boxDim[2], 1u);
  EXPECT_EQ(e->swizzle, 2u); // 64B
}

// What TMA cannot take is refused with a reason (the specialization key
// keeps such arrays on the cp.async binary; this is the launch's own check).
TEST(TensorMap, RefusedArrays) {
  struct Case {
    uint64_t address;
    std::vector<int64_t> extents, strides;
    const char *why;
  } cases[] = {
      {0x10008, {64, 64}, {64, 1}, "not 16-byte aligned"},
      {0x10000, {64, 64}, {1, 64}, "inner stride is 64"}, // a transpose
      {0x10000, {64, 64}, {65, 1}, "stride 0 is 65"},     // 130-byte rows
      {0x10000, {64, 64}, {0, 1}, "stride 0 is 0"},       // broadcast rows
      {0x10000, {64, 64}, {-64, 1}, "stride 0 is -64"},   // reversed rows
      {0x10000, {0, 64}, {64, 1}, "extent 0 is 0"},
      {0x10000, {1, 1, 1, 1, 1, 8}, {8, 8, 8, 8, 8, 1}, "rank 6"},
  };
  for (const Case &c : cases) {
    std::string why;
    EXPECT_FALSE(tmaCanDescribe(c.address, c.extents.size(), c.extents.data(),
                                c.strides.data(), 2, &why))
        << c.why;
    EXPECT_NE(why.find(c.why), std::string::npos) << why;
    std::vector<uint32_t> box(c.extents.size(), 1);
    box.back() = 64;
    EXPECT_FALSE(tensorMapEncoding(param(0, box), c.address, c.extents.data(),
                                   c.strides.data()));
  }
  int64_t extents[] = {64, 64}, strides[] = {64, 1};
  EXPECT_TRUE(tmaCanDescribe(0x10000, 2, extents, strides, 2));
}

TEST(TensorMap, CacheHitsMissesAndEviction) {
  TensorMapCache cache(2);
  int calls = 0;
  auto encode = [&](TensorMapBytes &map, const TensorMapEncoding &e) {
    ++calls;
    map.words[0] = e.address;
    return 0;
  };
  int64_t extents[] = {256, 256}, strides[] = {256, 1};
  auto at = [&](uint64_t address) {
    return *tensorMapEncoding(param(0, {128, 64}), address, extents, strides);
  };
  TensorMapBytes out;
  EXPECT_EQ(cache.get(at(0x1000), encode, out), 0);
  EXPECT_EQ(out.words[0], 0x1000u);
  EXPECT_EQ(cache.get(at(0x1000), encode, out), 0);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(cache.hits(), 1u);
  // Another box of the same array is another map.
  auto other = *tensorMapEncoding(param(0, {64, 64}), 0x1000, extents, strides);
  EXPECT_EQ(cache.get(other, encode, out), 0);
  EXPECT_EQ(calls, 2);
  // A third map evicts the least recently used (0x1000's 128 x 64).
  EXPECT_EQ(cache.get(at(0x2000), encode, out), 0);
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.get(other, encode, out), 0);
  EXPECT_EQ(calls, 3);
  EXPECT_EQ(cache.get(at(0x1000), encode, out), 0);
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(out.words[0], 0x1000u);
  EXPECT_EQ(cache.misses(), 4u);
}

TEST(TensorMap, FailedEncodingsAreNotCached) {
  TensorMapCache cache;
  int calls = 0;
  auto fail = [&](TensorMapBytes &, const TensorMapEncoding &) {
    ++calls;
    return 1;
  };
  int64_t extents[] = {256, 256}, strides[] = {256, 1};
  auto e = *tensorMapEncoding(param(0, {128, 64}), 0x1000, extents, strides);
  TensorMapBytes out;
  EXPECT_EQ(cache.get(e, fail, out), 1);
  EXPECT_EQ(cache.get(e, fail, out), 1);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(cache.size(), 0u);
}

// Through the driver's entry point (the fake checks the documented limits
// and writes the address into the map's first word).
TEST(TensorMap, EncodesThroughTheDriver) {
  CudaDriver driver(TILE_FAKE_CUDA);
  int64_t extents[] = {200, 136}, strides[] = {136, 1};
  auto e = tensorMapEncoding(param(0, {128, 64}), 0x10000, extents, strides);
  ASSERT_TRUE(e);
  TensorMapBytes map;
  EXPECT_EQ(driver.encodeTensorMap(map, *e), 0);
  EXPECT_EQ(map.words[0], 0x10000u);
  // A box above 256 elements: the driver refuses it.
  TensorMapEncoding big = *e;
  big.boxDim[1] = 512;
  EXPECT_NE(driver.encodeTensorMap(map, big), 0);
  // An old driver without the entry point.
  CudaDriver old(TILE_FAKE_CUDA_MINIMAL);
  EXPECT_EQ(old.encodeTensorMap(map, *e), -1);
}

#ifdef TILE_HAVE_CUDA_H
TEST(TensorMap, ValuesMatchCudaH) {
  static_assert(sizeof(TensorMapBytes) == sizeof(CUtensorMap));
  static_assert(alignof(TensorMapBytes) >= 64); // the driver's minimum
  static_assert(unsigned(TmaDataType::UInt8) == CU_TENSOR_MAP_DATA_TYPE_UINT8);
  static_assert(unsigned(TmaDataType::UInt16) ==
                CU_TENSOR_MAP_DATA_TYPE_UINT16);
  static_assert(unsigned(TmaDataType::UInt32) ==
                CU_TENSOR_MAP_DATA_TYPE_UINT32);
  static_assert(unsigned(TmaDataType::Int32) == CU_TENSOR_MAP_DATA_TYPE_INT32);
  static_assert(unsigned(TmaDataType::UInt64) ==
                CU_TENSOR_MAP_DATA_TYPE_UINT64);
  static_assert(unsigned(TmaDataType::Int64) == CU_TENSOR_MAP_DATA_TYPE_INT64);
  static_assert(unsigned(TmaDataType::Float16) ==
                CU_TENSOR_MAP_DATA_TYPE_FLOAT16);
  static_assert(unsigned(TmaDataType::Float32) ==
                CU_TENSOR_MAP_DATA_TYPE_FLOAT32);
  static_assert(unsigned(TmaDataType::Float64) ==
                CU_TENSOR_MAP_DATA_TYPE_FLOAT64);
  static_assert(unsigned(TmaDataType::BFloat16) ==
                CU_TENSOR_MAP_DATA_TYPE_BFLOAT16);
  static_assert(CU_TENSOR_MAP_SWIZZLE_128B == 3 &&
                CU_TENSOR_MAP_SWIZZLE_64B == 2 &&
                CU_TENSOR_MAP_SWIZZLE_32B == 1);
  static_assert(CU_TENSOR_MAP_L2_PROMOTION_L2_128B == 2);
  static_assert(CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE == 0);
  static_assert(CU_TENSOR_MAP_INTERLEAVE_NONE == 0);
}
#endif
