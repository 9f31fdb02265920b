//===- HostThreadPool.h - the threads CPU kernels run on --------*- C++ -*-===//
#ifndef TILE_COMPILER_CPU_HOSTTHREADPOOL_H
#define TILE_COMPILER_CPU_HOSTTHREADPOOL_H

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>

namespace mlir::tile {

/// Calls `body(begin, end)` on chunks covering [0, n), spread over a
/// process-wide pool of worker threads and the calling thread, and returns
/// when all are done. The pool has one thread per core ($TILE_NUM_THREADS
/// overrides); launches from several threads take turns.
void parallelChunks(int64_t n,
                    llvm::function_ref<void(int64_t, int64_t)> body);

} // namespace mlir::tile

#endif // TILE_COMPILER_CPU_HOSTTHREADPOOL_H
