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

def TileChunkLoops : Pass<"tile-chunk-loops", "::mlir::ModuleOp"> {
  let summary = "Long reductions and long-K mmas into loops over chunks";
  let description = [{
    Both backends run it first in their tiling stage (before `tile-tiling`
    on the GPU).

    Reductions into loops: a `tile.reduce` along an axis longer than
    `max-reduce-extent`, whose sources are computed only from full-tile
    `tile.load`s through elementwise ops (constants and splats allowed) that
    nothing else uses, becomes an `scf.for` over chunks of `reduce-chunk`
    along the axis: each iteration loads a chunk (tile index scaled by the
    number of chunks, same padding), applies the elementwise chain and
    combines it into a chunk-shaped accumulator with the reduction's
    combiner; the accumulator, seeded with chunk 0, is reduced once after
    the loop. Only combiners of elementwise scalar ops are applied this way.

    Long mmas into loops: a `tile.mma` whose K is longer than `max-mma-k`
    and whose A and B are computed from full-tile `tile.load`s through
    elementwise ops that nothing else reads (as a long reduction's sources
    are) becomes an `scf.for` over K chunks (the largest power of two <=
    `mma-k-chunk` dividing K, a multiple of the instruction's K): each
    iteration loads a chunk of A and of B (tile index scaled by the number
    of chunks, same padding), applies the elementwise ops and accumulates
    their mma. The sum runs over K in the same order; the code stays the
    size of one chunk's instead of growing with K (an unrolled K = 4096
    took ptxas minutes).
  }];
  let options = [
    Option<"maxReduceExtent", "max-reduce-extent", "int64_t", "16384",
           "reductions along a longer axis become loops (0: never)">,
    Option<"reduceChunk", "reduce-chunk", "int64_t", "8192",
           "extent of one chunk of such a loop (a power of two)">,
    Option<"maxMmaK", "max-mma-k", "int64_t", "256",
           "mmas with a longer K whose operands are computed from loads "
           "for them alone become loops over K chunks (0: never)">,
    Option<"mmaKChunk", "mma-k-chunk", "int64_t", "64",
           "the most K of one chunk of such a loop (a power of two)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileTiling : Pass<"tile-tiling", "::mlir::ModuleOp"> {
  let summary = "Block tiles to warp and instruction tiles (GPU)";
  let description = [{
    Makes the tiling of a block's work explicit before thread mapping.

    Warp tiling (`warp-tiling`, GPU): picks the warps per block (the option,
    else the module's `tile.num_warps`, else 4, or 8 for mma kernels with
    tiles of 8K elements or more and mmas of 128 rows or more, and about 32 elements of the largest tile
    per thread otherwise) and records it as `tile.num_warps`. Each tile.mma
    that tensor cores can compute gets a `#tile.mma_tiling`: the warp grid
    over its MxN tile (M split while it has more 16-row tiles per warp than
    N has 16-column tiles; chained mmas, whose result feeds another's A,
    along M only), the tile each warp computes, and the mma.sync shape
    (m16n8k16 for f16/bf16, m16n8k8 for tf32, m16n8k32 for int8). With
    `warpgroup-mma` (sm_90), an f16/bf16 -> f32 mma of a loop whose A and B
    are loaded in the loop body gets a warpgroup tiling instead when its
    shape allows one (warps a multiple of 4 along M, M a multiple of
    16 x warps, N a multiple of 64 up to 256, K a multiple of 64 or 32):
    `wgmma.mma_async.m64nNk16` from 128-byte swizzled shared memory. An
    fp8 mma the frontend widened to f16 (`arith.extf` of both operands) and
    marked `fast_accumulation` (cuTile's `use_fast_acc`) is narrowed back to
    fp8 when wgmma can read both operands K-major from the ring (A a
    row-major [m][k] block, B the transpose of a row-major [n][k] one, K a
    multiple of 128 bytes or 64): `wgmma.mma_async.m64nNk32` with e4m3/e5m2
    operands, whose accumulation keeps fewer bits than f32. So is an fp8
    mma with A in registers (attention's Q in front of the loop, or P from
    the chained mma) whose B is the transpose of a block the loop loads
    (K^T, or V given transposed): `m64nNk32` with A's fragments from
    registers, P's rearranged from the accumulator's layout by shuffles
    (`examples/flash_attention_fp8.py`). Otherwise it stays widened (exact
    in f32). Before any of this, a load with `order`
    that reads a 2-d transpose of a row-major array (cuTile's transposed
    load, as attention loads K^T) and feeds mmas as B becomes the plain load,
    a reshape dropping its unit dimensions and a 2-d permute
    (`TileUnpermuteMmaLoads.cpp`): the form the warpgroup tiling and the
    rings read through.
    `tile-map-threads` and `convert-tile-to-gpu` read it; FMA mmas get none.
    Long reductions and long-K mmas become loops first, in
    `tile-chunk-loops`.
  }];
  let options = [
    Option<"numWarps", "num-warps", "int", "0",
           "warps per block (0: the module's tile.num_warps, else chosen)">,
    Option<"warpTiling", "warp-tiling", "bool", "true",
           "record tile.num_warps and the warp/instruction tiling of tile.mma">,
    Option<"warpgroupMma", "warpgroup-mma", "bool", "false",
           "tile qualifying mma loops for sm_90 wgmma (instr [64, N, 16])">,
    Option<"stagedOperands", "staged-operands", "bool", "false",
           "also wgmma for an mma whose operand the loop computes (staged "
           "through shared memory; swapped where M is short): the fused "
           "attention backward's dQ. Off: the fused backward it enables "
           "measured slower than two kernels on the H200 (2026-12-05)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
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
    result is free), `tile.mma` accumulates in the mma.sync fragment layout
    over the warp grid of its `#tile.mma_tiling` (`tile-tiling`; chosen the
    same way when absent), loop-carried values take their yields' layouts.
    Cheap values (constants, splats, iota and elementwise chains of them)
    are recomputed in whatever layout a consumer needs; elsewhere a
    `tile.convert_layout` is inserted where producer and consumer disagree.
    Records the warp count as the module attribute `tile.num_warps`.
  }];
  let options = [
    Option<"numWarps", "num-warps", "int", "0",
           "warps per block (0: the module's tile.num_warps, else chosen as "
           "tile-tiling does)">
  ];
  // The tile dialect too: plain arith on tensors gets #tile layouts.
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tile::TileDialect"];
}

def TilePipelineMma : Pass<"tile-pipeline-mma", "::mlir::ModuleOp"> {
  let summary = "Software-pipeline loops that feed tensor-core mmas";
  let description = [{
    In an `scf.for` whose `tile.load`s feed a tensor-core `tile.mma`, the
    loads run ahead of the mma. `async`: a matmul-shaped loop (or one whose
    mmas all take B from a load, as attention's K^T and V) streams its
    operands through rings of shared memory (`tilegpu.alloc_shared`,
    `tilegpu.async_copy` into `tilegpu.slot`s, one `tilegpu.async_group`
    per iteration, `tilegpu.async_wait` on the token the loop carries) and
    the mma becomes a `tilegpu.mma` on this iteration's slots; other loops
    fall back to `regs`: the next iteration's loads are issued before this
    iteration's mma and carried by the loop. An fp8 mma that gets no ring is
    widened to f16 again. `tma`: a matmul-shaped sm_90 wgmma loop whose A
    and B are loads of `tile.tma_ok` kernel arrays streams them through TMA
    (`tilegpu.tma_load` of one swizzled panel per box into the same rings,
    one `tilegpu.mbarriers` entry per slot waited on with the phase's
    parity); the kernel gets a `!tilegpu.tensor_map` argument per operand,
    last, marked `tilegpu.tensor_map_of`. So does a loop whose wgmmas all
    take B from a load (attention's K^T and V, the backward's Q and dO),
    and then a (1, n) row the loop also loads (the backward's lse and
    delta) comes through an unswizzled ring filled by the same copies, read
    back with `tilegpu.read_shared` where first used. Other loops as
    `async`.
  }];
  let options = [
    Option<"mmaPipelining", "mma-pipelining", "std::string", "\"async\"",
           "how mma loops are pipelined: off, regs (the next iteration's "
           "loads issued before the mma), async (a cp.async ring in "
           "shared memory, else regs) or tma (TMA rings for sm_90 wgmma "
           "loops of tile.tma_ok arrays, else async)">,
    Option<"numStages", "num-stages", "int", "0",
           "slots of an mma loop's cp.async ring (0: as many as fit; fewer "
           "than the ring needs are raised to its minimum)">,
    Option<"epilogueRoom", "epilogue-room", "bool", "false",
           "a TMA ring loop in a persistent loop's body that stores its "
           "accumulator there takes, when the slots are automatic, no more "
           "than leave room for tile-stage-stores' buffer (the producer of "
           "tile-warp-specialize refills the ring while the store is staged)">
  ];
  let dependentDialects = ["::mlir::tilegpu::TileGpuDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileStageStores : Pass<"tile-stage-stores", "::mlir::ModuleOp"> {
  let summary = "Store mma results in 16-byte runs through a shared buffer";
  let description = [{
    A `tile.store` at a kernel's top level of a 2-d tile in an mma
    accumulator layout (two neighbouring elements per thread and row) gets
    its value in the blocked layout of loads (16-byte runs per thread)
    through `tilegpu.stage_layout` and a padded-row buffer of its own
    (`tilegpu.alloc_shared`), when no shared buffer is live at the store
    and the new one is no larger than the buffers live together at some op
    before it (the rings of an mma loop): tile-allocate-shared puts it at
    offset 0, and the
    kernel's shared memory does not grow. A batch of one (a store of the
    accumulator reshaped to (1, M, N)) is staged as its 2-d tile.
    With `tma-stores`, a 2-d store of a warpgroup mma's result (64 rows
    per warpgroup, whole 128-byte rows of f16, bf16 or f32) into a kernel
    array TMA can describe becomes a `tilegpu.bulk_store` through an
    unpadded swizzled buffer in the same place instead: the TMA unit
    copies the block out (and drops what falls outside the array) while
    the threads go on, and a `tilegpu.bulk_wait` at the end of the
    store's region waits for the last copy.
    The consumers' store in a persistent loop's body is staged through a
    buffer allocated before the loop, beside the ring, where it fits; where
    it does not, with `tma-stores`, the store (a batch of one too) goes by
    TMA through a buffer of that type the body no longer reads (a barrier
    after its last use, its next TMA copy after a barrier at the body's
    start: a persistent attention's Q at D 128), waited for before the
    body ends.
  }];
  let options = [
    Option<"tmaStores", "tma-stores", "bool", /*default=*/"false",
           "Stores of warpgroup mma results leave by TMA bulk copies">,
  ];
  let dependentDialects = ["::mlir::tilegpu::TileGpuDialect"];
}

def TileBulkReduce : Pass<"tile-bulk-reduce", "::mlir::ModuleOp"> {
  let summary = "Add warpgroup mma results into arrays by TMA bulk reductions";
  let description = [{
    A relaxed `tile.atomic_rmw add` (no mask, old values unread) of a
    warpgroup mma's f32 accumulator in an mma loop, whose indices address a
    block of an array TMA can describe (each index a splat, or a start plus
    `tile.iota` along one axis of the tile, the array's inner dimension
    along one of them), becomes a `tilegpu.bulk_reduce_add`: the warpgroups
    write their rows into a buffer of their own as boxes of a tensor map and
    the TMA unit adds them in L2 (FlashAttention-3's dQ), instead of 32 or
    more atomic instructions per thread. A `tilegpu.bulk_wait` after the
    loop waits for the last ones. Only where the buffer fits beside the
    kernel's other buffers.
  }];
  let dependentDialects = ["::mlir::tilegpu::TileGpuDialect"];
}

def TileClusterMulticast : Pass<"tile-cluster-multicast", "::mlir::ModuleOp"> {
  let summary = "Share a warp-specialized ring's TMA copies within clusters of two blocks";
  let description = [{
    A kernel asking for thread-block clusters (`tile.num_ctas` >= 2, the
    `num_ctas` hint) whose TMA ring has a producer warpgroup (after
    tile-warp-specialize) runs as clusters of two neighbouring blocks along
    grid axis 0 (`tilegpu.cluster_size = 2` on the kernel; the runtime
    launches clusters when grid axis 0 is even). A copy both blocks make is
    read from L2 once: the producer evaluates the copy's coordinates at the
    other block's index (the slice from `tile.bid 0`, cloned) and, when they
    agree, each CTA issues half of the block's panels with `multicast` to
    both (a matmul's neighbouring blocks in grouped order share B;
    attention's query blocks share K and V). Both CTAs' consumers release
    every slot (`mbarrier_arrive ... cta`, one lane per warp, on the other
    CTA's empty barrier), the barriers are made visible to the cluster
    before the warps split, and neither CTA exits while the other may still
    arrive on its barriers. Launched without clusters (%cluster_nctarank
    1) the kernel shares nothing. A persistent producer (its copies' loop
    in a walk over the tiles from `tile.bid 0`, by a step, below a bound:
    an `scf.for`, or an `scf.while` of that form) pairs the CTAs' k-th
    tiles, and only when both walk as many tiles (checked at run time).
    Left alone: copies in another kind of loop, or a trip count that
    depends on the block.
  }];
  let dependentDialects = ["::mlir::tilegpu::TileGpuDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileWarpSpecialize : Pass<"tile-warp-specialize", "::mlir::ModuleOp"> {
  let summary = "Give a kernel's TMA ring a producer warpgroup of its own";
  let description = [{
    In a kernel with one TMA ring loop of tile-pipeline-mma (`tma`) at its
    top level, the copies move to one more warpgroup, the producer, and the
    kernel's own warps become the consumers: an `scf.if` on the thread
    number marked `tilegpu.warp_specialized` runs, in its then-region, the
    producer's loop (wait until a slot's "empty" mbarrier says every
    consumer released it, then that iteration's `mbarrier_arrive_expect_tx`
    and `tma_load`s) and, in its else-region, the mma loop (its block
    barrier gone, a slot released once the mmas and row reads of its
    iteration are done)
    and the rest of the kernel. Each side moves registers with setmaxnreg
    (`nvvm.setmaxregister`): the producer keeps `producer-registers` (40),
    the consumers get `consumer-registers` (232; convert-tile-to-gpu lowers
    it where the block's 64K registers cannot cover both).
    A ring whose wgmmas are each waited for (attention: B from the ring, A
    in registers) with two consumer warpgroups also gets the ping-pong
    schedule (`ping-pong`): each warpgroup issues its wgmmas in turn
    (`nvvm.barrier` on its named barrier before, `nvvm.barrier.arrive` on
    the other's after, then `tilegpu.wait_mma`). On the H200 that turn per
    wgmma measured slower than none (attention B4 H32 L4096 D128: 479
    against 521 TFLOP/s), hence off by default. Where
    tile-overlap-mma-chain rotates the loop, the pipeline gives it the
    ping-pong instead (a turn per rotated iteration, FlashAttention-3's).
    A matmul's ring loop in the body of a persistent loop (an `scf.while`
    or `scf.for` at the kernel's top level walking output tiles) is split
    around that loop: the
    ring's buffers and barriers move before it, both roles walk the tiles,
    and the slots count the block's iterations across tiles (a value the
    persistent loop carries), so the producer fills the next tile's slots while the
    consumers finish and store this one. An attention ring (wgmmas each
    waited for) in the body of a persistent `scf.for` is split the same
    way; the other barriers of the body (Q's, which the consumers copy
    once a tile) move before the loop too, and their waits take the
    tile's parity. The producer computes the side-effect-free part of the
    body its copies read (the tile's indices), `scf.if`s of conditional
    expressions included.
    A kernel asking for thread-block clusters (`tile.num_ctas` >= 2) gets
    a producer for its ring whatever `rings` says (tile-cluster-multicast
    needs its barriers).
    Other kernels are left as they are.
  }];
  let options = [
    Option<"rings", "rings", "std::string", /*default=*/"\"all\"",
           "Which TMA rings get a producer: all, or attention (rings whose "
           "wgmmas each wait for their result)">,
    Option<"pingPong", "ping-pong", "bool", /*default=*/"false",
           "Two consumer warpgroups take turns issuing an attention ring's "
           "wgmmas">,
    Option<"persistent", "persistent", "bool", /*default=*/"true",
           "A matmul's ring loop in a persistent loop's body (an scf.while "
           "or scf.for at the kernel's top level), or an attention ring's "
           "in a persistent scf.for, gets a producer too, whatever `rings` "
           "says">,
    Option<"producerRegisters", "producer-registers", "int32_t",
           /*default=*/"40",
           "Registers per thread the producer warpgroup keeps (setmaxnreg."
           "dec; a multiple of 8, 24 to 256)">,
    Option<"consumerRegisters", "consumer-registers", "int32_t",
           /*default=*/"232",
           "Registers per thread the consumer warpgroups ask for (setmaxnreg."
           "inc; a multiple of 8, 24 to 256)">,
  ];
  let dependentDialects = ["::mlir::tilegpu::TileGpuDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileOverlapMmaChain : Pass<"tile-overlap-mma-chain", "::mlir::ModuleOp"> {
  let summary = "Run an attention loop's softmax beside the previous "
                "iteration's second mma (FlashAttention-3's intra-warpgroup "
                "overlap)";
  let description = [{
    The consumer loop of tile-warp-specialize whose two wgmmas chain
    through registers (S = Q K^T, then P = softmax(S) as the A of P V),
    each waited for, B from a ring of at least three slots, is rotated by
    one stage: the second mma, with what only it reads (O's rescale, V's
    slot, the slot's release), runs one iteration late. Iteration j issues
    S_j and then P_{j-1} V_{j-1} (`in_flight`), waits for S_j
    (`tilegpu.wait_mma pending = 1`), computes its softmax while
    P_{j-1} V_{j-1} runs, then waits for that (`pending = 0`) and releases
    the slot of j - 1. The first iteration's softmax runs before the loop,
    the last iteration's second mma after it, under an `scf.if` for loops
    of no iteration; P (f16), the rows' rescale factors and the previous
    induction variable cross the iterations as loop-carried values. A
    consumer loop nested in scf.for loops (a persistent kernel's walk over
    its tiles) is rotated in place, once per tile. Other loops are left as
    they are.
    With `ping-pong` and two consumer warpgroups, the warpgroups take
    turns at each rotated iteration's two mmas (FlashAttention-3's
    ping-pong): warpgroup g waits on named barrier 3 + g before issuing
    S_j and arrives on the other's after issuing P_{j-1} V_{j-1}, so one
    warpgroup's softmax runs while the other's mmas hold the tensor cores.
    With `late-ops-first`, the ops that feed P_{j-1} V_{j-1} (O's rescale
    by a_{j-1}) come before S_j is issued: LLVM otherwise scheduled them
    between S_j's wgmmas and their commit where the loop's body is one
    block (the loops tile-split-uniform-masks cuts), and ptxas inserted a
    fence there (C7519).
  }];
  let options = [
    Option<"pingPong", "ping-pong", "bool", /*default=*/"false",
           "The two consumer warpgroups take turns at each iteration's "
           "mmas">,
    Option<"lateOpsFirst", "late-ops-first", "bool", /*default=*/"false",
           "What feeds the late mma (O's rescale) runs before S_j is "
           "issued, not while it is in flight">,
  ];
  let dependentDialects = ["::mlir::tilegpu::TileGpuDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileDelayStagedMma : Pass<"tile-delay-staged-mma", "::mlir::ModuleOp"> {
  let summary = "Run the mma that reads a staged operand one iteration late, "
                "its slots handed between the warpgroups by mbarriers";
  let description = [{
    In the consumer loop of a warp-specialized kernel whose one
    `tilegpu.stage_operand` fills a two-slot buffer that one mma reads,
    whose result only a `tilegpu.bulk_reduce_add` takes (the fused
    attention backward's dS^T and dQ^T = K^T dS^T), the mma and the
    reduction run one iteration late (the last iteration's after the
    loop), and the barrier of all consumer threads in the staging gives
    way to two pairs of mbarriers: the writers wait for the slot's
    previous readers (`empty`), write it `unsynchronized` and arrive on
    `full`; the readers wait on `full`, run the mma and arrive on `empty`.
    The consumer warpgroups then need not meet every iteration.
  }];
  let dependentDialects = ["::mlir::tilegpu::TileGpuDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileDeferMmaWaits : Pass<"tile-defer-mma-waits", "::mlir::ModuleOp"> {
  let summary = "Issue a loop body's warpgroup mmas early and wait for each "
                "where its result is first read";
  let description = [{
    In an `scf.for` body with two or more `tilegpu.mma` that lower to wgmma
    and none already in flight, each mma moves up (with the pure ops
    computing its operands) past what it does not read, stopping at an op
    that writes memory or at an earlier mma that waits on no more mma
    results than it, and becomes `deferred`: committed, not waited
    for. A `tilegpu.wait_mma` goes in front of the first op that reads its
    result, `pending` counting the mmas issued after it, and in front of
    any op that may write what an mma in flight reads (a
    `tilegpu.stage_operand` into the same allocation, an op with writes
    it cannot place) and of the terminator. The attention backward's
    S^T and dP^T then run back to back, P^T's exponentials beside dP^T,
    dS^T beside dV. Loops with `in_flight` mmas or waits are left alone.
    With `move-mmas=false` the mmas stay where the kernel wrote them and
    only the waits move: fewer results live at once (the dK/dV loop at
    head dim 128 then keeps its registers).
  }];
  let options = [
    Option<"moveMmas", "move-mmas", "bool", /*default=*/"true",
           "Move each mma up past what it does not read before deferring "
           "the waits">,
  ];
  let dependentDialects = ["::mlir::tilegpu::TileGpuDialect"];
}

def TileSplitUniformMasks : Pass<"tile-split-uniform-masks",
                                 "::mlir::ModuleOp"> {
  let summary = "Cut a loop where its masks turn all true, and drop them "
                "there (causal attention's blocks below the diagonal)";
  let description = [{
    A select in an `scf.for` whose condition compares integer tiles with
    elements in ranges affine in the induction variable (splats, iotas,
    constant factors, broadcasts and shape ops; `&` of such compares) is
    all true where the smallest element of one side beats the largest of
    the other, `k * iv + e >= 0`. Parts with k < 0 hold up to an
    iteration, k > 0 from one on, k = 0 everywhere or nowhere, so the
    all-true iterations are one interval, computed in front of the loop.
    The loop becomes up to three loops (masked head, unmasked middle,
    masked tail), each taking the previous one's results as its initial
    values; in the middle one the selects take their true operands, so the
    compares and their index arithmetic fall away. Run after
    tile-overlap-mma-chain, it cuts a warp-specialized kernel's consumer
    loop, whose ring the producer fills for every part; the CPU runs it at
    the start of the host stage.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileAllocateShared : Pass<"tile-allocate-shared", "::mlir::ModuleOp"> {
  let summary = "Give every shared-memory buffer of a kernel its offset";
  let description = [{
    Sets `offset` on each `tilegpu.alloc_shared` and `tilegpu.alloc_mbarriers`
    of a kernel: buffers in program order, each at its type's alignment
    (1024 bytes for swizzled ones), first fit around the buffers whose live
    ranges overlap. Time is counted in the kernel body's top-level ops, and
    in a warp-specialized kernel through its consumers' ops (SharedLiveness).
    The kernel's `tilegpu.shared_bytes` attribute records the end; a
    `tilegpu.scratch_base` before each op where the buffers live then or
    later end lower says where convert-tile-to-gpu's scratch starts there
    (after a loop: on its dead rings). Buffers that end past the 227 KB a
    block can have are an error at the largest, not a kernel whose launch
    fails.
  }];
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
    The `tilegpu` ops of tile-pipeline-mma lower here too (cp.async, wgmma
    with descriptors from the shared buffers' types), at the offsets
    tile-allocate-shared gave them; the conversion's own scratch starts
    above them.
  }];
  let options = [
    Option<"prefetchTensorMaps", "prefetch-tensor-maps", "bool", "false",
           "thread 0 prefetches the kernel's TMA descriptors first "
           "(prefetch.param.tensormap, as CUTLASS does); not yet measured">,
    Option<"tiedWgmmaFence", "tied-wgmma-fence", "bool", "true",
           "the wgmma.fence in front of a register-A wgmma takes and "
           "returns its A fragments, so that they are all computed before "
           "it (false: NVVM's plain fence for 16-bit A, where ptxas fenced "
           "each wgmma whose fragment was computed after it)">,
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
    Option<"optLevel", "opt-level", "int", "3", "LLVM optimization level">,
    Option<"registerScheduling", "register-scheduling", "bool", "true",
           "NVPTX schedules for register pressure (false: source order)">
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

def TileHostInPlace : Pass<"tile-host-in-place", "::mlir::ModuleOp"> {
  let summary = "Elementwise linalg.generic ops write into an operand they "
                "read last";
  let description = [{
    Elementwise conversion and fusion give every `linalg.generic` a
    `tensor.empty` destination, which one-shot bufferization turns into a
    fresh buffer. For a tile carried by a loop (`acc = acc + x` in `scf.for`
    or `scf.while`) that is one allocation per iteration, and for
    `scf.while`, whose regions forward their buffers only when each
    iteration's results are equivalent to its arguments, a copy of the
    whole tile per iteration in the condition region as well. This pass
    makes an input the destination instead when it has the result's type
    and indexing, the payload does not read the destination, the input is
    a loop-carried tile (preferred) or a fresh linalg result, and nothing
    reads it after the op (earlier reads, and reads in the other branch of
    an `scf.if`, are fine): the op then bufferizes in place. Bufferization
    still checks each case and copies where in-place writing would be
    wrong, so this only removes allocations and copies.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
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
