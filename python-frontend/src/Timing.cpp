//===- Timing.cpp - GPU timing and device facts for autotuning ------------===//
//
// time_launches and time_interleaved bracket each run of a Python callable
// with a pair of CUDA events recorded on the launch stream, so what is
// measured is the GPU's time for the work the callable enqueued there, not
// the host's; time_interleaved has several callables take turns. The
// autotuner's cache key needs the device's name and the driver's version;
// stream_is_capturing lets it refuse to time inside a CUDA graph capture
// (recording events and launching there would end up in the graph).
//
//===----------------------------------------------------------------------===//
#include "Timing.h"

#include "Kernel.h"

#include "runtime/CudaDriver.h"
#include "runtime/L2Flush.h"

#include <pybind11/stl.h>

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

/// Times each of `fns` in `rounds` rounds after `warmup` untimed calls of
/// each: round r runs every fn once, starting at fn r mod n, so that no fn
/// always follows the same one and the machine's drift falls on all alike
/// (as bench/harness.py's interleaved_medians). A run is befores[i]() when
/// given, then (flushBytes > 0) a write of that many bytes so that the run
/// starts from a cold L2 and the host's launch hides behind it (Triton's
/// do_bench), then fns[i]() alone between two events on `stream`. Every run
/// is enqueued before one wait at the end: a wait per run would idle the
/// GPU between runs, which bench's timing does not. Returns each fn's
/// times in milliseconds.
std::vector<std::vector<double>>
timeInterleaved(const std::vector<py::function> &fns, uintptr_t stream,
                int warmup, int rounds, const std::vector<py::object> &befores,
                size_t flushBytes) {
  if (fns.empty() || warmup < 0 || rounds < 1)
    throw py::value_error("time_interleaved needs functions, warmup >= 0 "
                          "and rounds >= 1");
  if (!befores.empty() && befores.size() != fns.size())
    throw py::value_error("time_interleaved needs one before per function");
  rt::CudaDriver &driver = rt::CudaDriver::get();
  size_t n = fns.size();
  std::vector<std::vector<double>> times(n);
  auto before = [&](size_t i) {
    if (!befores.empty() && !befores[i].is_none())
      befores[i]();
  };
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
    for (size_t i = 0; i < n; ++i)
      for (int w = 0; w < warmup; ++w) {
        before(i);
        fns[i]();
      }
    // Events [2 * (r * n + i)] and the next bracket run r of fn i.
    EventSet events(driver, 2 * n * size_t(rounds));
    size_t last = 0; // the event enqueued last
    for (size_t r = 0; r < size_t(rounds); ++r)
      for (size_t step = 0; step < n; ++step) {
        size_t i = (step + r) % n;
        before(i);
        if (flushBytes)
          rt::flushL2(driver, s, flushBytes);
        size_t e = 2 * (r * n + i);
        driver.check(api.cuEventRecord(events[e], s), "cuEventRecord");
        fns[i]();
        driver.check(api.cuEventRecord(events[e + 1], s), "cuEventRecord");
        last = e + 1;
      }
    {
      py::gil_scoped_release release;
      driver.check(api.cuEventSynchronize(events[last]), "cuEventSynchronize");
    }
    for (size_t r = 0; r < size_t(rounds); ++r)
      for (size_t i = 0; i < n; ++i) {
        float ms = 0;
        size_t e = 2 * (r * n + i);
        driver.check(api.cuEventElapsedTime(&ms, events[e], events[e + 1]),
                     "cuEventElapsedTime");
        times[i].push_back(ms);
      }
  } catch (const rt::CudaError &e) {
    throw LaunchError{e.what()};
  }
  return times;
}

std::vector<double> timeLaunches(const py::function &fn, uintptr_t stream,
                                 int warmup, int rep, const py::object &before,
                                 size_t flushBytes) {
  if (warmup < 0 || rep < 1)
    throw py::value_error("time_launches needs warmup >= 0 and rep >= 1");
  return timeInterleaved({fn}, stream, warmup, rep, {before}, flushBytes)[0];
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
        "the timed span; flush_bytes > 0 clears L2 with a write of that "
        "size before each timed call (as Triton's do_bench). Raises "
        "LaunchError while the stream is capturing.");
  m.def("time_interleaved", &timeInterleaved, py::arg("fns"), py::arg("stream"),
        py::arg("warmup") = 0, py::arg("rounds") = 10,
        py::arg("befores") = std::vector<py::object>(),
        py::arg("flush_bytes") = 0,
        "time_launches for several functions taking turns run by run (round "
        "r starts at fns[r % n]), every run enqueued before one wait; "
        "befores: one callable (or None) per function. Returns a list of "
        "each function's `rounds` times in ms.");
  m.def("l2_flush_ptx", &rt::l2FlushPtx,
        "The PTX of the kernel that clears L2 before each timed run.");
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
