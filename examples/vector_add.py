"""z = x + y, one block of BLOCK elements per program; the ragged end is
handled by the store dropping out-of-bounds elements."""

import sys

import numpy as np

from _common import Device, check, tile


@tile.kernel
def vadd(x, y, out, BLOCK: tile.Constant[int]):
    i = tile.bid(0)
    a = tile.load(x, index=(i,), shape=(BLOCK,))
    b = tile.load(y, index=(i,), shape=(BLOCK,))
    tile.store(out, index=(i,), tile=a + b)


def main(n=98_432, block=1024):
    dev = Device()
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    out = dev.empty(n, np.float32)
    vadd[(tile.cdiv(n, block),)](dev.put(x), dev.put(y), out, BLOCK=block)
    return check("vector_add", dev.get(out), x.astype(np.float64) + y, rtol=1e-6, atol=1e-6)


if __name__ == "__main__":
    sys.exit(main())
