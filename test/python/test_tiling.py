"""tile-chunk-loops's reductions into loops, end to end: rows longer than the
pass's max-reduce-extent (16384) are reduced chunk by chunk (8192), on
whatever backend tile._tile provides. Checked against NumPy in float64 with
outputs poisoned first; ragged rows check that padding and bounds hold per
chunk as they did for the whole row."""

import numpy as np
import pytest

import tile
from tilehelp import Device, assert_close

pytestmark = pytest.mark.numerics

BLOCK = 32768  # 4 chunks of 8192
RNG = np.random.default_rng(4321)


@pytest.fixture(scope="module")
def dev():
    return Device()


@tile.kernel
def row_sum(x, out, BLOCK: tile.Constant[int]):
    r = tile.bid(0)
    t = tile.load(x, index=(r, 0), shape=(1, BLOCK))
    tile.store(out, index=(r,), tile=tile.sum(t, axis=1))


@tile.kernel
def row_max_sumsq(x, mx, sq, BLOCK: tile.Constant[int]):
    # Two long reductions of an f16 row through a cast and a square, each
    # its own loop; the max sees -inf past the row's end.
    r = tile.bid(0)
    t = tile.load(x, index=(r, 0), shape=(1, BLOCK), padding=-tile.inf)
    f = t.astype(tile.float32)
    tile.store(mx, index=(r,), tile=tile.max(f, axis=1))
    z = tile.load(x, index=(r, 0), shape=(1, BLOCK)).astype(tile.float32)
    tile.store(sq, index=(r,), tile=tile.sum(z * z, axis=1))


@pytest.mark.parametrize("n", [BLOCK, 30001])
def test_long_row_sum(dev, n):
    rows = 3
    x = RNG.standard_normal((rows, n)).astype(np.float32)
    out = dev.poisoned(rows, np.float32)
    row_sum[(rows,)](dev.put(x), out, BLOCK=BLOCK)
    assert_close(dev.get(out), x.astype(np.float64).sum(axis=1), rtol=1e-4, atol=1e-3)


def test_long_row_is_reduced_in_a_loop(dev):
    x = np.zeros((1, BLOCK), np.float32)
    k = row_sum.compile(dev.put(x), dev.put(np.zeros(1, np.float32)), BLOCK=BLOCK)
    if "tiled" in k.asm:  # GPU: its own stage
        tiled = k.asm["tiled"]
    elif "host" in k.asm:  # CPU: the first pass of the host stage
        tiled = k.asm["host"]
    else:
        pytest.skip("_tile not built")
    assert "scf.for" in tiled
    assert "32768" not in tiled  # no tile of the whole row is left


def test_long_row_max_and_sum_of_squares(dev):
    rows, n = 2, 20000
    x = (RNG.standard_normal((rows, n)) - 3.0).astype(np.float16)  # all < 0: -inf pads matter
    mx, sq = dev.poisoned(rows, np.float32), dev.poisoned(rows, np.float32)
    row_max_sumsq[(rows,)](dev.put(x), mx, sq, BLOCK=BLOCK)
    x64 = x.astype(np.float64)
    assert_close(dev.get(mx), x64.max(axis=1))
    assert_close(dev.get(sq), (x64 * x64).sum(axis=1), rtol=1e-4, atol=1e-2)
