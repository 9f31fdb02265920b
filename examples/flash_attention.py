"""Flash attention forward: softmax(Q K^T * scale) V, one program per BM
queries of one (batch*head), streaming keys/values in BN blocks with the
online softmax (running max `m`, running sum `l`, accumulator `acc`, all
carried by the tile.range loops). K is loaded transposed with order=(0, 2, 1).

One tile.range over the key blocks, each masked (keys past `seq`, and
above the diagonal when causal): the compiler leaves the mask only on the
blocks that need it (the diagonal, the last block), and causal programs
stop at their diagonal instead of masking the blocks above it. Written as
two loops (unmasked, then masked) the kernel is correct too, but the
second loop's ring starts cold and sm_90's warp specialization takes one
mma loop a kernel (an H100, 2026-12-06: 0.81x SDPA, where bench's
one-loop kernel ran at 0.98x)."""

import math
import sys

import numpy as np

from _common import Device, check, tile


LOG2E = math.log2(math.e)


def online_softmax_step(Q, k, v, kvh, j, rows, seq, scale, m, l, acc,
                        BN, D, MASK, CAUSAL, FP8=None):
    """One key block (of K/V head `kvh`) of the online softmax; MASK and
    CAUSAL are Python bools (decided while tracing), so the unmasked loop
    carries no mask code. The running max `m` is in log2 units: exp(x *
    scale) = exp2(x * scale * log2(e)), the scale folded into one
    multiply-add per element, and exp2's flush_to_zero makes it one
    ex2.approx.ftz on CUDA (as cuTile's attention samples write it).
    FP8 (an fp8 dtype; flash_attention_fp8.py): k and v hold its codes, v
    given transposed as (kv heads, D, L), since sm_90's fp8 tensor cores
    read both operands K-major; the mmas accumulate fast (fp8's own)."""
    Kt = tile.reshape(tile.load(k, index=(kvh, 0, j), shape=(1, D, BN), order=(0, 2, 1)),
                      (D, BN))
    if FP8 is None:
        V = tile.reshape(tile.load(v, index=(kvh, j, 0), shape=(1, BN, D)), (BN, D))
    else:
        Kt = tile.bitcast(Kt, FP8)
        V = tile.transpose(tile.bitcast(
            tile.reshape(tile.load(v, index=(kvh, 0, j), shape=(1, D, BN)), (D, BN)), FP8))
    fast = FP8 is not None
    s = tile.mma(Q, Kt, tile.zeros((Q.shape[0], BN), tile.float32), use_fast_acc=fast)
    scale2 = scale * LOG2E
    if MASK:
        cols = j * BN + tile.arange(BN)
        valid = cols[None, :] < seq
        if CAUSAL:
            valid = valid & (cols[None, :] <= rows[:, None])
        s = tile.where(valid, s, -tile.inf)
    m_new = tile.maximum(m, tile.max(s, axis=1) * scale2)
    alpha = tile.exp2(m - m_new, flush_to_zero=True)
    p = tile.exp2(s * scale2 - m_new[:, None], flush_to_zero=True)
    l = l * alpha + tile.sum(p, axis=1)
    acc = acc * alpha[:, None] + tile.mma(p.astype(V.dtype), V,
                                          tile.zeros(acc.shape, tile.float32),
                                          use_fast_acc=fast)
    return m_new, l, acc


# Heads per section of the causal order (block_and_head): the K and V of 4
# heads stay in L2 while their blocks run (L 4096, D 128: 8 MB).
CAUSAL_SECTION = 4


def block_and_head(CAUSAL, LONGEST_LAST):
    """This program's (block, head) of a (blocks, heads) grid. Causal:
    longest first, as FlashAttention-3 schedules it: the heads in sections
    of CAUSAL_SECTION, and in a section the blocks with the most work
    (the last query blocks if LONGEST_LAST, else the first key blocks) of
    all its heads before any shorter one, so the short ones fill the grid's
    tail while the section's K and V stay in L2. An H200, 2026-12-06,
    against longest first head by head: forward D128 +2%, dQ +1.7%, dK/dV
    +2.5%, grouped-query dK/dV +17%; across all heads at once (no
    sections) the forward lost 9% (K and V no longer fit in L2)."""
    if not CAUSAL:  # a Constant: decided while tracing
        return tile.bid(0), tile.bid(1)
    n_blocks, n_heads = tile.num_blocks(0), tile.num_blocks(1)
    order, span = tile.bid(1) * n_blocks + tile.bid(0), CAUSAL_SECTION * n_blocks
    section = order // span
    rank = order - section * span
    # Heads in this section: CAUSAL_SECTION but in a short last one.
    heads = tile.minimum(n_heads - section * CAUSAL_SECTION, CAUSAL_SECTION)
    step = rank // heads
    head = section * CAUSAL_SECTION + rank - step * heads
    return (n_blocks - 1 - step if LONGEST_LAST else step), head


def query_block_state(q, bh, qb, BM, D):
    """This program's BM queries and their rows, with the online softmax's
    starting state: running max -inf, running sum 0, accumulator 0."""
    Q = tile.reshape(tile.load(q, index=(bh, qb, 0), shape=(1, BM, D)), (BM, D))
    rows = qb * BM + tile.arange(BM)
    m = tile.full((BM,), -tile.inf, tile.float32)
    l = tile.zeros((BM,), tile.float32)
    return Q, rows, m, l, tile.zeros((BM, D), tile.float32)


@tile.kernel
def attention(q, k, v, out, seq, scale, BM: tile.Constant[int], BN: tile.Constant[int],
              D: tile.Constant[int], CAUSAL: tile.Constant[bool],
              GROUP: tile.Constant[int] = 1):
    # q, out: (batch*heads, L, D); k, v: (batch*kv_heads, L, D), GROUP query
    # heads per K/V head (grouped-query attention; 1: multi-head).
    qb, bh = block_and_head(CAUSAL, LONGEST_LAST=True)
    kvh = bh // GROUP
    Q, rows, m, l, acc = query_block_state(q, bh, qb, BM, D)
    n_blocks = tile.cdiv(seq, BN)      # blocks with a key
    if CAUSAL:  # a Constant: decided while tracing
        # None past the block holding the last row's diagonal.
        n_blocks = min(n_blocks, tile.cdiv((qb + 1) * BM, BN))
    # Every block builds its mask; the compiler (tile-split-uniform-masks)
    # runs the blocks every row of this program sees whole, below the
    # diagonal and inside `seq`, in a loop without it.
    for j in tile.range(n_blocks):
        m, l, acc = online_softmax_step(Q, k, v, kvh, j, rows, seq, scale, m, l, acc,
                                        BN, D, MASK=True, CAUSAL=CAUSAL)
    o = acc / l[:, None]
    tile.store(out, index=(bh, qb, 0), tile=tile.reshape(o.astype(out.dtype), (1, BM, D)))


def reference(q, k, v, scale, causal):
    """Float64 attention; k and v may have fewer heads than q (grouped-query
    attention: consecutive query heads share one)."""
    group = q.shape[0] // k.shape[0]
    k, v = np.repeat(k, group, 0), np.repeat(v, group, 0)
    s = np.einsum("bqd,bkd->bqk", q, k) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[1:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("bqk,bkd->bqd", p / p.sum(-1, keepdims=True), v)


def run(dev, q, k, v, causal, bm, bn):
    """attention(q, k, v) on the device, with the output poisoned first."""
    batch_heads, seq, d = q.shape
    out = dev.empty((batch_heads, seq, d), np.float32)
    attention[(tile.cdiv(seq, bm), batch_heads)](
        dev.put(q), dev.put(k), dev.put(v), out, seq, 1.0 / math.sqrt(d),
        BM=bm, BN=bn, D=d, CAUSAL=causal, GROUP=batch_heads // k.shape[0])
    return dev.get(out)


def main(batch_heads=4, seq=200, d=64, bm=64, bn=64):
    dev = Device()
    dtype = np.float16 if dev.backend == "cuda" else np.float32
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((batch_heads, seq, d)).astype(dtype) for _ in range(3))
    scale = 1.0 / math.sqrt(d)
    status = 0
    for causal in (False, True):
        got = run(dev, q, k, v, causal, bm, bn)
        want = reference(*(x.astype(np.float64) for x in (q, k, v)), scale, causal)
        tol = 2e-2 if dtype == np.float16 else 1e-4
        status |= check(f"flash_attention(causal={causal})", got, want, rtol=tol, atol=tol)
    return status


if __name__ == "__main__":
    sys.exit(main())
