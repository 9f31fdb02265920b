"""LayerNorm over the last axis, one row per program, streaming the row in
chunks with tile.range: pass 1 carries the sum and the sum of squares, pass 2
normalizes. Columns past the end are masked out of the statistics."""

import sys

import numpy as np

from _common import Device, check, tile


@tile.kernel
def layernorm(x, w, b, out, n_cols, eps, BLOCK: tile.Constant[int]):
    row = tile.bid(0)
    cols = tile.arange(BLOCK)
    total = tile.zeros((BLOCK,), tile.float32)
    squares = tile.zeros((BLOCK,), tile.float32)
    for c in tile.range(tile.cdiv(n_cols, BLOCK)):
        # Out-of-bounds columns read as 0 and add nothing.
        t = tile.reshape(tile.load(x, index=(row, c), shape=(1, BLOCK)), (BLOCK,))
        t = t.astype(tile.float32)
        total = total + t
        squares = squares + t * t
    mean = tile.sum(total) / n_cols
    var = tile.sum(squares) / n_cols - mean * mean
    rstd = tile.rsqrt(var + eps)
    for c in tile.range(tile.cdiv(n_cols, BLOCK)):
        t = tile.reshape(tile.load(x, index=(row, c), shape=(1, BLOCK)), (BLOCK,))
        g = tile.load(w, index=(c,), shape=(BLOCK,))
        h = tile.load(b, index=(c,), shape=(BLOCK,))
        y = (t - mean) * rstd * g + h
        y = tile.where(c * BLOCK + cols < n_cols, y, 0.0)
        tile.store(out, index=(row, c), tile=tile.reshape(y, (1, BLOCK)))


def main(rows=64, cols=1000, block=256, eps=1e-5):
    dev = Device()
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((rows, cols)) * 2 + 1).astype(np.float32)
    w = rng.standard_normal(cols).astype(np.float32)
    b = rng.standard_normal(cols).astype(np.float32)
    out = dev.empty((rows, cols), np.float32)
    layernorm[(rows,)](dev.put(x), dev.put(w), dev.put(b), out, cols, eps, BLOCK=block)
    a = x.astype(np.float64)
    mu = a.mean(axis=1, keepdims=True)
    var = a.var(axis=1, keepdims=True)
    want = (a - mu) / np.sqrt(var + eps) * w + b
    return check("layernorm", dev.get(out), want, rtol=1e-4, atol=1e-4)


if __name__ == "__main__":
    sys.exit(main())
