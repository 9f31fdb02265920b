//===- CudaModuleTest.cpp - loading and launching, against a fake libcuda ===//

#include "runtime/CudaModule.h"
#include "runtime/ArgPack.h"

#include <cstring>
#include <dlfcn.h>
#include <gtest/gtest.h>

using namespace tile::runtime;

namespace {

/// The fake driver (FakeCuda.cpp) and its observation hooks.
class CudaModuleTest : public ::testing::Test {
protected:
  void SetUp() override {
    handle = dlopen(TILE_FAKE_CUDA, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle, nullptr) << dlerror();
    reset(0);
  }
  void TearDown() override { dlclose(handle); }

  template <typename Fn> Fn hook(const char *name) {
    void *sym = dlsym(handle, name);
    EXPECT_NE(sym, nullptr) << name;
    return reinterpret_cast<Fn>(sym);
  }
  int counter(const char *name) { return hook<int (*)()>(name)(); }
  void reset(int params) { hook<void (*)(int)>("fake_cuda_reset")(params); }
  void setCurrent(int device) {
    hook<void (*)(int)>("fake_cuda_set_current")(device);
  }
  static cu::CUstream stream(int device) {
    return reinterpret_cast<cu::CUstream>(uintptr_t(0x5000 + 16 * device));
  }

  void *handle = nullptr;
  CudaDriver driver{TILE_FAKE_CUDA};
};

} // namespace

TEST_F(CudaModuleTest, DriverSeesFakeDevices) {
  EXPECT_EQ(driver.deviceCount(), 2);
  EXPECT_EQ(driver.unavailableReason(), "");
  EXPECT_EQ(driver.archOf(1), "sm_90");
}

// Packed parameters reach the driver unchanged, with block = 32 * warps and
// the kernel's dynamic shared memory.
TEST_F(CudaModuleTest, LaunchPassesPackedParameters) {
  ArgPlan plan({{Param::Array, 1}, {Param::I32}, {Param::F32}});
  reset(int(plan.size()));
  PackedArgs args(plan);
  args.setUInt(0, 0x7f0000001000ull);
  args.setInt(1, 1000);
  args.setInt(2, 1);
  args.setInt(3, -5);
  args.setFloat(4, 0.5);

  CudaModule module(driver, "cubin with vadd", "vadd", 1024);
  LaunchConfig config;
  config.grid = {8, 2, 1};
  config.block = {128, 1, 1};
  config.sharedMem = 1024;
  module.launch(config, stream(1), args.params());

  EXPECT_EQ(counter("fake_cuda_launches"), 1);
  EXPECT_EQ(counter("fake_cuda_launch_device"), 1);
  EXPECT_STREQ(hook<const char *(*)()>("fake_cuda_kernel")(), "vadd");
  auto grid = hook<unsigned (*)(int)>("fake_cuda_grid");
  auto block = hook<unsigned (*)(int)>("fake_cuda_block");
  EXPECT_EQ(grid(0), 8u);
  EXPECT_EQ(grid(1), 2u);
  EXPECT_EQ(block(0), 128u);
  EXPECT_EQ(hook<unsigned (*)()>("fake_cuda_shared")(), 1024u);
  auto param = hook<uint64_t (*)(int)>("fake_cuda_param");
  EXPECT_EQ(param(0), 0x7f0000001000ull);
  EXPECT_EQ(param(1), 1000u);
  EXPECT_EQ(param(2), 1u);
  EXPECT_EQ(int32_t(param(3)), -5);
  float f;
  uint32_t bits = uint32_t(param(4));
  std::memcpy(&f, &bits, 4);
  EXPECT_EQ(f, 0.5f);
  // The caller's current context (none) is restored.
  EXPECT_EQ(counter("fake_cuda_current_device"), -1);
}

// One module per context, loaded on first use only; unloaded at the end.
TEST_F(CudaModuleTest, LoadsLazilyOncePerContext) {
  {
    CudaModule module(driver, "k", "k", 0);
    EXPECT_EQ(counter("fake_cuda_loads"), 0); // nothing before a launch
    LaunchConfig config;
    for (int i = 0; i < 3; ++i) {
      module.launch(config, stream(0), nullptr);
      module.launch(config, stream(1), nullptr);
    }
    EXPECT_EQ(counter("fake_cuda_loads"), 2);
    EXPECT_EQ(counter("fake_cuda_launches"), 6);
    config.grid = {0, 1, 1};
    module.launch(config, stream(0), nullptr); // empty grid: nothing
    EXPECT_EQ(counter("fake_cuda_launches"), 6);
  }
  EXPECT_EQ(counter("fake_cuda_unloads"), 2);
}

// A cluster dimension goes to cuLaunchKernelEx as its attribute, with the
// programmatic-launch one when both are asked for; without either the
// launch stays cuLaunchKernel's (the fake records a cluster of 1).
TEST_F(CudaModuleTest, ClustersLaunchThroughLaunchKernelEx) {
  CudaModule module(driver, "k", "k", 0);
  LaunchConfig config;
  config.grid = {8, 2, 1};
  config.clusterDimX = 2;
  module.launch(config, stream(0), nullptr);
  EXPECT_EQ(counter("fake_cuda_cluster_dim"), 2);
  EXPECT_EQ(counter("fake_cuda_programmatic"), 0);
  config.programmaticDependentLaunch = true;
  module.launch(config, stream(0), nullptr);
  EXPECT_EQ(counter("fake_cuda_cluster_dim"), 2);
  EXPECT_EQ(counter("fake_cuda_programmatic"), 1);
  config = LaunchConfig();
  module.launch(config, stream(0), nullptr);
  EXPECT_EQ(counter("fake_cuda_cluster_dim"), 1);
  EXPECT_EQ(counter("fake_cuda_programmatic"), 0);
  EXPECT_EQ(counter("fake_cuda_launches"), 3);
  // The driver refuses a cluster that does not divide the grid.
  config.grid = {7, 1, 1};
  config.clusterDimX = 2;
  EXPECT_THROW(module.launch(config, stream(0), nullptr), CudaError);
}

// launchIfLoaded (the bindings' launch with the GIL held) launches only where
// the module is loaded already, and loads nothing.
TEST_F(CudaModuleTest, LaunchIfLoadedNeverLoads) {
  CudaModule module(driver, "k", "k", 0);
  LaunchConfig config;
  EXPECT_FALSE(module.launchIfLoaded(config, stream(0), nullptr));
  EXPECT_EQ(counter("fake_cuda_loads"), 0);
  EXPECT_EQ(counter("fake_cuda_launches"), 0);
  module.launch(config, stream(0), nullptr);
  EXPECT_TRUE(module.launchIfLoaded(config, stream(0), nullptr));
  EXPECT_EQ(counter("fake_cuda_launches"), 2);
  EXPECT_EQ(counter("fake_cuda_launch_device"), 0);
  EXPECT_FALSE(module.launchIfLoaded(config, stream(1), nullptr)); // device 1
  EXPECT_EQ(counter("fake_cuda_loads"), 1);
  module.launch(config, stream(1), nullptr);
  EXPECT_TRUE(module.launchIfLoaded(config, stream(1), nullptr));
  EXPECT_EQ(counter("fake_cuda_launch_device"), 1);
  EXPECT_EQ(counter("fake_cuda_launches"), 4);
  config.grid = {0, 1, 1}; // an empty grid: done, nothing launched
  EXPECT_TRUE(module.launchIfLoaded(config, stream(1), nullptr));
  EXPECT_EQ(counter("fake_cuda_launches"), 4);
}

// The legacy stream runs in the current context, else device 0's primary
// context, which is then retained once.
TEST_F(CudaModuleTest, DefaultStreamContext) {
  CudaModule module(driver, "k", "k", 0);
  LaunchConfig config;
  setCurrent(1);
  module.launch(config, nullptr, nullptr);
  EXPECT_EQ(counter("fake_cuda_launch_device"), 1);
  EXPECT_EQ(counter("fake_cuda_current_device"), 1);
  EXPECT_EQ(counter("fake_cuda_retains"), 0);
  setCurrent(-1);
  module.launch(config, nullptr, nullptr);
  module.launch(config, nullptr, nullptr);
  EXPECT_EQ(counter("fake_cuda_launch_device"), 0);
  EXPECT_EQ(counter("fake_cuda_retains"), 1);
  EXPECT_EQ(counter("fake_cuda_current_device"), -1);
}

TEST_F(CudaModuleTest, LargeSharedMemoryOptsIn) {
  LaunchConfig config;
  CudaModule small(driver, "k", "k", 0);
  small.launch(config, stream(0), nullptr);
  EXPECT_EQ(counter("fake_cuda_carveout"), -1); // L1 as the driver likes

  CudaModule module(driver, "k", "k", 100 * 1024);
  config.sharedMem = 100 * 1024;
  module.launch(config, stream(0), nullptr);
  EXPECT_EQ(counter("fake_cuda_shared_attribute"), 100 * 1024);
  // The most shared memory an SM can give, so that two such blocks fit.
  EXPECT_EQ(counter("fake_cuda_carveout"), 100);
  EXPECT_EQ(counter("fake_cuda_launches"), 2);

  CudaModule tooBig(driver, "k", "k", 300 * 1024);
  config.sharedMem = 300 * 1024;
  try {
    tooBig.launch(config, stream(0), nullptr);
    FAIL();
  } catch (const CudaError &e) {
    EXPECT_NE(std::string(e.what()).find("the device allows 232448"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(CudaModuleTest, DriverErrorsCarryTheDriversMessage) {
  LaunchConfig config;
  CudaModule bad(driver, "BAD image", "k", 0);
  try {
    bad.launch(config, stream(0), nullptr);
    FAIL();
  } catch (const CudaError &e) {
    EXPECT_EQ(e.getCode(), 200);
    EXPECT_STREQ(e.what(), "cuModuleLoadData failed: CUDA_ERROR_INVALID_IMAGE "
                           "(device kernel image is invalid)");
  }
  CudaModule missing(driver, "other", "vadd", 0);
  try {
    missing.launch(config, stream(0), nullptr);
    FAIL();
  } catch (const CudaError &e) {
    EXPECT_STREQ(e.what(), "loading kernel 'vadd' failed: CUDA_ERROR_NOT_FOUND "
                           "(named symbol not found)");
  }
  EXPECT_EQ(counter("fake_cuda_unloads"), 1); // the module without 'vadd'

  CudaModule ok(driver, "k", "k", 0);
  config.grid = {1, 70000, 1};
  try {
    ok.launch(config, stream(0), nullptr);
    FAIL();
  } catch (const CudaError &e) {
    EXPECT_STREQ(e.what(), "launching kernel 'k' failed: "
                           "CUDA_ERROR_INVALID_VALUE (invalid argument)");
  }
  EXPECT_THROW(ok.launch({}, stream(7), nullptr), CudaError); // bad stream
}

// The optional entry points autotuning times with: names, versions, events
// that measure the (fake) GPU clock a launch advances, capture queries.
TEST_F(CudaModuleTest, TimingEntryPoints) {
  EXPECT_EQ(driver.deviceName(1), "Fake GPU 1");
  EXPECT_EQ(driver.driverVersion(), 13000);
  const CudaApiTable &api = driver.api();
  ASSERT_NE(api.cuEventCreate, nullptr);
  ScopedContext scope(driver, driver.primaryContext(1));
  cu::CUevent start = nullptr, end = nullptr;
  driver.check(api.cuEventCreate(&start, cu::CU_EVENT_DEFAULT), "create");
  driver.check(api.cuEventCreate(&end, cu::CU_EVENT_DEFAULT), "create");
  ArgPlan plan({{Param::I32}, {Param::I32}});
  PackedArgs args(plan);
  CudaModule module(driver, "cubin with k", "k", 0);
  LaunchConfig config;
  config.grid = {500, 2, 1};
  config.block = {128, 1, 1};
  driver.check(api.cuEventRecord(start, stream(1)), "record");
  module.launch(config, stream(1), args.params());
  driver.check(api.cuEventRecord(end, stream(1)), "record");
  driver.check(api.cuEventSynchronize(end), "sync");
  float ms = 0;
  driver.check(api.cuEventElapsedTime(&ms, start, end), "elapsed");
  EXPECT_FLOAT_EQ(ms, 1.0f); // 1000 blocks at 1 us each
  driver.check(api.cuEventDestroy(start), "destroy");
  driver.check(api.cuEventDestroy(end), "destroy");
  EXPECT_EQ(counter("fake_cuda_live_events"), 0);

  int status = -1;
  driver.check(api.cuStreamIsCapturing(stream(1), &status), "capturing");
  EXPECT_EQ(status, cu::CU_STREAM_CAPTURE_STATUS_NONE);
  hook<void (*)(uintptr_t)>("fake_cuda_set_capturing")(0x5010);
  driver.check(api.cuStreamIsCapturing(stream(1), &status), "capturing");
  EXPECT_NE(status, cu::CU_STREAM_CAPTURE_STATUS_NONE);
  EXPECT_EQ(api.cuStreamIsCapturing(nullptr, &status),
            cu::CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
}

// A driver without the optional entry points still loads and launches;
// asking for one of them says which is missing.
TEST(CudaDriverOptional, OldDriverStillLaunches) {
  CudaDriver driver{TILE_FAKE_CUDA_MINIMAL};
  EXPECT_EQ(driver.deviceCount(), 2);
  EXPECT_EQ(driver.api().cuEventCreate, nullptr);
  ArgPlan plan({{Param::I32}, {Param::I32}});
  PackedArgs args(plan);
  ScopedContext scope(driver, driver.primaryContext(0));
  CudaModule module(driver, "cubin with k", "k", 0);
  LaunchConfig config;
  config.grid = {1, 1, 1};
  config.block = {32, 1, 1};
  module.launch(config, nullptr, args.params());
  try {
    driver.deviceName(0);
    FAIL() << "deviceName needs cuDeviceGetName";
  } catch (const CudaError &e) {
    EXPECT_NE(std::string(e.what()).find("lacks cuDeviceGetName"),
              std::string::npos)
        << e.what();
  }
}
