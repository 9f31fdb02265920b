//===- CudaDriverTest.cpp - loading libcuda without a GPU ----------------===//

#include "runtime/CudaDriver.h"

#include <gtest/gtest.h>
#include <unistd.h>

#ifdef TILE_HAVE_CUDA_H
#include <cuda.h>
#endif

using namespace tile::runtime;

TEST(CudaDriver, MissingLibraryMeansNoDevices) {
  CudaDriver driver("/nonexistent/libcuda.so.1");
  EXPECT_EQ(driver.deviceCount(), 0);
  std::string why = driver.unavailableReason();
  EXPECT_NE(why.find("/nonexistent/libcuda.so.1"), std::string::npos) << why;
  EXPECT_NE(why.find("cannot load the CUDA driver"), std::string::npos) << why;
  try {
    driver.api();
    FAIL() << "api() must throw without a driver";
  } catch (const CudaError &e) {
    EXPECT_EQ(e.getCode(), -1);
    EXPECT_EQ(std::string(e.what()), why);
  }
  EXPECT_THROW(driver.primaryContext(0), CudaError);
  // Asking again neither retries nor crashes.
  EXPECT_EQ(driver.deviceCount(), 0);
}

TEST(CudaDriver, LibraryWithoutDriverSymbols) {
  // A real shared library that is not libcuda: its symbols are missing.
  CudaDriver driver("libm.so.6");
  EXPECT_EQ(driver.deviceCount(), 0);
  EXPECT_NE(driver.unavailableReason().find("lacks cuInit"),
            std::string::npos)
      << driver.unavailableReason();
}

// The toolkit's stub libcuda loads but cuInit fails: still no devices.
TEST(CudaDriver, StubLibrary) {
  const char *stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
  if (access(stub, R_OK) != 0)
    GTEST_SKIP() << "no CUDA stub library";
  CudaDriver driver(stub);
  EXPECT_EQ(driver.deviceCount(), 0);
  EXPECT_NE(driver.unavailableReason().find("cannot initialize"),
            std::string::npos)
      << driver.unavailableReason();
}

TEST(CudaDriver, ProcessWideDriverNeverThrowsForCount) {
  // Whatever this machine has, counting devices is safe.
  int n = CudaDriver::get().deviceCount();
  EXPECT_GE(n, 0);
  if (n == 0) {
    EXPECT_FALSE(CudaDriver::get().unavailableReason().empty());
  }
}

#ifdef TILE_HAVE_CUDA_H
// Our hand-written declarations are ABI: they must match the toolkit's.
TEST(CudaDriver, DeclarationsMatchCudaH) {
  static_assert(cu::CUDA_SUCCESS == CUDA_SUCCESS);
  static_assert(cu::CUDA_ERROR_NOT_INITIALIZED == CUDA_ERROR_NOT_INITIALIZED);
  static_assert(cu::CUDA_ERROR_STUB_LIBRARY == CUDA_ERROR_STUB_LIBRARY);
  static_assert(cu::CUDA_ERROR_NO_DEVICE == CUDA_ERROR_NO_DEVICE);
  static_assert(cu::CUDA_ERROR_INVALID_CONTEXT == CUDA_ERROR_INVALID_CONTEXT);
  static_assert(cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ==
                CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  static_assert(cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR ==
                CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  static_assert(cu::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN ==
                CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
  static_assert(cu::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ==
                CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
  static_assert(cu::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT ==
                CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT);
  static_assert(cu::CU_SHAREDMEM_CARVEOUT_MAX_SHARED ==
                CU_SHAREDMEM_CARVEOUT_MAX_SHARED);
  static_assert(cu::CUDA_ERROR_STREAM_CAPTURE_IMPLICIT ==
                CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
  static_assert(cu::CU_EVENT_DEFAULT == CU_EVENT_DEFAULT);
  static_assert(cu::CU_STREAM_CAPTURE_STATUS_NONE ==
                CU_STREAM_CAPTURE_STATUS_NONE);
  static_assert(sizeof(cu::CUdeviceptr) == sizeof(CUdeviceptr));
  static_assert(sizeof(cu::CUresult) == sizeof(CUresult));
  static_assert(sizeof(cu::CUdevice) == sizeof(CUdevice));
  EXPECT_TRUE(cu::isSpecialStream(reinterpret_cast<cu::CUstream>(
      reinterpret_cast<size_t>(CU_STREAM_PER_THREAD))));
  EXPECT_TRUE(cu::isSpecialStream(reinterpret_cast<cu::CUstream>(
      reinterpret_cast<size_t>(CU_STREAM_LEGACY))));
}
#endif
