"""Default search spaces for `tile.autotune` (docs/autotuning.md).

`matmul(dtype)`: Configs for a kernel whose loop feeds `tile.mma` with
(BM, BK) and (BK, BN) tiles and keeps a (BM, BN) accumulator, over Constants
named BM, BN, BK (and GROUP, the grouped block order), warps and cp.async
stages; configs whose operand ring would not fit in shared memory are left
out. A value of None (warps) or 0 (stages) leaves the choice to the compiler
and is spelled as no hint, so the space contains the benchmark's hand-picked
configs exactly (bench/kernels.py).
"""

from __future__ import annotations

import itertools

from .autotune import Config
from .dtypes import to_dtype

__all__ = ["matmul", "attention", "attention_prune", "SHARED_MEMORY_BYTES"]

# Dynamic shared memory a block may opt into on sm_90 (227 KiB).
SHARED_MEMORY_BYTES = 227 * 1024
# Ring slots assumed for num_stages=0 (the compiler chooses, within the limit).
_CHOSEN_STAGES = 2


def _itemsize(dtype):
    return to_dtype(dtype).itemsize


def matmul_shared_bytes(bm, bn, bk, stages, itemsize):
    """Shared memory of the operand ring: `stages` slots of an A (bm x bk)
    and a B (bk x bn) tile."""
    return (stages or _CHOSEN_STAGES) * (bm * bk + bk * bn) * itemsize


def matmul(dtype="float16", *, block_m=(64, 128), block_n=(64, 128, 256), block_k=(32, 64),
           num_warps=(None, 4, 8), num_stages=(0, 3, 4), group=8, persistent=None,
           num_ctas=(None,), shared_memory=SHARED_MEMORY_BYTES):
    """Configs for an mma loop over `dtype` operands: every (BM, BN, BK, warps,
    stages, group, schedule) of the given values whose ring fits in
    `shared_memory` bytes. `group`: an int or a tuple of GROUP values (the
    grouped block order; None: no GROUP constant). `persistent`: None (no
    PERSISTENT constant) or a tuple of its values, for a kernel whose
    `PERSISTENT: tile.Constant[bool]` chooses between one output tile per
    block and one block per SM walking the tiles (the grid callable reads
    it). `num_ctas`: the `num_ctas` hints to try (2: clusters of two blocks
    sharing their TMA copies on sm_90; None: the kernel's own). Pass
    narrower tuples to search less (each config is compiled once per key)."""
    size = _itemsize(dtype)
    groups = group if isinstance(group, (tuple, list)) else (group,)
    schedules = persistent if persistent is not None else (None,)
    out = []
    for bm, bn, bk, warps, stages, grp, pers, ctas in itertools.product(
            block_m, block_n, block_k, num_warps, num_stages, groups, schedules, num_ctas):
        if matmul_shared_bytes(bm, bn, bk, stages, size) > shared_memory:
            continue
        consts = dict(BM=bm, BN=bn, BK=bk)
        if grp is not None:
            consts["GROUP"] = grp
        if pers is not None:
            consts["PERSISTENT"] = bool(pers)
        out.append(Config(consts, num_warps=warps or None, num_stages=stages or None,
                          num_ctas=ctas))
    return out


def attention_shared_bytes(bm, bn, head_dim, stages, itemsize):
    """Shared memory of a flash-attention loop: Q (bm x head_dim) and
    `stages` slots of a K and a V tile (bn x head_dim)."""
    return (bm + (stages or _CHOSEN_STAGES) * 2 * bn) * head_dim * itemsize


def attention(head_dim, dtype="float16", *, block_m=(64, 128), block_n=(64, 128),
              num_stages=(0,), ws_registers=(None,), ping_pong=(None,),
              shared_memory=SHARED_MEMORY_BYTES):
    """Configs for a flash-attention loop: Q (BM x D) stays, K and V
    (BN x D) tiles stream through the ring. `ws_registers`: the (producer,
    consumer) setmaxnreg splits to try (None: the kernel's own); (24, 232)
    with BM 64 lets two blocks share an SM's registers. `ping_pong`: the
    consumer warpgroups taking turns at their wgmmas or not (None: the
    kernel's own)."""
    size = _itemsize(dtype)
    out = []
    for bm, bn, stages, split, turns in itertools.product(block_m, block_n, num_stages,
                                                          ws_registers, ping_pong):
        if attention_shared_bytes(bm, bn, head_dim, stages, size) > shared_memory:
            continue
        out.append(Config(dict(BM=bm, BN=bn), num_stages=stages or None, ws_registers=split,
                          ping_pong=turns))
    return out


def attention_prune(head_dim="D", queries="q", shared_memory=SHARED_MEMORY_BYTES):
    """An `early_config_prune` for one attention space serving several head
    dims: keeps the configs whose Q tile and K/V ring fit in `shared_memory`
    at this launch's head dim (the Constant named `head_dim`) and element
    size (of the array argument named `queries`). A config that leaves its
    slots to the compiler stays if one slot fits (the compiler takes fewer
    where more do not fit)."""
    def prune(configs, named):
        d = named[head_dim]
        size = _itemsize(named[queries].dtype)
        return [c for c in configs
                if attention_shared_bytes(c.kwargs["BM"], c.kwargs["BN"], d, c.num_stages or 1,
                                          size) <= shared_memory]
    return prune
