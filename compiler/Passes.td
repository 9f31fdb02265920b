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
  let options = [
    Option<"prefetch", "prefetch", "bool", "true",
           "issue the next iteration's loads of an mma loop before its mma">
  ];
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

//===----------------------------------------------------------------------===//
// CPU backend (compiler/cpu/)
//===----------------------------------------------------------------------===//

def ConvertTileToHost : Pass<"convert-tile-to-host", "::mlir::ModuleOp"> {
  let summary = "Lower tile IR to host code on tensors and buffers";
  let description = [{
    The CPU backend's conversion, run after the tile-level passes. Arrays
    become strided memrefs (`memref<?x?xT, strided<[?, ?], offset: ?>>`,
    static where the type proved it); each `tile.kernel` function gains six
    trailing `i32` arguments (block id x, y, z, then grid size x, y, z) that
    replace `tile.bid` and `tile.num_blocks`. Loads read a block that is
    fully in bounds in place (a strided view) when no write can come before
    the tile's last read, else copy it into a fresh buffer; partial blocks get
    a buffer filled with the padding plus a copy of the part inside the array.
    Stores write back only the in-bounds part, gather/scatter/atomics become per-lane loops
    with bounds and mask checks (atomics as `memref.atomic_rmw` or
    `memref.generic_atomic_rmw`), `tile.mma` becomes `linalg.matmul` /
    `linalg.batch_matmul`, reductions `linalg.reduce` seeded with the first
    slice, scans loops of `linalg.generic`, shape ops `linalg`/`tensor` ops,
    and print/assert calls into the host runtime. Elementwise `arith`/`math`
    on tensors is left for `convert-elementwise-to-linalg`.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::bufferization::BufferizationDialect",
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::LLVM::LLVMDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::tensor::TensorDialect"];
}

def TileHostMatmul : Pass<"tile-host-matmul", "::mlir::ModuleOp"> {
  let summary = "Register-blocked vector code for static matmuls on buffers";
  let description = [{
    Rewrites `linalg.matmul` and `linalg.batch_matmul` on memrefs with static
    shapes and unit inner strides (what `convert-tile-to-host` and
    bufferization produce for `tile.mma`) into the classic CPU micro-kernel:
    an `MR x NR` block of the accumulator held in vector registers across the
    whole `k` loop, updated with `vector.fma` of a broadcast `a` element and a
    row of `b`. Other matmuls are left for `convert-linalg-to-loops`.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", "0",
           "vector register width in bits (0: the host's, 512 with AVX-512 "
           "else 256)">,
    Option<"rows", "rows", "unsigned", "0",
           "accumulator rows per micro-kernel (0: 8 with 512-bit vectors "
           "else 4)">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::memref::MemRefDialect",
    "::mlir::scf::SCFDialect", "::mlir::vector::VectorDialect"];
}

#endif // TILE_COMPILER_PASSES_TD
