//===- TileGpuOps.td - tilegpu operations --------------------*- tablegen -*-===//
#ifndef TILEGPU_OPS_TD
#define TILEGPU_OPS_TD

include "dialects/tilegpu/TileGpuDialect.td"
include "dialects/tilegpu/TileGpuTypes.td"
include "dialects/tilegpu/TileGpuAttrs.td"
include "dialects/tile/TileAttrs.td"
include "dialects/tile/TileTypes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def TileGpu_SharedBuffer : Type<CPred<"::llvm::isa<SharedBufferType>($_self)">,
    "shared-memory buffer", "SharedBufferType">;
// Parameterless: buildable, so results of this type need no printed type.
defvar TileGpu_Token = TileGpu_TokenType;
def TileGpu_MBarriers : Type<CPred<"::llvm::isa<MBarriersType>($_self)">,
    "mbarriers", "MBarriersType">;
def TileGpu_TensorMap : Type<CPred<"::llvm::isa<TensorMapType>($_self)">,
    "tensor map", "TensorMapType">;
def TileGpu_Array : Type<CPred<"::llvm::isa<::mlir::tile::ArrayType>($_self)">,
    "tile array", "::mlir::tile::ArrayType">;

//===----------------------------------------------------------------------===//
// Shared memory
//===----------------------------------------------------------------------===//

def TileGpu_AllocSharedOp : TileGpu_Op<"alloc_shared",
    [MemoryEffects<[MemAlloc]>]> {
  let summary = "a shared-memory buffer of the kernel";
  let description = [{
    Reserves the buffer for the whole kernel. `offset` (bytes from the start
    of the block's dynamic shared memory, a multiple of the type's
    alignment) is set by tile-allocate-shared; the lowering needs it.
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset);
  let results = (outs TileGpu_SharedBuffer:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def TileGpu_AllocMBarriersOp : TileGpu_Op<"alloc_mbarriers",
    [MemoryEffects<[MemAlloc]>]> {
  let summary = "mbarrier objects in shared memory";
  let description = [{
    As `alloc_shared`, for `count` 8-byte mbarriers.
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset);
  let results = (outs TileGpu_MBarriers:$result);
  let assemblyFormat = "attr-dict `:` qualified(type($result))";
  let hasVerifier = 1;
}

def TileGpu_ScratchBaseOp : TileGpu_Op<"scratch_base"> {
  let summary = "where the conversion's scratch starts from here on";
  let description = [{
    Set by tile-allocate-shared. The shared-memory scratch that
    convert-tile-to-gpu gives the ops after this one in its block, and the
    ops nested in them (layout conversions, reductions, staged mma
    operands), starts `offset` bytes into the block's dynamic shared memory:
    past the buffers still live there, so that scratch after a loop reuses
    the bytes of the loop's dead rings. Ops before every `scratch_base` of
    their blocks use the kernel's `tilegpu.shared_bytes`. It has no
    declared effects so that nothing erases it before the conversion, which
    removes it.
  }];
  let arguments = (ins I64Attr:$offset);
  let assemblyFormat = "$offset attr-dict";
}

def TileGpu_SlotOp : TileGpu_Op<"slot", [Pure]> {
  let summary = "one slot of a shared-memory ring";
  let description = [{
    Block `index` (0 <= index < slots) of `ring`, as a one-slot buffer.
  }];
  let arguments = (ins TileGpu_SharedBuffer:$ring, I32:$index);
  let results = (outs TileGpu_SharedBuffer:$result);
  let assemblyFormat = [{
    $ring `[` $index `]` attr-dict `:` qualified(type($ring)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Asynchronous copies (cp.async)
//===----------------------------------------------------------------------===//

def TileGpu_AsyncCopyOp : TileGpu_Op<"async_copy",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "copy a tile-indexed block of an array into shared memory";
  let description = [{
    Starts copying the block of `array` that `tile.load` with the same
    indices and result type `block` would read into the one-slot buffer
    `dst`, in 16-byte pieces (cp.async); elements outside the array are
    zero. The buffer's element type may differ from the array's when it is
    as wide (fp8 values stored as uint8). `block`'s layout says which thread copies what; its last two
    dimensions are `dst`'s block (others are 1). The copy is complete, and
    visible to the thread, once `async_wait` on a token of its group
    returns; other threads see it after a barrier.
  }];
  let arguments = (ins TileGpu_Array:$array, Variadic<I32>:$indices,
                   TileGpu_SharedBuffer:$dst, TypeAttrOf<AnyRankedTensor>:$block);
  let results = (outs TileGpu_Token:$token);
  let assemblyFormat = [{
    $array `[` $indices `]` `into` $dst attr-dict `:` qualified(type($array))
    `,` $block `->` qualified(type($dst))
  }];
  let hasVerifier = 1;
}

def TileGpu_AsyncGroupOp : TileGpu_Op<"async_group",
    [MemoryEffects<[MemWrite]>]> {
  let summary = "close a group of asynchronous copies";
  let description = [{
    The copies of `tokens` (and every copy the thread started since the
    previous group) form one group (cp.async.commit_group); the result
    stands for the group.
  }];
  let arguments = (ins Variadic<TileGpu_Token>:$tokens);
  let results = (outs TileGpu_Token:$result);
  let assemblyFormat = "$tokens attr-dict";
}

def TileGpu_AsyncWaitOp : TileGpu_Op<"async_wait",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "wait for a group of asynchronous copies";
  let description = [{
    Returns once the group of `token` is complete, leaving at most
    `pending` groups the thread committed after it in flight
    (cp.async.wait_group pending).
  }];
  let arguments = (ins TileGpu_Token:$token, ConfinedAttr<I64Attr, [IntNonNegative]>:$pending);
  let assemblyFormat = "$token `pending` `=` $pending attr-dict";
}

//===----------------------------------------------------------------------===//
// mbarriers and TMA
//===----------------------------------------------------------------------===//

def TileGpu_MBarrierInitOp : TileGpu_Op<"mbarrier_init",
    [MemoryEffects<[MemWrite]>]> {
  let summary = "initialize an mbarrier for `count` arrivals";
  let arguments = (ins TileGpu_MBarriers:$barriers, I32:$index, I32:$count);
  let assemblyFormat = [{
    $barriers `[` $index `]` `,` $count attr-dict `:` qualified(type($barriers))
  }];
}

def TileGpu_MBarrierExpectTxOp : TileGpu_Op<"mbarrier_arrive_expect_tx",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "arrive on an mbarrier, expecting `bytes` of transactions";
  let description = [{
    The phase of barrier `index` completes once every expected arrival is
    in and `bytes` bytes of TMA copies signalling it have landed.
  }];
  let arguments = (ins TileGpu_MBarriers:$barriers, I32:$index, I32:$bytes);
  let assemblyFormat = [{
    $barriers `[` $index `]` `,` $bytes attr-dict `:` qualified(type($barriers))
  }];
}

def TileGpu_MBarrierArriveOp : TileGpu_Op<"mbarrier_arrive",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "arrive on an mbarrier";
  let description = [{
    Every executing thread arrives once on barrier `index`. With `cta %r`,
    on the barrier at the same shared offset of the cluster's CTA of rank
    `r` instead (mapa; release at cluster scope), where that CTA counts its
    peers' arrivals.
  }];
  let arguments = (ins TileGpu_MBarriers:$barriers, I32:$index,
                   Optional<I32>:$cta);
  let assemblyFormat = [{
    $barriers `[` $index `]` (`cta` $cta^)? attr-dict `:`
    qualified(type($barriers))
  }];
}

def TileGpu_MBarrierInvalOp : TileGpu_Op<"mbarrier_inval",
    [MemoryEffects<[MemWrite]>]> {
  let summary = "invalidate an mbarrier before its bytes are reused";
  let description = [{
    Thread 0 invalidates barrier `index` (mbarrier.inval); nothing may wait
    on or arrive at it afterwards, and its bytes may then hold anything,
    including a new `mbarrier_init`. The caller orders it with block
    barriers before and after.
  }];
  let arguments = (ins TileGpu_MBarriers:$barriers, I32:$index);
  let assemblyFormat = [{
    $barriers `[` $index `]` attr-dict `:` qualified(type($barriers))
  }];
}

def TileGpu_MBarrierWaitOp : TileGpu_Op<"mbarrier_wait",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "wait for the phase of parity `parity` of an mbarrier";
  let description = [{
    Returns once the phase whose parity is `parity` (0 or 1) of barrier
    `index` has completed (mbarrier.try_wait.parity, retried).
  }];
  let arguments = (ins TileGpu_MBarriers:$barriers, I32:$index, I32:$parity);
  let assemblyFormat = [{
    $barriers `[` $index `]` `,` $parity attr-dict `:` qualified(type($barriers))
  }];
}

def TileGpu_TmaLoadOp : TileGpu_Op<"tma_load",
    [MemoryEffects<[MemRead, MemWrite]>, AttrSizedOperandSegments]> {
  let summary = "TMA copy of a box of a global array into shared memory";
  let description = [{
    Copies the box of `map` at element coordinates `coords` (innermost
    first, as cuTensorMapEncodeTiled numbers them) into the one-slot buffer
    `dst`; out-of-bounds elements are zero. The bytes are counted on
    barrier `index` of `barriers`. The box's dimensions before the last
    are the block's rows; a swizzled block wider than the box (its panels
    as wide as the swizzle, the box as wide as one panel) is copied one
    panel at a time, box p at inner coordinate `coords[0] + p * width`
    into panel p.

    In a thread-block cluster (`multicast %mask, rank %rank`, with
    `cluster_size`): `mask` names the CTAs of the cluster the block lands
    in, each at the same shared offset, each counting the bytes on its own
    barrier `index`; `rank` is this CTA's rank in the cluster. A mask of
    this CTA alone is the plain copy. A mask of several CTAs shares the
    copy: each of them issues the panels p with p % cluster_size == rank,
    so the cluster reads the block from L2 once (a one-panel block is
    issued by rank 0).
  }];
  let arguments = (ins TileGpu_TensorMap:$map, Variadic<I32>:$coords,
                   TileGpu_SharedBuffer:$dst, TileGpu_MBarriers:$barriers,
                   I32:$index, Optional<I16>:$ctaMask,
                   Optional<I32>:$clusterRank,
                   OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<2>]>>:$cluster_size);
  let assemblyFormat = [{
    $map `[` $coords `]` `into` $dst `,` $barriers `[` $index `]`
    (`multicast` $ctaMask^ `,` `rank` $clusterRank)? attr-dict `:`
    qualified(type($map)) `,` qualified(type($dst)) `,` qualified(type($barriers))
  }];
  let hasVerifier = 1;
}

def TileGpu_TmaStoreOp : TileGpu_Op<"tma_store",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "TMA copy of a shared block into a box of a global array";
  let description = [{
    Writes the one-slot buffer `src` to the box of `map` at `coords`;
    out-of-bounds elements are dropped. Completion is tracked by bulk
    groups (cp.async.bulk.commit_group / wait_group).
  }];
  let arguments = (ins TileGpu_SharedBuffer:$src, TileGpu_TensorMap:$map,
                   Variadic<I32>:$coords);
  let assemblyFormat = [{
    $src `into` $map `[` $coords `]` attr-dict `:` qualified(type($src)) `,`
    qualified(type($map))
  }];
  let hasVerifier = 1;
}

def TileGpu_BulkReduceAddOp : TileGpu_Op<"bulk_reduce_add",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "a warpgroup mma's accumulator added into an array by TMA";
  let description = [{
    Adds `value`, an f32 accumulator whose warpgroups hold 64 rows each
    (the #tile.mma layout of a warpgroup mma), element-wise into the array
    `map` describes, as `tile.atomic_rmw add` would, without a per-element
    atomic: each warpgroup waits until its previous bulk reduction has read
    its part of `buffer` (the buffer's bytes in order, one part per
    warpgroup), writes its rows there as boxes of the map (128-byte
    swizzled panels of 32 elements along the map's inner dimension), and
    one of its threads issues `cp.reduce.async.bulk.tensor .add` per box,
    which the L2 adds in; out-of-bounds elements are dropped. `inner_axis`
    is the axis of `value` that runs along the map's inner dimension, the
    other along map dimension `outer_dim` (an index into `coords`, which are
    innermost first: the box of element (0, 0)). `tilegpu.bulk_wait` waits
    for all of a block's reductions.

    ```mlir
    tilegpu.bulk_reduce_add %dqt through %buf into %map[%c0, %q0, %h]
        {inner_axis = 0 : i64, outer_dim = 1 : i64}
        : tensor<128x64xf32, #mma>, !tilegpu.shared<128x64xf32, slots = 1, swizzle = 128>,
          !tilegpu.tensor_map<1x64x32xf32, swizzle = 128>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$value, TileGpu_SharedBuffer:$buffer,
                   TileGpu_TensorMap:$map, Variadic<I32>:$coords,
                   I64Attr:$inner_axis, I64Attr:$outer_dim);
  let assemblyFormat = [{
    $value `through` $buffer `into` $map `[` $coords `]` attr-dict `:`
    type($value) `,` qualified(type($buffer)) `,` qualified(type($map))
  }];
  let hasVerifier = 1;
}

def TileGpu_BulkStoreOp : TileGpu_Op<"bulk_store",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "a warpgroup mma's result stored into an array by TMA";
  let description = [{
    `tilegpu.bulk_reduce_add`'s steps with a store for the add: `value`
    (whose warpgroups hold 64 rows each) is written into the array `map`
    describes, each warpgroup waiting until its previous bulk copy has read
    its part of `buffer`, writing its rows there as 128-byte swizzled
    boxes of the map, and one of its threads issuing
    `cp.async.bulk.tensor` (shared to global) per box. Out-of-bounds
    elements are dropped. The threads do not wait for the copy: the next
    one, or `tilegpu.bulk_wait` before the kernel ends, does. An mma
    loop's epilogue thus leaves as soon as its rows are in shared memory.

    ```mlir
    tilegpu.bulk_store %c through %buf into %map[%n0, %m0]
        {inner_axis = 1 : i64, outer_dim = 1 : i64}
        : tensor<128x256xf16, #mma>, !tilegpu.shared<128x256xf16, slots = 1, swizzle = 128>,
          !tilegpu.tensor_map<64x64xf16, swizzle = 128>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$value, TileGpu_SharedBuffer:$buffer,
                   TileGpu_TensorMap:$map, Variadic<I32>:$coords,
                   I64Attr:$inner_axis, I64Attr:$outer_dim);
  let assemblyFormat = [{
    $value `through` $buffer `into` $map `[` $coords `]` attr-dict `:`
    type($value) `,` qualified(type($buffer)) `,` qualified(type($map))
  }];
}

def TileGpu_BulkWaitOp : TileGpu_Op<"bulk_wait",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "wait for the block's bulk reductions";
  let description = [{
    Returns once every `tilegpu.bulk_reduce_add` or `tilegpu.bulk_store`
    this thread issued has completed (cp.async.bulk.wait_group 0), then
    passes a barrier of the threads that run it: `buffer`, the copies'
    source, may then serve anything else. With `read`, it returns as soon
    as the copies have read `buffer` (cp.async.bulk.wait_group.read 0),
    their writes perhaps still on the way: for an array the kernel does
    not read back.
  }];
  let arguments = (ins TileGpu_SharedBuffer:$buffer, UnitAttr:$read);
  let assemblyFormat = [{
    $buffer attr-dict `:` qualified(type($buffer))
  }];
}

def TileGpu_StageLayoutOp : TileGpu_Op<"stage_layout",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "a tile's layout changed through a shared buffer";
  let description = [{
    `result` holds the elements of `value` in the result type's layout:
    every thread writes its elements of `value` into the one-slot buffer
    `buffer` (row-major, its padded rows), and reads the result's back.
    What `tile.convert_layout` does through convert-tile-to-gpu's scratch,
    in a buffer of its own that tile-allocate-shared places (where a ring
    that is dead by then was). Block barriers before the writes, between
    them and the reads, and after the reads: the buffer's bytes may serve
    anything else before and after.
  }];
  let arguments = (ins AnyRankedTensor:$value, TileGpu_SharedBuffer:$buffer);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $value `through` $buffer attr-dict `:` type($value) `,`
    qualified(type($buffer)) `->` type($result)
  }];
  let hasVerifier = 1;
}

def TileGpu_ReadSharedOp : TileGpu_Op<"read_shared",
    [MemoryEffects<[MemRead]>]> {
  let summary = "a tile read from a shared buffer in its result's layout";
  let description = [{
    Every thread reads its elements of the result (in the result type's
    layout, replicated elements by each thread holding them) from the
    one-slot row-major buffer `buffer`. No barrier: whatever filled the
    buffer (a TMA copy, waited for on its mbarrier) is complete. How a small
    block a loop reads each iteration beside its mma operands (attention's
    backward: a row of the lse and one of delta, per query block) comes
    through the operands' TMA ring instead of global loads in the loop.

    ```mlir
    %lse = tilegpu.read_shared %slot
        : !tilegpu.shared<1x64xf32, slots = 1> -> tensor<1x64xf32, #mma>
    ```
  }];
  let arguments = (ins TileGpu_SharedBuffer:$buffer);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $buffer attr-dict `:` qualified(type($buffer)) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Tensor cores on shared operands
//===----------------------------------------------------------------------===//

def TileGpu_StageOperandOp : TileGpu_Op<"stage_operand",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "a tile in registers written into a wgmma operand buffer";
  let description = [{
    Every thread writes its elements of `value` into the one-slot buffer
    `buffer` (swizzled panels, as a TMA copy would fill it), fences them
    for the tensor cores' asynchronous proxy, and waits at a barrier of the
    threads that run it (the block, or its warp-specialized role): a
    wgmma after it may read all of the tile, whichever warp wrote it. How
    the backward's dS^T, computed one key row per thread group, becomes
    the B of dQ^T = K^T dS^T, whose contraction runs over every key.

    The barrier orders the writes before the reads only: the caller makes
    sure no wgmma still reads the bytes being written (the pipeline gives
    the buffer two slots and waits for each wgmma that reads one).

    `unsynchronized`: no barrier after the fence; the caller orders the
    writes before the reads otherwise (tile-delay-staged-mma's mbarriers,
    which the writing threads arrive on and the reading ones wait for).

    ```mlir
    tilegpu.stage_operand %ds into %slot
        : tensor<128x64xf16, #mma>, !tilegpu.shared<128x64xf16, slots = 1, swizzle = 128>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$value, TileGpu_SharedBuffer:$buffer,
                   UnitAttr:$unsynchronized);
  let assemblyFormat = [{
    $value `into` $buffer attr-dict `:` type($value) `,` qualified(type($buffer))
  }];
  let hasVerifier = 1;
}

def TileGpu_MmaOp : TileGpu_Op<"mma", [MemoryEffects<[MemRead]>,
    AllTypesMatch<["acc", "result"]>]> {
  let summary = "tile.mma whose operands are read from shared buffers";
  let description = [{
    `result = a @ b + acc` as `tile.mma`, with B (and A, unless A is a
    tile in registers) read from one-slot shared buffers: A [m][k], or A^T
    [k][m] with `a_transposed` (wgmma only: the M-major A of an operand
    read transposed, as the backward's K^T); B [k][n], or B^T [n][k] with
    `b_transposed`. On sm_90 with a warpgroup
    tiling this is wgmma with descriptors derived from the buffers' types;
    otherwise ldmatrix and mma.sync. `in_flight`: the wgmma may still run
    when the op returns, its result defined only after a `wait_mma` (or the
    next `mma` of the chain, which waits for all but one group).
    `deferred` (wgmma only): the group is committed and the op returns
    without waiting at all; a later `wait_mma` whose `pending` counts the
    groups committed after this one takes the result
    (tile-defer-mma-waits).
  }];
  let arguments = (ins AnyTypeOf<[AnyRankedTensor, TileGpu_SharedBuffer]>:$a,
                   TileGpu_SharedBuffer:$b, AnyRankedTensor:$acc,
                   UnitAttr:$b_transposed, UnitAttr:$in_flight,
                   UnitAttr:$a_transposed,
                   UnitAttr:$fast_accumulation,
                   OptionalAttr<Tile_MmaTilingAttr>:$tiling,
                   UnitAttr:$deferred);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $a `,` $b `,` $acc attr-dict `:` type($a) `,` qualified(type($b)) `->` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// A as a tile type (its shape and element type, no layout when A is
    /// in shared memory); B as the [k][n] tile it stands for.
    RankedTensorType getATileType();
    RankedTensorType getBTileType();
    /// A's buffer, or null when A is in registers.
    TypedValue<SharedBufferType> getASharedBuffer() {
      return llvm::dyn_cast<TypedValue<SharedBufferType>>(getA());
    }
  }];
}

def TileGpu_WaitMmaOp : TileGpu_Op<"wait_mma",
    [MemoryEffects<[MemRead, MemWrite]>]> {
  let summary = "wait for in-flight warpgroup mmas and take their results";
  let description = [{
    Returns once at most `pending` groups of wgmmas are in flight
    (wgmma.wait_group), passing the accumulators `accs` through: their
    registers are only read after the wait.
  }];
  let arguments = (ins Variadic<AnyRankedTensor>:$accs,
                   ConfinedAttr<I64Attr, [IntNonNegative]>:$pending);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $accs `pending` `=` $pending attr-dict `:` type($accs) `->` type($results)
  }];
  let hasVerifier = 1;
}

#endif // TILEGPU_OPS_TD
