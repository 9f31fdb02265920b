//===- Timing.cpp - GPU timing and device facts for autotuning ------------===//
//
// time_launches brackets each run of a Python callable with a pair of CUDA
// events recorded on the launch stream, so what is measured is the GPU's
// time for the work the callable enqueued there, not the host's. The
// autotuner's cache key needs the device's name and the driver's version;
// stream_is_capturing lets it refuse to time inside a CUDA graph capture
// (recording events and launching there would end up in the graph).
//
//===----------------------------------------------------------------------===//
#include "Timing.h"

#include "Kernel.h"

#include "runtime/CudaDriver.h"

#include <pybind11/stl.h>

#include <map>
#include <mutex>
#include <vector>

namespace py = pybind11;
namespace rt = tile::runtime;
namespace cu = tile::runtime::cu;
using namespace tile_py;

namespace {

cu::CUstream asStream(uintptr_t stream) {
  return reinterpret_cast<cu::CUstream>(stream);
}

/// Events created for one timing call, destroyed however it ends.
class EventSet {
public:
  EventSet(rt::CudaDriver &driver, size_t count) : driver(driver) {
    const rt::CudaApiTable &api = driver.api();
    events.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      cu::CUevent e = nullptr;
      driver.check(api.cuEventCreate(&e, cu::CU_EVENT_DEFAULT),
                   "cuEventCreate");
      events.push_back(e);
    }
  }
  ~EventSet() {
    for (cu::CUevent e : events)
      driver.api().cuEventDestroy(e);
  }
  cu::CUevent operator[](size_t i) const { return events[i]; }

private:
  rt::CudaDriver &driver;
  std::vector<cu::CUevent> events;
};

void requireTimingEntries(rt::CudaDriver &driver) {
  const rt::CudaApiTable &api = driver.api();
  auto need = [&](const void *fn, const char *name) {
    driver.require(fn, name);
  };
  need(reinterpret_cast<const void *>(api.cuStreamIsCapturing),
       "cuStreamIsCapturing");
  need(reinterpret_cast<const void *>(api.cuEventCreate), "cuEventCreate");
  need(reinterpret_cast<const void *>(api.cuEventRecord), "cuEventRecord");
  need(reinterpret_cast<const void *>(api.cuEventSynchronize),
       "cuEventSynchronize");
  need(reinterpret_cast<const void *>(api.cuEventElapsedTime),
       "cuEventElapsedTime");
  need(reinterpret_cast<const void *>(api.cuEventDestroy), "cuEventDestroy");
}

/// Whether `stream` (in the current context) is capturing a graph. Asking
/// the legacy stream while another stream captures globally is itself an
/// error the driver reports as CUDA_ERROR_STREAM_CAPTURE_IMPLICIT: a launch
/// there would break that capture, so it counts as capturing.
bool isCapturing(rt::CudaDriver &driver, cu::CUstream stream) {
  int status = cu::CU_STREAM_CAPTURE_STATUS_NONE;
  cu::CUresult r = driver.api().cuStreamIsCapturing(stream, &status);
  if (r == cu::CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
    return true;
  driver.check(r, "cuStreamIsCapturing");
  return status != cu::CU_STREAM_CAPTURE_STATUS_NONE;
}

bool streamIsCapturing(uintptr_t stream) {
  rt::CudaDriver &driver = rt::CudaDriver::get();
  if (driver.deviceCount() == 0)
    return false; // no driver: nothing can be capturing
  try {
    driver.require(
        reinterpret_cast<const void *>(driver.api().cuStreamIsCapturing),
        "cuStreamIsCapturing");
    rt::ScopedContext scope(driver, driver.contextForStream(asStream(stream)));
    return isCapturing(driver, asStream(stream));
  } catch (const rt::CudaError &e) {
    throw LaunchError{e.what()};
  }
}

/// A scratch buffer of at least `bytes` in the current context, allocated
/// once and kept for the process; 0 when the driver lacks the entry points
/// (the fake driver): timing then runs without flushing.
cu::CUdeviceptr flushBuffer(rt::CudaDriver &driver, size_t bytes) {
  const rt::CudaApiTable &api = driver.api();
  if (!api.cuMemAlloc || !api.cuMemsetD32Async || bytes == 0)
    return 0;
  static std::mutex lock;
  static std::map<std::pair<cu::CUcontext, size_t>, cu::CUdeviceptr> buffers;
  cu::CUcontext ctx = nullptr;
  driver.check(api.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
  std::lock_guard<std::mutex> guard(lock);
  cu::CUdeviceptr &buffer = buffers[{ctx, bytes}];
  if (!buffer)
    driver.check(api.cuMemAlloc(&buffer, bytes), "cuMemAlloc (L2 flush)");
  return buffer;
}

/// Calls `before()` (when given) then `fn()` `warmup` times untimed, then
/// `rep` times with `fn()` alone between two events on `stream`; returns the
/// `rep` GPU times in milliseconds. `fn` must enqueue its work on `stream`.
/// With `flushBytes`, a memset of that many bytes runs before each launch,
/// as Triton's do_bench does: every run starts with a cold L2, and the GPU
/// is busy while the host enqueues the run, so the host's launch time is
/// not in the measurement.
std::vector<double> timeLaunches(const py::function &fn, uintptr_t stream,
                                 int warmup, int rep, const py::object &before,
                                 size_t flushBytes) {
  if (warmup < 0 || rep < 1)
    throw py::value_error("time_launches needs warmup >= 0 and rep >= 1");
  rt::CudaDriver &driver = rt::CudaDriver::get();
  std::vector<double> times;
  try {
    requireTimingEntries(driver);
    const rt::CudaApiTable &api = driver.api();
    cu::CUstream s = asStream(stream);
    rt::ScopedContext scope(driver, driver.contextForStream(s));
    if (isCapturing(driver, s))
      throw LaunchError{
          "cannot time kernel launches while the stream is capturing a CUDA "
          "graph: run the autotuned kernel once before the capture (warm "
          "up), so that the capture replays the tuned choice"};
    cu::CUdeviceptr scratch = flushBuffer(driver, flushBytes);
    auto flush = [&] {
      if (scratch)
        driver.check(api.cuMemsetD32Async(scratch, 0, flushBytes / 4, s),
                     "cuMemsetD32Async (L2 flush)");
    };
    for (int i = 0; i < warmup; ++i) {
      if (!before.is_none())
        before();
      fn();
    }
    EventSet events(driver, 2 * size_t(rep));
    for (int i = 0; i < rep; ++i) {
      if (!before.is_none())
        before();
      flush();
      driver.check(api.cuEventRecord(events[2 * size_t(i)], s),
                   "cuEventRecord");
      fn();
      driver.check(api.cuEventRecord(events[2 * size_t(i) + 1], s),
                   "cuEventRecord");
    }
    {
      py::gil_scoped_release release;
      driver.check(api.cuEventSynchronize(events[2 * size_t(rep) - 1]),
                   "cuEventSynchronize");
    }
    for (int i = 0; i < rep; ++i) {
      float ms = 0;
      driver.check(api.cuEventElapsedTime(&ms, events[2 * size_t(i)],
                                          events[2 * size_t(i) + 1]),
                   "cuEventElapsedTime");
      times.push_back(ms);
    }
  } catch (const rt::CudaError &e) {
    throw LaunchError{e.what()};
  }
  return times;
}

void synchronizeStream(uintptr_t stream) {
  rt::CudaDriver &driver = rt::CudaDriver::get();
  try {
    const rt::CudaApiTable &api = driver.api();
    driver.require(reinterpret_cast<const void *>(api.cuStreamSynchronize),
                   "cuStreamSynchronize");
    rt::ScopedContext scope(driver, driver.contextForStream(asStream(stream)));
    py::gil_scoped_release release;
    driver.check(api.cuStreamSynchronize(asStream(stream)),
                 "cuStreamSynchronize");
  } catch (const rt::CudaError &e) {
    throw LaunchError{e.what()};
  }
}

std::string deviceName(int device) {
  try {
    return rt::CudaDriver::get().deviceName(device);
  } catch (const rt::CudaError &e) {
    throw LaunchError{e.what()};
  }
}

int driverVersion() {
  try {
    return rt::CudaDriver::get().driverVersion();
  } catch (const rt::CudaError &e) {
    throw LaunchError{e.what()};
  }
}

} // namespace

void tile_py::registerTiming(py::module_ &m) {
  m.def("time_launches", &timeLaunches, py::arg("fn"), py::arg("stream"),
        py::arg("warmup") = 1, py::arg("rep") = 10,
        py::arg("before") = py::none(), py::arg("flush_bytes") = 0,
        "GPU milliseconds of each of `rep` calls of fn() (which enqueues its "
        "work on `stream`), measured with CUDA events on that stream after "
        "`warmup` untimed calls; before() runs ahead of every call, outside "
        "the timed span; flush_bytes > 0 clears L2 with a memset of that "
        "size before each timed call (as Triton's do_bench). Raises "
        "LaunchError while the stream is capturing.");
  m.def("stream_is_capturing", &streamIsCapturing, py::arg("stream"),
        "Whether the CUDA stream (a handle as an int; 0 is the legacy "
        "stream) is capturing a CUDA graph; False without a driver.");
  m.def("cuda_synchronize", &synchronizeStream, py::arg("stream") = 0,
        "Waits for the work on a CUDA stream to finish.");
  m.def("cuda_device_name", &deviceName, py::arg("device") = 0,
        "The name of a CUDA device ('NVIDIA H200'); raises LaunchError.");
  m.def("cuda_driver_version", &driverVersion,
        "The CUDA driver's version (13000 = 13.0); raises LaunchError.");
}
