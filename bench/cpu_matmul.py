"""The CPU backend's matmul beside NumPy, in one process.

    python3 bench/cpu_matmul.py [--size 512] [--block 64] [--bk 32] [--repeat 20]

Compiles a tile matmul (BM = BN = --block, BK = --bk, float32, one program
per output block) for the CPU backend, checks it against NumPy in float64,
then reports the median time of each and their ratio. The CPU backend's
target is a ratio within 10 on a 512x512x512 problem with 64x64 blocks and
BK = 32. Exits non-zero when the check fails or the ratio is above --max-ratio
(default 10).
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python-frontend"))

import tile  # noqa: E402


@tile.kernel(backend="cpu")
def matmul(a, b, c, K, BM: tile.Constant[int], BN: tile.Constant[int],
           BK: tile.Constant[int]):
    pm, pn = tile.bid(0), tile.bid(1)
    acc = tile.zeros((BM, BN), tile.float32)
    for k in tile.range(tile.cdiv(K, BK)):
        x = tile.load(a, index=(pm, k), shape=(BM, BK))
        y = tile.load(b, index=(k, pn), shape=(BK, BN))
        acc = tile.mma(x, y, acc)
    tile.store(c, index=(pm, pn), tile=acc)


def median_ms(fns, repeat):
    """Median milliseconds of each function, timed in turns so that other
    load on the machine affects them alike."""
    for fn in fns:
        fn()  # warm up
    times = [[] for _ in fns]
    for _ in range(repeat):
        for fn, t in zip(fns, times):
            t0 = time.perf_counter()
            fn()
            t.append((time.perf_counter() - t0) * 1e3)
    return [statistics.median(t) for t in times]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=512, help="M = N = K")
    ap.add_argument("--block", type=int, default=64, help="BM = BN")
    ap.add_argument("--bk", type=int, default=32)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--max-ratio", type=float, default=10.0)
    args = ap.parse_args()

    n, bm, bk = args.size, args.block, args.bk
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    c = np.full((n, n), np.nan, np.float32)
    grid = (tile.cdiv(n, bm), tile.cdiv(n, bm))

    def run_tile():
        matmul[grid](a, b, c, n, BM=bm, BN=bm, BK=bk)

    t0 = time.perf_counter()
    run_tile()
    compile_s = time.perf_counter() - t0
    err = np.abs(c - a.astype(np.float64) @ b.astype(np.float64)).max()
    ok = err <= 1e-3 * np.sqrt(n)

    tile_ms, numpy_ms = median_ms([run_tile, lambda: np.matmul(a, b)],
                                  args.repeat)
    flops = 2.0 * n ** 3
    ratio = tile_ms / numpy_ms
    print(f"matmul {n}x{n}x{n} f32, blocks {bm}x{bm}, BK {bk}, "
          f"{os.cpu_count()} cores")
    print(f"  tile  {tile_ms:8.2f} ms  {flops / tile_ms / 1e6:8.1f} GFLOP/s "
          f"(first call with compile: {compile_s:.2f} s)")
    print(f"  numpy {numpy_ms:8.2f} ms  {flops / numpy_ms / 1e6:8.1f} GFLOP/s")
    print(f"  ratio {ratio:.2f} (target <= {args.max_ratio:g}), "
          f"max |error| {err:.2e} {'ok' if ok else 'WRONG'}")
    return 0 if ok and ratio <= args.max_ratio else 1


if __name__ == "__main__":
    sys.exit(main())
