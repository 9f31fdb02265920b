//===- Passes.td - tile compiler passes ----------------------*- tablegen -*-===//
#ifndef TILE_COMPILER_PASSES_TD
#define TILE_COMPILER_PASSES_TD

include "mlir/Pass/PassBase.td"

def TileFuse : Pass<"tile-fuse", "::mlir::ModuleOp"> {
  let summary = "Producer-consumer fusion at tile level";
  let description = [{
    Rewrites that make later stages' work smaller: `a * b + c` contracted into
    `math.fma` (floating point only; exact under fast-math-free semantics as
    the language defines `fma`), broadcasts sunk below elementwise chains so
    that arithmetic runs on the small tile, additions after a zero-accumulator
    `tile.mma` fused into its accumulator, and sibling reductions (same axis
    and shape, independent) merged into one multi-operand `tile.reduce`.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect"];
}


//===----------------------------------------------------------------------===//
// GPU backend (compiler/gpu/)
//===----------------------------------------------------------------------===//

def TileMapThreads : Pass<"tile-map-threads", "::mlir::ModuleOp"> {
  let summary = "Give every tile a thread layout and pick num_warps";
  let description = [{
    Attaches a layout encoding (`#tile.blocked`, `#tile.slice`, `#tile.mma`)
    to every tensor in the kernel: loads and stores get blocked layouts where
    each thread owns 16-byte runs along the array's contiguous dimension,
    reductions produce slice layouts (so expand_dims + broadcast of their
    result is free), `tile.mma` accumulates in the mma.sync fragment layout,
    loop-carried values take their yields' layouts. Cheap values (constants,
    splats, iota and elementwise chains of them) are recomputed in whatever
    layout a consumer needs; elsewhere a `tile.convert_layout` is inserted
    where producer and consumer disagree. Records the warp count as the
    module attribute `tile.num_warps`.
  }];
  let options = [
    Option<"numWarps", "num-warps", "int", "0",
           "warps per block (0: 4, or 8 for tiles of 8K elements or more)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def ConvertTileToGpu : Pass<"convert-tile-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Lower thread-mapped tile IR to per-thread gpu/nvvm/llvm code";
  let description = [{
    Each `tile.kernel` function becomes a `gpu.func` kernel in a `gpu.module`
    with the ABI of docs/internals.md section 3 (per array: pointer, i64
    extents, i64 strides; then scalars). A tensor becomes the vector of the
    elements the calling thread owns (in the layout's register order), so
    elementwise `arith`/`math` and `scf.for` convert structurally. Loads and
    stores become predicated, vectorized global accesses; reductions use
    in-thread combines, warp shuffles and shared memory; `tile.mma` uses
    `ldmatrix` + `mma.sync`; layout conversions go through shared memory.
  }];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileEmitPtx : Pass<"tile-emit-ptx", "::mlir::ModuleOp"> {
  let summary = "Translate each gpu.module (lowered to NVVM) to PTX";
  let description = [{
    Translates every `gpu.module` to LLVM IR, links libdevice when needed,
    runs the NVPTX backend and writes the PTX to `output` (`-`: stdout) or,
    when `attach` is set, stores it in the module's `tile.ptx` attribute.
    Lit tests use it as `tile-opt --tile-to-llvm-nvvm --tile-emit-ptx -o
    /dev/null | FileCheck`.
  }];
  let options = [
    Option<"chip", "chip", "std::string", "\"sm_90\"", "target GPU (sm_80, sm_90)">,
    Option<"output", "output", "std::string", "\"-\"", "file for the PTX ('-': stdout)">,
    Option<"attach", "attach", "bool", "false", "attach the PTX as an attribute instead">,
    Option<"optLevel", "opt-level", "int", "3", "LLVM optimization level">
  ];
}

#endif // TILE_COMPILER_PASSES_TD
