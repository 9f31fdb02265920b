//===- BuildInfoTest.cpp - the compiler identity in cache keys -----------===//

#include "runtime/BuildInfo.h"

#include <gtest/gtest.h>

TEST(BuildInfo, NamesVersionAndBinary) {
  const std::string &id = tile::runtime::buildIdentity();
  EXPECT_EQ(id.rfind("tile ", 0), 0u) << id;
  // The test executable holds the runtime: its path identifies this build.
  EXPECT_NE(id.find("TileRuntimeTests:"), std::string::npos) << id;
  EXPECT_EQ(&id, &tile::runtime::buildIdentity()); // computed once
}
