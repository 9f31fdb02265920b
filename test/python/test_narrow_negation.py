"""16-bit negation and abs at the edge of the range, widened afterwards:
-(-32768) and abs(-32768) wrap to -32768 in int16 (NumPy's semantics), on
every backend. On sm_90, ptxas 13.0 folded cvt.s32.s16(neg.s16 x) into
-sext(x) and gave +32768 (compiler/gpu/PtxasWorkarounds.cpp)."""
import numpy as np
import pytest

import tile
from tilehelp import Device

pytestmark = pytest.mark.numerics

EDGES = np.array([-32768, -32767, -1, 0, 1, 32767], np.int16)


@pytest.fixture(scope="module")
def dev():
    return Device()


@tile.kernel
def widen(x, neg, mag, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    tile.store(neg, index=(0,), tile=(-t).astype(neg.dtype))
    tile.store(mag, index=(0,), tile=abs(t).astype(mag.dtype))


@tile.kernel
def negated_products(x, out, R: tile.Constant[int], C: tile.Constant[int]):
    t = tile.load(x, index=(tile.bid(0), 0), shape=(R, C), padding=1)
    tile.store(out, index=(tile.bid(0),), tile=tile.prod(-t, axis=1).astype(out.dtype))


def _inputs(n, rng):
    x = rng.integers(-32768, 32768, n).astype(np.int16)
    x[:len(EDGES)] = EDGES
    return x


@pytest.mark.parametrize("wide", [np.int32, np.int64])
def test_negation_and_abs_wrap_before_widening(dev, wide):
    x = _inputs(64, np.random.default_rng(5))
    neg, mag = dev.poisoned(64, wide), dev.poisoned(64, wide)
    widen[(1,)](dev.put(x), neg, mag, B=64)
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(dev.get(neg), (-x).astype(wide))
        np.testing.assert_array_equal(dev.get(mag), np.abs(x).astype(wide))
    assert dev.get(neg)[0] == -32768 and dev.get(mag)[0] == -32768


def test_products_of_negations_wrap(dev):
    rng = np.random.default_rng(6)
    x = rng.integers(-4, 5, (16, 8)).astype(np.int16)
    x[:, 0] = -32768  # -(-32768) is -32768: the product's sign flips with it
    x[3] = [-32768, -1, 1, 1, 1, 1, 1, 1]
    out = dev.poisoned(16, np.int32)
    negated_products[(4,)](dev.put(x), out, R=4, C=8)
    with np.errstate(over="ignore"):  # narrow integers multiply in 32 bits (spec)
        want = np.prod((-x).astype(np.int32), axis=1, dtype=np.int32)
    np.testing.assert_array_equal(dev.get(out), want)
