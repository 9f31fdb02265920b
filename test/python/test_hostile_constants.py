"""Issue 13: float Constants are specializations by their bits. -0.0 == 0.0
and hash(-0.0) == hash(0.0), so a key that compared Constants with == ran a
kernel compiled for 0.0 when called with -0.0 (1 / C gave +inf for -0.0);
and nan != nan made every call with a NaN Constant compile again."""

import numpy as np
import pytest

import tile
from tilehelp import Device


def make_reciprocal():
    @tile.kernel
    def reciprocal(x, out, C: tile.Constant[float], BLOCK: tile.Constant[int]):
        i = tile.bid(0)
        t = tile.load(x, index=(i,), shape=(BLOCK,))
        tile.store(out, index=(i,), tile=t * 0.0 + 1.0 / tile.full((BLOCK,), C, tile.float32))
    return reciprocal


def run(kern, dev, c):
    x = dev.put(np.random.default_rng(0).standard_normal(16).astype(np.float32))
    out = dev.poisoned((16,), np.float32)
    kern[(1,)](x, out, c, BLOCK=16)
    return dev.get(out)


def test_negative_zero_constant_is_its_own_specialization(launcher):
    dev, kern = Device(), make_reciprocal()
    with np.errstate(divide="ignore"):
        for c in (0.0, -0.0, 0.0, -0.0):  # both orders, and again from the cache
            got = run(kern, dev, c)
            np.testing.assert_array_equal(got, np.full(16, np.float32(1.0) / np.float32(c)))
    assert kern.compile_count == 2


def test_nan_constant_compiles_once(launcher):
    dev, kern = Device(), make_reciprocal()
    for _ in range(4):
        got = run(kern, dev, float("nan"))
        assert np.isnan(got).all()
    assert kern.compile_count == 1
