//===- ArgPackTest.cpp - kernel parameter layout (internals.md s3) -------===//

#include "runtime/ArgPack.h"

#include <cstring>
#include <gtest/gtest.h>

using namespace tile::runtime;

template <typename T> static T cellAs(const PackedArgs &p, size_t i) {
  T v;
  std::memcpy(&v, p.cell(i), sizeof(T));
  return v;
}

TEST(ArgPack, ParamText) {
  for (const char *text : {"ptr", "i32", "i64", "f32", "f64", "array:0",
                           "array:1", "array:3"}) {
    auto p = Param::parse(text);
    ASSERT_TRUE(p) << text;
    EXPECT_EQ(p->str(), text);
  }
  for (const char *bad : {"", "i16", "array:", "array:x", "array:-1", "Ptr"})
    EXPECT_FALSE(Param::parse(bad)) << bad;
}

// An array is ptr, then i64 extents, then i64 strides; scalars keep their
// own width.
TEST(ArgPack, Layout) {
  ArgPlan plan({{Param::Array, 2}, {Param::I32}, {Param::F32},
                {Param::I64}, {Param::F64}, {Param::Ptr}});
  ASSERT_EQ(plan.size(), 10u);
  const SlotKind expected[] = {SlotKind::Ptr, SlotKind::I64, SlotKind::I64,
                               SlotKind::I64, SlotKind::I64, SlotKind::I32,
                               SlotKind::F32, SlotKind::I64, SlotKind::F64,
                               SlotKind::Ptr};
  for (size_t i = 0; i < plan.size(); ++i)
    EXPECT_EQ(plan.slot(i), expected[i]) << i;

  PackedArgs args(plan);
  args.setUInt(0, 0xffff800000001000ull); // a high device address
  args.setInt(1, 128);                    // extents
  args.setInt(2, 64);
  args.setInt(3, 64); // strides, in elements
  args.setInt(4, 1);
  args.setInt(5, -7);
  args.setFloat(6, 1.5);
  args.setInt(7, int64_t(1) << 40);
  args.setFloat(8, 0.1);
  args.setInt(9, 0x1000);

  EXPECT_EQ(cellAs<uint64_t>(args, 0), 0xffff800000001000ull);
  EXPECT_EQ(cellAs<int64_t>(args, 1), 128);
  EXPECT_EQ(cellAs<int64_t>(args, 2), 64);
  EXPECT_EQ(cellAs<int64_t>(args, 3), 64);
  EXPECT_EQ(cellAs<int64_t>(args, 4), 1);
  EXPECT_EQ(cellAs<int32_t>(args, 5), -7);
  EXPECT_EQ(cellAs<float>(args, 6), 1.5f);
  EXPECT_EQ(cellAs<int64_t>(args, 7), int64_t(1) << 40);
  EXPECT_EQ(cellAs<double>(args, 8), 0.1);
  EXPECT_EQ(cellAs<uint64_t>(args, 9), 0x1000u);
  // The driver reads each parameter through its pointer.
  for (size_t i = 0; i < plan.size(); ++i)
    EXPECT_EQ(args.params()[i], args.cell(i));
}

TEST(ArgPack, IntConvertsToFloatSlot) {
  ArgPlan plan({{Param::F32}, {Param::F64}});
  PackedArgs args(plan);
  args.setInt(0, 3);
  args.setInt(1, -2);
  EXPECT_EQ(cellAs<float>(args, 0), 3.0f);
  EXPECT_EQ(cellAs<double>(args, 1), -2.0);
}

TEST(ArgPack, Errors) {
  ArgPlan plan({{Param::Array, 1}, {Param::I32}});
  PackedArgs args(plan);
  EXPECT_THROW(args.setInt(3, int64_t(1) << 31), ArgError);
  EXPECT_THROW(args.setInt(3, -(int64_t(1) << 31) - 1), ArgError);
  EXPECT_NO_THROW(args.setInt(3, -(int64_t(1) << 31)));
  EXPECT_THROW(args.setFloat(3, 1.0), ArgError);
  EXPECT_THROW(args.setFloat(0, 1.0), ArgError);
  EXPECT_THROW(args.setUInt(1, ~0ull), ArgError);
  try {
    args.setFloat(2, 2.0);
    FAIL();
  } catch (const ArgError &e) {
    EXPECT_NE(std::string(e.what()).find("stride 0 of array parameter 0"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(plan.describe(1), "argument 1 (extent 0 of array parameter 0)");
  EXPECT_EQ(plan.describe(3), "argument 3 (i32 parameter 1)");
}

// Past the inline capacity the cells move to the heap; layout is unchanged.
TEST(ArgPack, ManyParameters) {
  Signature sig(5, Param{Param::Array, 3}); // 5 * 7 = 35 slots
  ArgPlan plan(sig);
  ASSERT_EQ(plan.size(), 35u);
  PackedArgs args(plan);
  for (size_t i = 0; i < plan.size(); ++i)
    args.setInt(i, int64_t(i) * 3);
  for (size_t i = 0; i < plan.size(); ++i) {
    EXPECT_EQ(cellAs<int64_t>(args, i), int64_t(i) * 3);
    EXPECT_EQ(args.params()[i], args.cell(i));
  }
}

TEST(ArgPack, EmptySignature) {
  ArgPlan plan(Signature{});
  PackedArgs args(plan);
  EXPECT_EQ(plan.size(), 0u);
  EXPECT_NE(args.params(), nullptr);
}
