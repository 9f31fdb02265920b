//===- L2Flush.h - clearing L2 before a timed kernel run --------*- C++ -*-===//
//
// A kernel timed from a cold L2 (Triton's do_bench, bench/harness.py, the
// autotuner) runs after a write of more bytes than L2 holds. The write is a
// plain grid-stride kernel, not cuMemsetD32Async: the autotuner flushed by
// that memset and read some attention configs 8-30% slower than bench
// (which zeroes a torch tensor) read the same binaries on an H100
// (2026-12-07). Which of its two differences from bench caused that, this
// flush or a wait after each run of its confirmation round (now gone too),
// is not yet measured.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_RUNTIME_L2FLUSH_H
#define TILE_RUNTIME_L2FLUSH_H

#include "runtime/CudaDriver.h"

#include <cstddef>

namespace tile::runtime {

/// The flush kernel's PTX (the driver compiles it for the device on load).
const char *l2FlushPtx();

/// Enqueues on `stream` (of the current context) a write of `bytes` zero
/// bytes to a scratch buffer kept per context for the process. Returns
/// false, enqueuing nothing, when the driver cannot allocate device memory
/// (the fake driver of the tests). Throws CudaError.
bool flushL2(CudaDriver &driver, cu::CUstream stream, size_t bytes);

} // namespace tile::runtime

#endif // TILE_RUNTIME_L2FLUSH_H
