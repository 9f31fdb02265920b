//===- JsonTest.cpp - the metadata JSON subset ----------------------------===//

#include "runtime/Json.h"

#include <gtest/gtest.h>

using tile::runtime::Json;

TEST(Json, RoundTrip) {
  Json j = Json::object();
  j["name"] = "vadd \"quoted\"\n\ttab\x01";
  j["warps"] = 4;
  j["big"] = int64_t(-9223372036854775807LL - 1);
  j["ok"] = true;
  j["none"] = Json();
  Json sig = Json::array();
  sig.push("array:1");
  sig.push("i32");
  j["signature"] = sig;
  Json nested = Json::array();
  Json inner = Json::object();
  inner["size"] = 3;
  nested.push(inner);
  j["stages"] = nested;
  auto back = Json::parse(j.dump());
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, j);
  EXPECT_EQ(back->getString("name"), j.getString("name"));
  EXPECT_EQ(back->getInt("big"), int64_t(-9223372036854775807LL - 1));
}

TEST(Json, RejectsMalformed) {
  for (const char *text :
       {"", "{", "{\"a\":}", "{\"a\":1,}", "[1,2", "{\"a\":1} x", "tru",
        "\"unterminated", "{\"a\":99999999999999999999}", "1.5", "{'a':1}",
        "{\"a\":\"\\q\"}"})
    EXPECT_FALSE(Json::parse(text)) << text;
}

TEST(Json, TypedGetters) {
  auto j = Json::parse(R"({"a": 1, "b": "x", "c": [1]})");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->getInt("a"), 1);
  EXPECT_FALSE(j->getInt("b"));
  EXPECT_EQ(j->getString("b"), "x");
  EXPECT_FALSE(j->getString("missing"));
  EXPECT_TRUE(j->get("c")->isArray());
}
