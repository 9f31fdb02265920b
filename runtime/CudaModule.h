//===- CudaModule.h - a cubin, loaded lazily per context --------*- C++ -*-===//
//
// Holds a kernel's cubin bytes and loads them into a context the first time
// the kernel launches there (one CUmodule per context, e.g. per device).
//
//===----------------------------------------------------------------------===//
#ifndef TILE_RUNTIME_CUDAMODULE_H
#define TILE_RUNTIME_CUDAMODULE_H

#include "runtime/CudaDriver.h"

#include <array>
#include <atomic>
#include <mutex>
#include <string>
#include <vector>

namespace tile::runtime {

struct LaunchConfig {
  std::array<unsigned, 3> grid{1, 1, 1};
  std::array<unsigned, 3> block{128, 1, 1};
  unsigned sharedMem = 0; // dynamic shared memory, bytes
  /// The launch may start before the previous kernel on its stream ends
  /// (cuLaunchKernelEx with programmatic stream serialization): the kernel
  /// waits for it in griddepcontrol.wait. sm_90 and newer.
  bool programmaticDependentLaunch = false;
  /// Blocks per thread-block cluster along grid axis 0 (sm_90 and newer;
  /// 1: none). The grid's axis 0 must be a multiple of it.
  unsigned clusterDimX = 1;
};

class CudaModule {
public:
  CudaModule(CudaDriver &driver, std::string image, std::string kernelName,
             unsigned sharedMem);
  ~CudaModule();
  CudaModule(const CudaModule &) = delete;
  CudaModule &operator=(const CudaModule &) = delete;

  /// The kernel in `ctx`, loading the module there on first use and raising
  /// its dynamic shared memory limit when it needs more than 48 KiB.
  cu::CUfunction function(cu::CUcontext ctx);

  /// Launches on `stream` (0: the current context's legacy stream) with the
  /// packed parameters. Throws CudaError with the driver's message.
  void launch(const LaunchConfig &config, cu::CUstream stream, void **params);

  /// launch() when the kernel is loaded in the launch's context already;
  /// false, launching nothing, when launch() would load the module first.
  /// The Python bindings keep the GIL for this and release it only for the
  /// load (milliseconds), as torch keeps it for its launches.
  bool launchIfLoaded(const LaunchConfig &config, cu::CUstream stream,
                      void **params);

  const std::string &name() const { return kernelName; }
  const std::string &image() const { return cubin; }

private:
  struct Loaded {
    cu::CUcontext ctx;
    cu::CUmodule module;
    cu::CUfunction function;
  };

  /// The kernel in `ctx` when loaded there, else null; takes no lock.
  cu::CUfunction loadedFunction(cu::CUcontext ctx) const;
  bool launchImpl(const LaunchConfig &config, cu::CUstream stream,
                  void **params, bool mayLoad);

  CudaDriver &driver;
  std::string cubin;
  std::string kernelName;
  unsigned sharedMem;
  std::mutex mutex;
  std::vector<Loaded> loaded;
  // The first contexts' functions, for the launch path without the mutex:
  // a slot is written once, under the mutex, before `published` counts it.
  static constexpr int kFastSlots = 8;
  std::array<std::pair<cu::CUcontext, cu::CUfunction>, kFastSlots> fast{};
  std::atomic<int> published{0};
};

} // namespace tile::runtime

#endif
