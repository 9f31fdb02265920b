//===- CudaModule.cpp - a cubin, loaded lazily per context ----------------===//

#include "runtime/CudaModule.h"

#include <cstdint>

using namespace tile::runtime;
using namespace tile::runtime::cu;

/// Beyond this a kernel must opt in to more dynamic shared memory.
static constexpr unsigned kDefaultSharedLimit = 48 * 1024;

CudaModule::CudaModule(CudaDriver &driver, std::string image,
                       std::string kernelName, unsigned sharedMem)
    : driver(driver), cubin(std::move(image)),
      kernelName(std::move(kernelName)), sharedMem(sharedMem) {}

CudaModule::~CudaModule() {
  if (loaded.empty())
    return;
  const CudaApiTable &cu = driver.api();
  for (const Loaded &l : loaded) {
    // Errors are ignored: at exit the context may already be gone.
    CUcontext previous = nullptr;
    cu.cuCtxGetCurrent(&previous);
    if (cu.cuCtxSetCurrent(l.ctx) == CUDA_SUCCESS)
      cu.cuModuleUnload(l.module);
    cu.cuCtxSetCurrent(previous);
  }
}

CUfunction CudaModule::function(CUcontext ctx) {
  std::lock_guard<std::mutex> lock(mutex);
  for (const Loaded &l : loaded)
    if (l.ctx == ctx)
      return l.function;

  const CudaApiTable &cu = driver.api();
  if (sharedMem > kDefaultSharedLimit) {
    int limit = driver.maxSharedOptIn(ctx);
    if (int64_t(sharedMem) > limit)
      throw CudaError(-1, "kernel '" + kernelName + "' needs " +
                              std::to_string(sharedMem) +
                              " bytes of shared memory; the device allows " +
                              std::to_string(limit));
  }
  ScopedContext scope(driver, ctx);
  CUmodule module = nullptr;
  driver.check(cu.cuModuleLoadData(&module, cubin.data()),
               "cuModuleLoadData");
  CUfunction fn = nullptr;
  CUresult r = cu.cuModuleGetFunction(&fn, module, kernelName.c_str());
  if (r == CUDA_SUCCESS && sharedMem > kDefaultSharedLimit)
    r = cu.cuFuncSetAttribute(
        fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(sharedMem));
  // Without a preference the driver may keep an L1/shared split that fits
  // one block of a kernel sized for two an SM (64-row attention blocks of
  // 105 KB each): ask for the most shared memory, as Triton does past 48 KB.
  if (r == CUDA_SUCCESS && sharedMem > kDefaultSharedLimit)
    r = cu.cuFuncSetAttribute(
        fn, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
        CU_SHAREDMEM_CARVEOUT_MAX_SHARED);
  if (r != CUDA_SUCCESS) {
    std::string why = driver.describe(r);
    cu.cuModuleUnload(module);
    throw CudaError(r, "loading kernel '" + kernelName + "' failed: " + why);
  }
  loaded.push_back({ctx, module, fn});
  int n = published.load(std::memory_order_relaxed);
  if (n < kFastSlots) {
    fast[size_t(n)] = {ctx, fn};
    published.store(n + 1, std::memory_order_release);
  }
  return fn;
}

CUfunction CudaModule::loadedFunction(CUcontext ctx) const {
  int n = published.load(std::memory_order_acquire);
  for (int i = 0; i < n; ++i)
    if (fast[size_t(i)].first == ctx)
      return fast[size_t(i)].second;
  return nullptr;
}

void CudaModule::launch(const LaunchConfig &config, CUstream stream,
                        void **params) {
  launchImpl(config, stream, params, /*mayLoad=*/true);
}

bool CudaModule::launchIfLoaded(const LaunchConfig &config, CUstream stream,
                                void **params) {
  return launchImpl(config, stream, params, /*mayLoad=*/false);
}

bool CudaModule::launchImpl(const LaunchConfig &config, CUstream stream,
                            void **params, bool mayLoad) {
  if (config.grid[0] == 0 || config.grid[1] == 0 || config.grid[2] == 0)
    return true; // an empty grid launches nothing, as in Triton
  // One query of the current context serves both the default streams'
  // context and the switch below (launches are the hot path).
  const CudaApiTable &cu = driver.api();
  CUcontext current = nullptr;
  driver.check(cu.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
  CUcontext ctx = !isSpecialStream(stream) ? driver.contextForStream(stream)
                  : current               ? current
                                          : driver.primaryContext(0);
  CUfunction fn = loadedFunction(ctx);
  if (!fn && !mayLoad)
    return false;
  if (!fn)
    fn = function(ctx);
  ScopedContext scope(driver, ctx, current);
  CUresult r;
  if (config.programmaticDependentLaunch || config.clusterDimX > 1) {
    driver.require(reinterpret_cast<const void *>(cu.cuLaunchKernelEx),
                   "cuLaunchKernelEx");
    CUlaunchAttribute attrs[2] = {};
    unsigned count = 0;
    if (config.programmaticDependentLaunch) {
      attrs[count].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
      attrs[count++].value.programmaticStreamSerializationAllowed = 1;
    }
    if (config.clusterDimX > 1) {
      attrs[count].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
      attrs[count++].value.clusterDim = {config.clusterDimX, 1, 1};
    }
    CUlaunchConfig ex{config.grid[0],
                      config.grid[1],
                      config.grid[2],
                      config.block[0],
                      config.block[1],
                      config.block[2],
                      config.sharedMem,
                      stream,
                      attrs,
                      count};
    r = cu.cuLaunchKernelEx(&ex, fn, params, nullptr);
  } else {
    r = cu.cuLaunchKernel(fn, config.grid[0], config.grid[1], config.grid[2],
                          config.block[0], config.block[1], config.block[2],
                          config.sharedMem, stream, params, nullptr);
  }
  if (r != CUDA_SUCCESS)
    throw CudaError(r, "launching kernel '" + kernelName +
                           "' failed: " + driver.describe(r));
  return true;
}
