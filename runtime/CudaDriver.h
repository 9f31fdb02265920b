//===- CudaDriver.h - libcuda loaded at run time ----------------*- C++ -*-===//
//
// libcuda is dlopen'ed on first use, so `import tile` works on machines with
// no driver: deviceCount() is then 0 and anything that needs the GPU throws a
// CudaError saying why. Driver failures become CudaErrors carrying the
// driver's own name and message for the failing call.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_RUNTIME_CUDADRIVER_H
#define TILE_RUNTIME_CUDADRIVER_H

#include "runtime/CudaApi.h"
#include "runtime/TensorMap.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

namespace tile::runtime {

/// A driver failure, or the driver being unusable (code -1).
class CudaError : public std::runtime_error {
public:
  CudaError(int code, const std::string &message)
      : std::runtime_error(message), code(code) {}
  int getCode() const { return code; }

private:
  int code;
};

/// The driver entry points tile calls, resolved with dlsym.
struct CudaApiTable {
  cu::CUresult (*cuInit)(unsigned);
  cu::CUresult (*cuDriverGetVersion)(int *);
  cu::CUresult (*cuGetErrorName)(cu::CUresult, const char **);
  cu::CUresult (*cuGetErrorString)(cu::CUresult, const char **);
  cu::CUresult (*cuDeviceGetCount)(int *);
  cu::CUresult (*cuDeviceGet)(cu::CUdevice *, int);
  cu::CUresult (*cuDeviceGetAttribute)(int *, int, cu::CUdevice);
  cu::CUresult (*cuDevicePrimaryCtxRetain)(cu::CUcontext *, cu::CUdevice);
  cu::CUresult (*cuCtxGetCurrent)(cu::CUcontext *);
  cu::CUresult (*cuCtxSetCurrent)(cu::CUcontext);
  cu::CUresult (*cuCtxGetDevice)(cu::CUdevice *);
  cu::CUresult (*cuStreamGetCtx)(cu::CUstream, cu::CUcontext *);
  cu::CUresult (*cuModuleLoadData)(cu::CUmodule *, const void *);
  cu::CUresult (*cuModuleUnload)(cu::CUmodule);
  cu::CUresult (*cuModuleGetFunction)(cu::CUfunction *, cu::CUmodule,
                                      const char *);
  cu::CUresult (*cuFuncSetAttribute)(cu::CUfunction, int, int);
  cu::CUresult (*cuLaunchKernel)(cu::CUfunction, unsigned, unsigned, unsigned,
                                 unsigned, unsigned, unsigned, unsigned,
                                 cu::CUstream, void **, void **);

  // Optional: resolved when present, null otherwise, so a driver (or the
  // test fake) without them still launches; their users call require().
  cu::CUresult (*cuDeviceGetName)(char *, int, cu::CUdevice);
  cu::CUresult (*cuStreamIsCapturing)(cu::CUstream, int *);
  cu::CUresult (*cuStreamSynchronize)(cu::CUstream);
  cu::CUresult (*cuEventCreate)(cu::CUevent *, unsigned);
  cu::CUresult (*cuEventRecord)(cu::CUevent, cu::CUstream);
  cu::CUresult (*cuEventSynchronize)(cu::CUevent);
  cu::CUresult (*cuEventElapsedTime)(float *, cu::CUevent, cu::CUevent);
  cu::CUresult (*cuEventDestroy)(cu::CUevent);
  cu::CUresult (*cuLaunchKernelEx)(const cu::CUlaunchConfig *, cu::CUfunction,
                                   void **, void **);
  cu::CUresult (*cuMemAlloc)(cu::CUdeviceptr *, size_t);
  // TMA descriptors (CUDA 12, sm_90): the enums are passed as their values.
  cu::CUresult (*cuTensorMapEncodeTiled)(
      void *tensorMap, unsigned dataType, unsigned rank, void *globalAddress,
      const uint64_t *globalDim, const uint64_t *globalStrides,
      const uint32_t *boxDim, const uint32_t *elementStrides,
      unsigned interleave, unsigned swizzle, unsigned l2Promotion,
      unsigned oobFill);
};

class CudaDriver {
public:
  /// The process-wide driver: $TILE_LIBCUDA when set, else libcuda.so.1.
  static CudaDriver &get();

  /// A driver loaded from `libraryPath` (tests point it at missing files).
  explicit CudaDriver(std::string libraryPath);
  ~CudaDriver();
  CudaDriver(const CudaDriver &) = delete;
  CudaDriver &operator=(const CudaDriver &) = delete;

  /// Number of CUDA devices; 0 when there is no driver or no GPU. Never throws.
  int deviceCount();
  /// Empty when the driver is usable, else why not.
  std::string unavailableReason();
  /// The entry points; throws CudaError when the driver is unusable.
  const CudaApiTable &api();

  /// Throws a CudaError for a failed call: "<what>: <NAME> (<message>)".
  void check(cu::CUresult result, const char *what);
  std::string describe(cu::CUresult result);
  /// Throws a CudaError unless the optional entry point `fn` was resolved.
  void require(const void *fn, const char *name);

  /// The driver's version as cuDriverGetVersion reports it (13000 = 13.0).
  int driverVersion();
  /// The device's marketing name ("NVIDIA H200").
  std::string deviceName(int device);

  /// The primary context of `device`, retained once and kept for the life of
  /// the process (modules loaded into it stay valid).
  cu::CUcontext primaryContext(int device);
  /// The context a launch on `stream` runs in: the stream's own, else the
  /// current one, else device 0's primary context.
  cu::CUcontext contextForStream(cu::CUstream stream);
  /// "sm_90" for a device of compute capability 9.0.
  std::string archOf(int device);
  /// Most dynamic shared memory a block may opt into on the context's device.
  int maxSharedOptIn(cu::CUcontext ctx);
  /// cuTensorMapEncodeTiled of `encoding` into `out` (a CUresult; -1 when
  /// the driver lacks the entry point).
  cu::CUresult encodeTensorMap(TensorMapBytes &out,
                               const TensorMapEncoding &encoding);

private:
  void load();

  std::string libraryPath;
  std::once_flag loaded;
  // Set once the driver loaded and is usable: api() is on every launch's
  // path, and std::call_once costs a TLS lookup per call.
  std::atomic<bool> usable{false};
  void *handle = nullptr;
  CudaApiTable table{};
  std::string failure; // set when unusable
  int numDevices = 0;
  std::mutex contextsMutex; // serializes retaining primary contexts
  // By device ordinal; null until retained, then fixed: read without the
  // lock by launches that find no current context.
  std::unique_ptr<std::atomic<cu::CUcontext>[]> primaryContexts;
};

/// Makes `ctx` current for a scope and restores what was current before, so
/// a launch never changes the caller's (torch's) current device.
class ScopedContext {
public:
  ScopedContext(CudaDriver &driver, cu::CUcontext ctx);
  /// When the caller has just read the current context (`current`).
  ScopedContext(CudaDriver &driver, cu::CUcontext ctx, cu::CUcontext current);
  ~ScopedContext();

private:
  CudaDriver &driver;
  cu::CUcontext previous = nullptr;
  bool switched = false;
};

} // namespace tile::runtime

#endif
