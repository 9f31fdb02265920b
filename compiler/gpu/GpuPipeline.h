//===- GpuPipeline.h - the GPU backend's pass pipelines ----------*- C++ -*-===//
#ifndef TILE_COMPILER_GPU_GPUPIPELINE_H
#define TILE_COMPILER_GPU_GPUPIPELINE_H

#include "compiler/Driver.h"
#include "compiler/Passes.h"

#include "mlir/Pass/PassManager.h"

namespace mlir::tile {
/// tile-tiling, tile-map-threads, convert-tile-to-gpu and cleanups: tile IR
/// to gpu.func kernels on per-thread vectors (gpu/nvvm/llvm/vector/arith/scf).
void buildTileToGpuPipeline(OpPassManager &pm, int numWarps,
                            bool warpgroupMma = false,
                            const TilePipelineMmaOptions &pipelining = {});
/// The gpu.module down to the LLVM and NVVM dialects only (translatable).
void buildGpuToNVVMPipeline(OpPassManager &pm);
/// The dialect extensions the lowering to NVVM relies on (ConvertToLLVM
/// interfaces of arith, cf, math, vector, ub, nvvm, gpu).
void registerGpuLoweringExtensions(DialectRegistry &registry);
/// Registers the named pipelines tile-to-gpu and tile-to-llvm-nvvm.
void registerTileGpuPipelines();
/// The tensor-map arguments of the module's kernel (`tilegpu.tensor_map_of`,
/// which tile-pipeline-mma adds), in order: the kernel metadata's.
std::vector<TensorMapArg> getTensorMapArgs(ModuleOp module);
/// The array pairs a kernel's launches must keep apart
/// (tile.disjoint_arrays).
std::vector<DisjointArrays> getDisjointArrays(ModuleOp module);
} // namespace mlir::tile

#endif
