//===- CudaDriver.cpp - libcuda loaded at run time ------------------------===//

#include "runtime/CudaDriver.h"

#include <cstdlib>
#include <dlfcn.h>
#include <type_traits>

using namespace tile::runtime;
using namespace tile::runtime::cu;

CudaDriver &CudaDriver::get() {
  // Leaked on purpose: kernels unloading modules from static destructors at
  // exit must still find the driver.
  static CudaDriver *driver = [] {
    const char *path = std::getenv("TILE_LIBCUDA");
    return new CudaDriver(path && *path ? path : "libcuda.so.1");
  }();
  return *driver;
}

CudaDriver::CudaDriver(std::string libraryPath)
    : libraryPath(std::move(libraryPath)) {}

CudaDriver::~CudaDriver() {
  if (handle)
    dlclose(handle);
}

void CudaDriver::load() {
  handle = dlopen(libraryPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char *why = dlerror();
    failure = "cannot load the CUDA driver library '" + libraryPath +
              "': " + (why ? why : "unknown error") +
              " (is the NVIDIA driver installed? set TILE_BACKEND=cpu to run "
              "without a GPU)";
    return;
  }
  bool missing = false;
  auto resolve = [&](auto &slot, const char *name) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(
        dlsym(handle, name));
    if (!slot && !missing) {
      missing = true;
      failure = "the CUDA driver library '" + libraryPath + "' lacks " + name +
                " (driver too old?)";
    }
  };
  resolve(table.cuInit, "cuInit");
  resolve(table.cuDriverGetVersion, "cuDriverGetVersion");
  resolve(table.cuGetErrorName, "cuGetErrorName");
  resolve(table.cuGetErrorString, "cuGetErrorString");
  resolve(table.cuDeviceGetCount, "cuDeviceGetCount");
  resolve(table.cuDeviceGet, "cuDeviceGet");
  resolve(table.cuDeviceGetAttribute, "cuDeviceGetAttribute");
  resolve(table.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
  resolve(table.cuCtxGetCurrent, "cuCtxGetCurrent");
  resolve(table.cuCtxSetCurrent, "cuCtxSetCurrent");
  resolve(table.cuCtxGetDevice, "cuCtxGetDevice");
  resolve(table.cuStreamGetCtx, "cuStreamGetCtx");
  resolve(table.cuModuleLoadData, "cuModuleLoadData");
  resolve(table.cuModuleUnload, "cuModuleUnload");
  resolve(table.cuModuleGetFunction, "cuModuleGetFunction");
  resolve(table.cuFuncSetAttribute, "cuFuncSetAttribute");
  resolve(table.cuLaunchKernel, "cuLaunchKernel");
  if (missing)
    return;
  auto resolveOptional = [&](auto &slot, const char *name) {
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(
        dlsym(handle, name));
  };
  resolveOptional(table.cuDeviceGetName, "cuDeviceGetName");
  resolveOptional(table.cuStreamIsCapturing, "cuStreamIsCapturing");
  resolveOptional(table.cuStreamSynchronize, "cuStreamSynchronize");
  resolveOptional(table.cuEventCreate, "cuEventCreate");
  resolveOptional(table.cuEventRecord, "cuEventRecord");
  resolveOptional(table.cuEventSynchronize, "cuEventSynchronize");
  // cuda.h maps these two names to their _v2 entry points; the plain
  // symbols remain for old binaries, so take the _v2 when there is one.
  resolveOptional(table.cuEventElapsedTime, "cuEventElapsedTime_v2");
  if (!table.cuEventElapsedTime)
    resolveOptional(table.cuEventElapsedTime, "cuEventElapsedTime");
  resolveOptional(table.cuEventDestroy, "cuEventDestroy_v2");
  if (!table.cuEventDestroy)
    resolveOptional(table.cuEventDestroy, "cuEventDestroy");
  // Programmatic dependent launches (sm_90).
  resolveOptional(table.cuLaunchKernelEx, "cuLaunchKernelEx");
  // Timing flushes L2 with a scratch buffer (kept for the process).
  resolveOptional(table.cuMemAlloc, "cuMemAlloc_v2");
  resolveOptional(table.cuTensorMapEncodeTiled, "cuTensorMapEncodeTiled");
  if (CUresult r = table.cuInit(0)) {
    failure = "cannot initialize the CUDA driver: " + describe(r);
    return;
  }
  if (CUresult r = table.cuDeviceGetCount(&numDevices)) {
    failure = "cannot count CUDA devices: " + describe(r);
    numDevices = 0;
    return;
  }
  if (numDevices == 0)
    failure = "no CUDA device is visible";
  primaryContexts.reset(new std::atomic<CUcontext>[size_t(numDevices)]());
  usable.store(failure.empty(), std::memory_order_release);
}

int CudaDriver::deviceCount() {
  std::call_once(loaded, [this] { load(); });
  return failure.empty() ? numDevices : 0;
}

std::string CudaDriver::unavailableReason() {
  std::call_once(loaded, [this] { load(); });
  return failure;
}

const CudaApiTable &CudaDriver::api() {
  if (usable.load(std::memory_order_acquire))
    return table;
  std::call_once(loaded, [this] { load(); });
  if (!failure.empty())
    throw CudaError(-1, failure);
  return table;
}

std::string CudaDriver::describe(CUresult result) {
  const char *name = nullptr, *message = nullptr;
  if (table.cuGetErrorName)
    table.cuGetErrorName(result, &name);
  if (table.cuGetErrorString)
    table.cuGetErrorString(result, &message);
  std::string text = name ? name : "CUDA error " + std::to_string(result);
  if (message)
    text += std::string(" (") + message + ")";
  return text;
}

void CudaDriver::check(CUresult result, const char *what) {
  if (result != CUDA_SUCCESS)
    throw CudaError(result, std::string(what) + " failed: " + describe(result));
}

void CudaDriver::require(const void *fn, const char *name) {
  if (!fn)
    throw CudaError(-1, "the CUDA driver library '" + libraryPath + "' lacks " +
                            name + " (driver too old?)");
}

int CudaDriver::driverVersion() {
  const CudaApiTable &cu = api();
  int version = 0;
  check(cu.cuDriverGetVersion(&version), "cuDriverGetVersion");
  return version;
}

std::string CudaDriver::deviceName(int device) {
  const CudaApiTable &cu = api();
  require(reinterpret_cast<const void *>(cu.cuDeviceGetName),
          "cuDeviceGetName");
  CUdevice dev;
  check(cu.cuDeviceGet(&dev, device), "cuDeviceGet");
  char name[256] = {};
  check(cu.cuDeviceGetName(name, int(sizeof(name)) - 1, dev),
        "cuDeviceGetName");
  return name;
}

CUcontext CudaDriver::primaryContext(int device) {
  const CudaApiTable &cu = api();
  if (device < 0 || device >= numDevices)
    throw CudaError(-1, "CUDA device " + std::to_string(device) +
                            " does not exist (" + std::to_string(numDevices) +
                            " visible)");
  std::atomic<CUcontext> &slot = primaryContexts[size_t(device)];
  if (CUcontext ctx = slot.load(std::memory_order_acquire))
    return ctx; // retained before: no lock (a launch with no current context)
  std::lock_guard<std::mutex> lock(contextsMutex);
  CUcontext ctx = slot.load(std::memory_order_relaxed);
  if (!ctx) {
    CUdevice dev;
    check(cu.cuDeviceGet(&dev, device), "cuDeviceGet");
    check(cu.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
    slot.store(ctx, std::memory_order_release);
  }
  return ctx;
}

CUcontext CudaDriver::contextForStream(CUstream stream) {
  const CudaApiTable &cu = api();
  CUcontext ctx = nullptr;
  if (!isSpecialStream(stream)) {
    check(cu.cuStreamGetCtx(stream, &ctx), "cuStreamGetCtx");
    return ctx;
  }
  check(cu.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
  return ctx ? ctx : primaryContext(0);
}

std::string CudaDriver::archOf(int device) {
  const CudaApiTable &cu = api();
  CUdevice dev;
  check(cu.cuDeviceGet(&dev, device), "cuDeviceGet");
  int major = 0, minor = 0;
  check(cu.cuDeviceGetAttribute(
            &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
        "cuDeviceGetAttribute");
  check(cu.cuDeviceGetAttribute(
            &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
        "cuDeviceGetAttribute");
  return "sm_" + std::to_string(major * 10 + minor);
}

int CudaDriver::maxSharedOptIn(CUcontext ctx) {
  const CudaApiTable &cu = api();
  ScopedContext scope(*this, ctx);
  CUdevice dev;
  check(cu.cuCtxGetDevice(&dev), "cuCtxGetDevice");
  int bytes = 0;
  check(cu.cuDeviceGetAttribute(
            &bytes, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev),
        "cuDeviceGetAttribute");
  return bytes;
}

CUresult CudaDriver::encodeTensorMap(TensorMapBytes &out,
                                     const TensorMapEncoding &e) {
  const CudaApiTable &cu = api();
  if (!cu.cuTensorMapEncodeTiled)
    return -1;
  return cu.cuTensorMapEncodeTiled(
      out.words, e.dataType, e.rank, reinterpret_cast<void *>(e.address),
      e.globalDim, e.globalStrides, e.boxDim, e.elementStrides, e.interleave,
      e.swizzle, e.l2Promotion, e.oobFill);
}

ScopedContext::ScopedContext(CudaDriver &driver, CUcontext ctx)
    : driver(driver) {
  const CudaApiTable &cu = driver.api();
  driver.check(cu.cuCtxGetCurrent(&previous), "cuCtxGetCurrent");
  if (previous != ctx) {
    driver.check(cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    switched = true;
  }
}

ScopedContext::ScopedContext(CudaDriver &driver, CUcontext ctx,
                             CUcontext current)
    : driver(driver), previous(current) {
  if (previous != ctx) {
    driver.check(driver.api().cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
    switched = true;
  }
}

ScopedContext::~ScopedContext() {
  if (switched)
    driver.api().cuCtxSetCurrent(previous);
}
