//===- FakeCuda.cpp - a libcuda stand-in for GPU-free launch tests --------===//
//
// Implements the driver entry points the runtime resolves, with two devices
// (FAKE_CUDA_DEVICES overrides), and records what a launch would have done.
// Tests load it through CudaDriver("<path>") or TILE_LIBCUDA and read the
// record through the fake_cuda_* functions (C, so ctypes can call them).
// Images starting with "BAD" fail to load; a kernel is found when its name
// occurs in the image (any name in a real cubin); a launch with more than 48
// KiB of dynamic shared memory fails unless the function opted in, as on real
// hardware. Timing: a launch advances a fake GPU clock by 1 us per block, and
// an event records that clock, so a config with fewer blocks times as faster.
// Built with FAKE_CUDA_MINIMAL it lacks the optional entry points (events,
// capture queries, device names), as an old driver would.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

namespace {
using CUresult = int;
struct Ctx {
  int device;
};
struct Module {
  Ctx *ctx;
  std::string image; // empty for an ELF (cubin): every name is found
};
struct Function {
  Module *module;
  std::string name;
  int maxDynamicShared = 48 * 1024;
};

constexpr int kMaxDevices = 8;
Ctx contexts[kMaxDevices] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
thread_local Ctx *current = nullptr;
std::mutex mutex;

struct Record {
  int loads = 0, unloads = 0, launches = 0, retains = 0;
  unsigned grid[3] = {}, block[3] = {}, shared = 0;
  uintptr_t stream = 0;
  int launchDevice = -1;
  std::string kernel;
  int paramCount = 0;
  std::vector<uint64_t> params; // 8 bytes read through each pointer
  int sharedAttribute = -1;
  int carveout = -1;            // its preferred shared memory carveout
  unsigned clusterDim = 1;      // cuLaunchKernelEx's cluster, axis 0
  bool programmatic = false;    // its programmatic stream serialization
  double clockMs = 0;                  // the fake GPU clock
  int liveEvents = 0;                  // created and not yet destroyed
  uintptr_t capturing = ~uintptr_t(0); // the stream capturing a graph, if any
  std::vector<std::string> encodes;    // cuTensorMapEncodeTiled calls
} record;

struct Event {
  double ms = -1; // -1 until recorded
};

int deviceCount() {
  const char *env = std::getenv("FAKE_CUDA_DEVICES");
  int n = env ? std::atoi(env) : 2;
  return n < 0 ? 0 : (n > kMaxDevices ? kMaxDevices : n);
}

/// A stream handle names its device: 0x5000 + 16 * device.
Ctx *streamContext(uintptr_t s) {
  if (s < 0x5000 || (s - 0x5000) % 16 || int((s - 0x5000) / 16) >= deviceCount())
    return nullptr;
  return &contexts[(s - 0x5000) / 16];
}

/// The errors the fake can return, with the driver's name and message for
/// each: one table so that cuGetErrorName and cuGetErrorString agree.
struct ErrorText {
  CUresult code;
  const char *name, *message;
};
constexpr ErrorText kErrors[] = {
    {1, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {200, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {400, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {500, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
};

/// Sets `*s` to `r`'s name or message (null and CUDA_ERROR_INVALID_VALUE
/// for an unknown code), as the driver does.
CUresult describeError(CUresult r, const char **s,
                       const char *ErrorText::*text) {
  for (const ErrorText &e : kErrors)
    if (e.code == r) {
      *s = e.*text;
      return 0;
    }
  *s = nullptr;
  return 1;
}
} // namespace

#define API extern "C" __attribute__((visibility("default")))

API CUresult cuInit(unsigned) { return 0; }
API CUresult cuDriverGetVersion(int *v) {
  *v = 13000;
  return 0;
}
API CUresult cuGetErrorName(CUresult r, const char **s) {
  return describeError(r, s, &ErrorText::name);
}
API CUresult cuGetErrorString(CUresult r, const char **s) {
  return describeError(r, s, &ErrorText::message);
}
API CUresult cuDeviceGetCount(int *n) {
  *n = deviceCount();
  return 0;
}
API CUresult cuDeviceGet(int *dev, int ordinal) {
  if (ordinal < 0 || ordinal >= deviceCount())
    return 1;
  *dev = ordinal;
  return 0;
}
API CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
  switch (attr) {
  case 75: // compute capability major
    *v = 9;
    return 0;
  case 76:
    *v = 0;
    return 0;
  case 97: // max shared memory per block, opt-in
    *v = 227 * 1024;
    return 0;
  }
  return 1;
}
API CUresult cuDevicePrimaryCtxRetain(Ctx **ctx, int dev) {
  std::lock_guard<std::mutex> lock(mutex);
  ++record.retains;
  *ctx = &contexts[dev];
  return 0;
}
API CUresult cuCtxGetCurrent(Ctx **ctx) {
  *ctx = current;
  return 0;
}
API CUresult cuCtxSetCurrent(Ctx *ctx) {
  current = ctx;
  return 0;
}
API CUresult cuCtxGetDevice(int *dev) {
  if (!current)
    return 201;
  *dev = current->device;
  return 0;
}
API CUresult cuStreamGetCtx(void *stream, Ctx **ctx) {
  *ctx = streamContext(reinterpret_cast<uintptr_t>(stream));
  return *ctx ? 0 : 400;
}
API CUresult cuModuleLoadData(Module **module, const void *image) {
  if (!current)
    return 201;
  const char *text = static_cast<const char *>(image);
  if (std::strncmp(text, "BAD", 3) == 0)
    return 200;
  std::lock_guard<std::mutex> lock(mutex);
  ++record.loads;
  bool elf = std::strncmp(text, "\x7f" "ELF", 4) == 0;
  *module = new Module{current, elf ? "" : text};
  return 0;
}
API CUresult cuModuleUnload(Module *module) {
  std::lock_guard<std::mutex> lock(mutex);
  ++record.unloads;
  delete module;
  return 0;
}
API CUresult cuModuleGetFunction(Function **fn, Module *module,
                                 const char *name) {
  if (!module->image.empty() && module->image.find(name) == std::string::npos)
    return 500;
  *fn = new Function{module, name}; // leaked, as handles are in the driver
  return 0;
}
API CUresult cuFuncSetAttribute(Function *fn, int attr, int value) {
  if (attr == 9) { // the preferred shared memory carveout, in percent
    if (value < -1 || value > 100)
      return 1;
    std::lock_guard<std::mutex> lock(mutex);
    record.carveout = value;
    return 0;
  }
  if (attr != 8 || value > 227 * 1024)
    return 1;
  fn->maxDynamicShared = value;
  std::lock_guard<std::mutex> lock(mutex);
  record.sharedAttribute = value;
  return 0;
}
API CUresult cuLaunchKernel(Function *fn, unsigned gx, unsigned gy,
                            unsigned gz, unsigned bx, unsigned by, unsigned bz,
                            unsigned shared, void *stream, void **params,
                            void **extra) {
  if (int(shared) > fn->maxDynamicShared || gy > 65535 || gz > 65535 ||
      bx * by * bz > 1024 || extra)
    return 1;
  Ctx *want = fn->module->ctx;
  Ctx *streamCtx = streamContext(reinterpret_cast<uintptr_t>(stream));
  if ((streamCtx && streamCtx != want) || (!streamCtx && current != want))
    return 400; // a stream or current context of another device
  std::lock_guard<std::mutex> lock(mutex);
  ++record.launches;
  record.grid[0] = gx, record.grid[1] = gy, record.grid[2] = gz;
  record.block[0] = bx, record.block[1] = by, record.block[2] = bz;
  record.shared = shared;
  record.stream = reinterpret_cast<uintptr_t>(stream);
  record.launchDevice = want->device;
  record.kernel = fn->name;
  record.clockMs += 0.001 * double(gx) * gy * gz;
  record.clusterDim = 1; // cuLaunchKernelEx sets its own after
  record.programmatic = false;
  record.params.assign(size_t(record.paramCount), 0);
  for (int i = 0; i < record.paramCount; ++i)
    std::memcpy(&record.params[size_t(i)], params[i], 8);
  return 0;
}

#ifndef FAKE_CUDA_MINIMAL
// cuda.h's CUlaunchConfig and CUlaunchAttribute (ids 4: cluster dimension,
// 6: programmatic stream serialization).
struct LaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    int programmatic;
    unsigned cluster[3];
  } value;
};
struct LaunchConfig {
  unsigned grid[3], block[3], shared;
  void *stream;
  LaunchAttribute *attrs;
  unsigned numAttrs;
};
API CUresult cuLaunchKernelEx(const LaunchConfig *config, Function *fn,
                              void **params, void **extra) {
  unsigned cluster = 1;
  bool programmatic = false;
  for (unsigned i = 0; i < config->numAttrs; ++i) {
    const LaunchAttribute &attr = config->attrs[i];
    if (attr.id == 4) {
      cluster = attr.value.cluster[0];
      // As the driver: a cluster divides the grid, at most 8 blocks.
      if (!cluster || cluster > 8 || config->grid[0] % cluster ||
          attr.value.cluster[1] != 1 || attr.value.cluster[2] != 1)
        return 1;
    } else if (attr.id == 6) {
      programmatic = attr.value.programmatic != 0;
    } else {
      return 1;
    }
  }
  CUresult r = cuLaunchKernel(fn, config->grid[0], config->grid[1],
                              config->grid[2], config->block[0],
                              config->block[1], config->block[2],
                              config->shared, config->stream, params, extra);
  if (r == 0) {
    std::lock_guard<std::mutex> lock(mutex);
    record.clusterDim = cluster;
    record.programmatic = programmatic;
  }
  return r;
}
API CUresult cuDeviceGetName(char *name, int len, int dev) {
  if (dev < 0 || dev >= deviceCount() || len < 1)
    return 1;
  std::snprintf(name, size_t(len), "Fake GPU %d", dev);
  return 0;
}
API CUresult cuStreamIsCapturing(void *stream, int *status) {
  uintptr_t s = reinterpret_cast<uintptr_t>(stream);
  if (s == 0 && record.capturing != ~uintptr_t(0) && record.capturing != 0)
    return 906; // the legacy stream while another one captures
  *status = s == record.capturing ? 1 : 0;
  return 0;
}
API CUresult cuStreamSynchronize(void *) { return 0; }
API CUresult cuEventCreate(Event **event, unsigned) {
  std::lock_guard<std::mutex> lock(mutex);
  ++record.liveEvents;
  *event = new Event;
  return 0;
}
API CUresult cuEventRecord(Event *event, void *) {
  std::lock_guard<std::mutex> lock(mutex);
  event->ms = record.clockMs;
  return 0;
}
API CUresult cuEventSynchronize(Event *event) {
  return event->ms < 0 ? 400 : 0;
}
API CUresult cuEventElapsedTime_v2(float *ms, Event *start, Event *end) {
  if (start->ms < 0 || end->ms < 0)
    return 400;
  *ms = float(end->ms - start->ms);
  return 0;
}
API CUresult cuEventDestroy_v2(Event *event) {
  std::lock_guard<std::mutex> lock(mutex);
  --record.liveEvents;
  delete event;
  return 0;
}
/// Checks what the real driver documents, records the call as text
/// ("type=6 rank=2 address=... dims=64,128 strides=128 box=64,128
/// elementStrides=1,1 interleave=0 swizzle=3 l2=2 oob=0") and writes the
/// map: its first word is the global address, so a launch's parameters show
/// which array a map describes.
API CUresult cuTensorMapEncodeTiled(uint64_t *map, unsigned type, unsigned rank,
                                    void *address, const uint64_t *dims,
                                    const uint64_t *strides,
                                    const uint32_t *box,
                                    const uint32_t *elementStrides,
                                    unsigned interleave, unsigned swizzle,
                                    unsigned l2, unsigned oob) {
  auto addr = reinterpret_cast<uintptr_t>(address);
  if (reinterpret_cast<uintptr_t>(map) % 64 || addr % 16 || rank < 1 ||
      rank > 5 || type > 12)
    return 1;
  for (unsigned i = 0; i < rank; ++i)
    if (!dims[i] || dims[i] > (uint64_t(1) << 32) || !box[i] || box[i] > 256 ||
        !elementStrides[i] || elementStrides[i] > 8 ||
        (i + 1 < rank &&
         (strides[i] % 16 || strides[i] >= (uint64_t(1) << 40))))
      return 1;
  std::string text = "type=" + std::to_string(type) +
                     " rank=" + std::to_string(rank) +
                     " address=" + std::to_string(addr);
  auto list = [&](const char *name, auto *values, unsigned n) {
    text += std::string(" ") + name + "=";
    for (unsigned i = 0; i < n; ++i)
      text += (i ? "," : "") + std::to_string(values[i]);
  };
  list("dims", dims, rank);
  list("strides", strides, rank - 1);
  list("box", box, rank);
  list("elementStrides", elementStrides, rank);
  text += " interleave=" + std::to_string(interleave) +
          " swizzle=" + std::to_string(swizzle) + " l2=" + std::to_string(l2) +
          " oob=" + std::to_string(oob);
  std::lock_guard<std::mutex> lock(mutex);
  record.encodes.push_back(text);
  std::memset(map, 0, 128);
  map[0] = addr;
  return 0;
}
#endif

// Test controls and observations.
API void fake_cuda_reset(int paramCount) {
  std::lock_guard<std::mutex> lock(mutex);
  record = Record();
  record.paramCount = paramCount;
  current = nullptr;
}
API int fake_cuda_loads() { return record.loads; }
API int fake_cuda_unloads() { return record.unloads; }
API int fake_cuda_launches() { return record.launches; }
API int fake_cuda_retains() { return record.retains; }
API int fake_cuda_launch_device() { return record.launchDevice; }
API int fake_cuda_shared_attribute() { return record.sharedAttribute; }
API int fake_cuda_carveout() { return record.carveout; }
API unsigned fake_cuda_grid(int d) { return record.grid[d]; }
API unsigned fake_cuda_block(int d) { return record.block[d]; }
API unsigned fake_cuda_shared() { return record.shared; }
API unsigned fake_cuda_cluster_dim() { return record.clusterDim; }
API int fake_cuda_programmatic() { return record.programmatic; }
API uintptr_t fake_cuda_stream() { return record.stream; }
API const char *fake_cuda_kernel() { return record.kernel.c_str(); }
API uint64_t fake_cuda_param(int i) { return record.params[size_t(i)]; }
API int fake_cuda_current_device() { return current ? current->device : -1; }
API int fake_cuda_live_events() { return record.liveEvents; }
API double fake_cuda_clock_ms() { return record.clockMs; }
API int fake_cuda_encodes() { return int(record.encodes.size()); }
API const char *fake_cuda_encode(int i) {
  return record.encodes[size_t(i)].c_str();
}
/// The stream that captures a graph from now on; ~0 for none.
API void fake_cuda_set_capturing(uintptr_t stream) {
  record.capturing = stream;
}
API void fake_cuda_set_current(int device) {
  current = device < 0 ? nullptr : &contexts[device];
}
