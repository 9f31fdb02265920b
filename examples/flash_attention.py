"""Flash attention forward: softmax(Q K^T * scale) V, one program per BM
queries of one (batch*head), streaming keys/values in BN blocks with the
online softmax (running max `m`, running sum `l`, accumulator `acc`, all
carried by the tile.range loop). K is loaded transposed with order=(1, 0)."""

import math
import sys

import numpy as np

from _common import Device, check, tile


@tile.kernel
def attention(q, k, v, out, seq, scale, BM: tile.Constant[int], BN: tile.Constant[int],
              D: tile.Constant[int], CAUSAL: tile.Constant[bool]):
    bh, qb = tile.bid(1), tile.bid(0)
    Q = tile.reshape(tile.load(q, index=(bh, qb, 0), shape=(1, BM, D)), (BM, D))
    rows = qb * BM + tile.arange(BM)
    m = tile.full((BM,), -tile.inf, tile.float32)
    l = tile.zeros((BM,), tile.float32)
    acc = tile.zeros((BM, D), tile.float32)
    for j in tile.range(tile.cdiv(seq, BN)):
        Kt = tile.reshape(tile.load(k, index=(bh, j, 0), shape=(1, BN, D), order=(0, 2, 1)),
                          (D, BN))
        V = tile.reshape(tile.load(v, index=(bh, j, 0), shape=(1, BN, D)), (BN, D))
        s = tile.mma(Q, Kt, tile.zeros((BM, BN), tile.float32)) * scale
        cols = j * BN + tile.arange(BN)
        valid = cols[None, :] < seq
        if CAUSAL:  # a Constant: decided while tracing
            valid = valid & (cols[None, :] <= rows[:, None])
        s = tile.where(valid, s, -tile.inf)
        m_new = tile.maximum(m, tile.max(s, axis=1))
        alpha = tile.exp(m - m_new)
        p = tile.exp(s - m_new[:, None])
        l = l * alpha + tile.sum(p, axis=1)
        acc = acc * alpha[:, None] + tile.mma(p.astype(V.dtype), V,
                                              tile.zeros((BM, D), tile.float32))
        m = m_new
    o = acc / l[:, None]
    tile.store(out, index=(bh, qb, 0), tile=tile.reshape(o.astype(out.dtype), (1, BM, D)))


def reference(q, k, v, scale, causal):
    s = np.einsum("bqd,bkd->bqk", q, k) * scale
    if causal:
        s = np.where(np.tril(np.ones(s.shape[1:], bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return np.einsum("bqk,bkd->bqd", p / p.sum(-1, keepdims=True), v)


def main(batch_heads=4, seq=200, d=64, bm=64, bn=64):
    dev = Device()
    dtype = np.float16 if dev.backend == "cuda" else np.float32
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((batch_heads, seq, d)).astype(dtype) for _ in range(3))
    scale = 1.0 / math.sqrt(d)
    status = 0
    for causal in (False, True):
        out = dev.empty((batch_heads, seq, d), np.float32)
        attention[(tile.cdiv(seq, bm), batch_heads)](
            dev.put(q), dev.put(k), dev.put(v), out, seq, scale,
            BM=bm, BN=bn, D=d, CAUSAL=causal)
        want = reference(*(x.astype(np.float64) for x in (q, k, v)), scale, causal)
        tol = 2e-2 if dtype == np.float16 else 1e-4
        status |= check(f"flash_attention(causal={causal})", dev.get(out), want,
                        rtol=tol, atol=tol)
    return status


if __name__ == "__main__":
    sys.exit(main())
