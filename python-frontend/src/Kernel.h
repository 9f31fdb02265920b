//===- Kernel.h - the kernel object of the _tile module ---------*- C++ -*-===//
//
// `_tile.Kernel` is this abstract class; CpuKernel.cpp and CudaKernel.cpp
// implement it. docs/internals.md section 2 is the Python-facing contract.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_PY_KERNEL_H
#define TILE_PY_KERNEL_H

#include "runtime/DiskCache.h"

#include <pybind11/pybind11.h>

#include <array>
#include <climits>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mlir {
class ModuleOp;
namespace tile {
struct CompileOptions;
} // namespace tile
} // namespace mlir

namespace tile_py {
namespace py = pybind11;

class Kernel {
public:
  virtual ~Kernel() = default;

  /// Runs the kernel on `grid` (x, y, z). `args` is the flat tuple: per
  /// array (data_ptr, *shape, *strides in elements), per scalar its value.
  /// Throws LaunchError.
  virtual void launch(const std::array<int64_t, 3> &grid,
                      const py::tuple &args, uintptr_t stream) = 0;

  /// launch() of `n` flat values that are not in a tuple: the dispatcher
  /// calls this directly (no tuple, no `fast_launch` call to parse). By
  /// default through a tuple. Needs the GIL.
  virtual void launchValues(const std::array<int64_t, 3> &grid,
                            PyObject *const *args, size_t n, uintptr_t stream);

  /// launch() as a programmatic dependent launch: the kernel may start
  /// before the previous one on `stream` ends, and waits for it in
  /// tile.grid_dependency_control_wait (CUDA sm_90). Where launches run one
  /// after another anyway (the CPU), a plain launch.
  virtual void launchDependent(const std::array<int64_t, 3> &grid,
                               const py::tuple &args, uintptr_t stream) {
    launch(grid, args, stream);
  }

  /// `Kernel.asm`: every text stage, then the binary ones as bytes.
  py::dict asmDict() const;

  std::string name;
  std::string target;
  int numWarps = 0;
  int sharedMem = 0;
  /// Blocks per thread-block cluster along grid axis 0 (1: none); launches
  /// whose grid axis 0 it divides run in clusters.
  int clusterSize = 1;
  /// Stage name -> IR text, in pipeline order ("tile", "fused", ...).
  std::vector<std::pair<std::string, std::string>> stages;
  /// Stage name -> bytes ("cubin").
  std::vector<std::pair<std::string, std::string>> binaries;
  /// The tensor-map parameters the launch encodes (TMA), in order:
  /// "array=0;box=128x64;type=f16;swizzle=128" (runtime/TensorMap.h).
  std::vector<std::string> tensorMaps;
};

/// CUDA's grid limits (x, y, z). Every backend applies them, so a kernel
/// launches the same everywhere, and the CPU backend's block count (their
/// product) fits in an int64_t.
constexpr std::array<int64_t, 3> kMaxGrid = {INT32_MAX, 65535, 65535};

/// Why `grid` cannot be launched, or empty: a negative dimension or one
/// above its limit.
inline std::string gridError(const std::array<int64_t, 3> &grid) {
  for (size_t d = 0; d < 3; ++d)
    if (grid[d] < 0 || grid[d] > kMaxGrid[d])
      return std::string("grid dimension ") + "xyz"[d] + " is " +
             std::to_string(grid[d]) +
             (grid[d] < 0 ? ", below 0"
                          : ", above its limit of " +
                                std::to_string(kMaxGrid[d]) + " blocks");
  return {};
}

/// Raised as `_tile.CompileError` (.stage, .reproducer, str = diagnostics).
struct CompileError {
  std::string stage, message, reproducer;
};
/// Raised as `_tile.LaunchError`.
struct LaunchError {
  std::string message;
};

/// The cache key inputs both backends share: the module's IR with its
/// locations (they reach diagnostics and line info) and the build identity;
/// each backend adds target, options and tool version.
tile::runtime::CacheKeyInputs moduleKeyInputs(mlir::ModuleOp module);

/// The backends. Both run with the GIL released and throw CompileError.
std::unique_ptr<Kernel> compileCpuKernel(mlir::ModuleOp module,
                                         const mlir::tile::CompileOptions &opts);
std::unique_ptr<Kernel> compileCudaKernel(mlir::ModuleOp module,
                                          const mlir::tile::CompileOptions &opts);
/// The Kernel behind a `Kernel.fast_launch` callable; null for anything else
/// (the Python tests' stand-ins, a replaced `_launch`).
Kernel *fastLaunchKernel(PyObject *callable);
/// `fast_launch(grid3, args, stream)` with the arguments as `n` values: true
/// when launched, false with a Python error set.
bool fastLaunchValues(Kernel &kernel, PyObject *grid3, PyObject *const *args,
                      size_t n, PyObject *stream);
/// Adds `Dispatcher` (Dispatch.cpp: the launch hot path) to the module;
/// false with a Python error set on failure.
bool addDispatcher(PyObject *module);
/// Adds `globals_changed` (GlobalWatch.cpp); false with a Python error.
bool addGlobalWatch(PyObject *module);
/// GPUs the CUDA runtime sees (0 without a driver).
int cudaDeviceCount();
/// (major, minor) compute capability of `device`; throws LaunchError.
std::pair<int, int> cudaDeviceCapability(int device);

} // namespace tile_py

#endif // TILE_PY_KERNEL_H
