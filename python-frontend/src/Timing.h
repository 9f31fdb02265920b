//===- Timing.h - GPU timing and device facts for autotuning ----*- C++ -*-===//
//
// The `_tile` functions tile.autotune and tile.tune time configs with, on the
// runtime's own driver wrapper (no torch needed): see Timing.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_PY_TIMING_H
#define TILE_PY_TIMING_H

#include <pybind11/pybind11.h>

namespace tile_py {
/// Adds time_launches, time_interleaved, l2_flush_ptx, stream_is_capturing,
/// cuda_synchronize, cuda_device_name and cuda_driver_version to the module.
void registerTiming(pybind11::module_ &m);
} // namespace tile_py

#endif // TILE_PY_TIMING_H
