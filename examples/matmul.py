"""C = A @ B: each program computes a BM x BN tile of C, looping over K in
BK steps with an mma into a float32 accumulator (float16 inputs on CUDA,
float32 on the CPU backend)."""

import sys

import numpy as np

from _common import Device, check, tile


@tile.kernel
def matmul(a, b, c, K, BM: tile.Constant[int], BN: tile.Constant[int],
           BK: tile.Constant[int]):
    pm, pn = tile.bid(0), tile.bid(1)
    acc = tile.zeros((BM, BN), tile.float32)
    for k in tile.range(tile.cdiv(K, BK)):
        x = tile.load(a, index=(pm, k), shape=(BM, BK))
        y = tile.load(b, index=(k, pn), shape=(BK, BN))
        acc = tile.mma(x, y, acc)
    tile.store(c, index=(pm, pn), tile=acc.astype(c.dtype))


def main(M=192, N=160, K=200, bm=64, bn=64, bk=32):
    dev = Device()
    dtype = np.float16 if dev.backend == "cuda" else np.float32
    rng = np.random.default_rng(0)
    a = rng.standard_normal((M, K)).astype(dtype)
    b = rng.standard_normal((K, N)).astype(dtype)
    c = dev.empty((M, N), np.float32)
    matmul[(tile.cdiv(M, bm), tile.cdiv(N, bn))](dev.put(a), dev.put(b), c, K,
                                                 BM=bm, BN=bn, BK=bk)
    want = a.astype(np.float64) @ b.astype(np.float64)
    tol = 1e-2 if dtype == np.float16 else 1e-4
    return check("matmul", dev.get(c), want, rtol=tol, atol=tol * np.sqrt(K))


if __name__ == "__main__":
    sys.exit(main())
