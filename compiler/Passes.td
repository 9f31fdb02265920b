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

#endif // TILE_COMPILER_PASSES_TD
