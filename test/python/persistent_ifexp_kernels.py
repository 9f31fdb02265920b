"""bench's persistent attention with its causal tile order written as
conditional expressions on runtime values (scf.if's in front of the key
loop), as a user would write it first: test_persistent_attention.py checks
that tile-warp-specialize still gives it a producer (which computes those
scf.if's itself) and that it matches float64."""
import os
import sys

import tile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from tilehelp import load_script  # noqa: E402

_attention_tile = load_script("bench", "kernels.py")["_attention_tile"]


@tile.kernel(ws_registers=(24, 240))
def attention_persistent_ifexp(q, k, v, o, scale, BM: tile.Constant[int],
                               BN: tile.Constant[int], D: tile.Constant[int],
                               GROUP: tile.Constant[int] = 1):
    # Causal only: pairs of a head's longest and shortest query blocks
    # left, then each head's middle block (bench's attention_persistent).
    n_mb = q.shape[1] // BM
    heads = q.shape[0]
    block, blocks = tile.bid(0), tile.num_blocks(0)
    half = n_mb // 2
    per_head = max(half, 1)
    pairs = max(tile.cdiv(half * heads - block, blocks), 0)
    singles = max(tile.cdiv((n_mb % 2) * heads - block, blocks), 0)
    for i in range(2 * pairs + singles):
        pair = (i // 2) * blocks + block
        a = pair % per_head
        mb = (n_mb - 1 - a if i % 2 == 0 else a) if i < 2 * pairs else half
        bh = pair // per_head if i < 2 * pairs else (i - 2 * pairs) * blocks + block
        _attention_tile(q, k, v, o, bh, mb, bh // GROUP, scale * 1.4426950408889634,
                        BM, BN, D, True)
