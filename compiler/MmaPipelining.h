//===- MmaPipelining.h - how mma loops are software-pipelined ---*- C++ -*-===//
//
// A compile option (CompileOptions::mmaPipelining) and the value of
// tile-pipeline-mma's `mma-pipelining` pass option.
//
//===----------------------------------------------------------------------===//
#ifndef TILE_COMPILER_MMAPIPELINING_H
#define TILE_COMPILER_MMAPIPELINING_H

#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"

#include <optional>

namespace mlir::tile {

/// Not at all, by issuing the next iteration's loads into registers early,
/// through a cp.async ring in shared memory (falling back to registers
/// where the ring does not apply), or through TMA into an mbarrier-guarded
/// ring (sm_90 wgmma loops whose operands are `tile.tma_ok` arrays; else as
/// async). TILE_GPU_PIPELINE=off|regs|async|tma; the frontend defaults to
/// tma, and TILE_TMA=0 to async.
enum class MmaPipelining { Off, Registers, AsyncCopy, Tma };

/// Which TMA rings tile-warp-specialize gives a producer warpgroup:
/// none, those whose wgmmas each wait for their result (attention's), or
/// every one (matmuls too). TILE_WARP_SPECIALIZE=0|1, unset: attention.
/// Unless Off, a matmul's ring in a persistent loop gets one too.
enum class WarpSpecialization { Off, Attention, All };

inline std::optional<WarpSpecialization>
parseWarpSpecialization(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<WarpSpecialization>>(name)
      .Case("off", WarpSpecialization::Off)
      .Case("attention", WarpSpecialization::Attention)
      .Case("all", WarpSpecialization::All)
      .Default(std::nullopt);
}

inline llvm::StringRef stringifyWarpSpecialization(WarpSpecialization mode) {
  switch (mode) {
  case WarpSpecialization::Off:
    return "off";
  case WarpSpecialization::Attention:
    return "attention";
  case WarpSpecialization::All:
    return "all";
  }
  return "";
}

inline std::optional<MmaPipelining> parseMmaPipelining(llvm::StringRef name) {
  return llvm::StringSwitch<std::optional<MmaPipelining>>(name)
      .Case("off", MmaPipelining::Off)
      .Case("regs", MmaPipelining::Registers)
      .Case("async", MmaPipelining::AsyncCopy)
      .Case("tma", MmaPipelining::Tma)
      .Default(std::nullopt);
}

inline llvm::StringRef stringifyMmaPipelining(MmaPipelining mode) {
  switch (mode) {
  case MmaPipelining::Off:
    return "off";
  case MmaPipelining::Registers:
    return "regs";
  case MmaPipelining::AsyncCopy:
    return "async";
  case MmaPipelining::Tma:
    return "tma";
  }
  llvm_unreachable("unknown MmaPipelining");
}

} // namespace mlir::tile

#endif
