"""Row-wise softmax: one row per program, the row padded to a power of two
with -inf so the padding contributes exp(-inf) = 0."""

import sys

import numpy as np

from _common import Device, check, tile


@tile.kernel
def softmax(x, out, BLOCK: tile.Constant[int]):
    row = tile.bid(0)
    t = tile.load(x, index=(row, 0), shape=(1, BLOCK), padding=-tile.inf)
    t = t - tile.max(t, axis=1, keepdims=True)
    e = tile.exp(t)
    tile.store(out, index=(row, 0), tile=e / tile.sum(e, axis=1, keepdims=True))


def main(rows=128, cols=781):
    dev = Device()
    x = np.random.default_rng(0).standard_normal((rows, cols)).astype(np.float32) * 4
    out = dev.empty((rows, cols), np.float32)
    block = 1 << (cols - 1).bit_length()
    softmax[(rows,)](dev.put(x), out, BLOCK=block)
    a = x.astype(np.float64)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return check("softmax", dev.get(out), e / e.sum(axis=1, keepdims=True),
                 rtol=1e-5, atol=1e-7)


if __name__ == "__main__":
    sys.exit(main())
