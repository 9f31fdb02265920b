"""C = A @ B split along K: block (pm, pn, s) multiplies the s-th of SPLIT_K
slices of K into a float32 partial tile, then adds it into C under a spin
lock on its output tile. The first block to take the lock (its count is 0)
stores its partial; the others load C, add theirs and store. So C needs no
zeroing, and several blocks, on one output tile, run their K loops at once
(for a short, wide M x N with a long K)."""

import sys

import numpy as np

from _common import Device, check, tile


@tile.kernel
def splitk_matmul(a, b, c, locks, counts, K, BM: tile.Constant[int],
                  BN: tile.Constant[int], BK: tile.Constant[int],
                  SPLIT_K: tile.Constant[int]):
    pm, pn, s = tile.bid(0), tile.bid(1), tile.bid(2)
    tiles = tile.cdiv(K, BK)
    per = tile.cdiv(tiles, SPLIT_K)
    lo = s * per
    hi = min(lo + per, tiles)
    acc = tile.zeros((BM, BN), tile.float32)
    for k in tile.range(lo, hi):
        x = tile.load(a, index=(pm, k), shape=(BM, BK))
        y = tile.load(b, index=(k, pn), shape=(BK, BN))
        acc = tile.mma(x, y, acc)
    t = pm * tile.num_blocks(1) + pn
    while tile.atomic_cas(locks, (t,), 0, 1) == 1:
        pass
    # Old count: how many partials C already holds (reaches every thread).
    if tile.atomic_add(counts, (t,), 1) > 0:
        acc = acc + tile.load(c, index=(pm, pn), shape=(BM, BN))
    tile.store(c, index=(pm, pn), tile=acc)
    tile.atomic_xchg(locks, (t,), 0)


def splitk(a, b, c, locks, counts, K, grid_mn, bm, bn, bk, split_k):
    """locks and counts: one int32 per output tile, zero on entry."""
    splitk_matmul[grid_mn + (split_k,)](a, b, c, locks, counts, K,
                                         BM=bm, BN=bn, BK=bk, SPLIT_K=split_k)


def main(M=128, N=96, K=1000, bm=64, bn=32, bk=32, split_k=5):
    dev = Device()
    dtype = np.float16 if dev.backend == "cuda" else np.float32
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    grid = (tile.cdiv(M, bm), tile.cdiv(N, bn))
    c = dev.empty((M, N), np.float32)
    locks = dev.put(np.zeros(grid[0] * grid[1], np.int32))
    counts = dev.put(np.zeros(grid[0] * grid[1], np.int32))
    splitk(dev.put(a), dev.put(b), c, locks, counts, K, grid, bm, bn, bk, split_k)
    want = a.astype(np.float64) @ b.astype(np.float64)
    tol = 1e-2 if dtype == np.float16 else 1e-4
    status = check("splitk_matmul", dev.get(c), want, rtol=tol, atol=tol * np.sqrt(K))
    if not (dev.get(counts) == split_k).all() or dev.get(locks).any():
        print("splitk_matmul: counts or locks wrong -> MISMATCH")
        status = 1
    return status


if __name__ == "__main__":
    sys.exit(main())
