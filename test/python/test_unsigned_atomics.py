"""atomic_max/atomic_min on unsigned arrays compare as unsigned (values at
and above 2**31 are large, not negative), on every backend and in both the
tile and the scalar forms; signed arrays keep comparing as signed."""
import numpy as np
import pytest

import tile
from tilehelp import Device

pytestmark = pytest.mark.numerics


@pytest.fixture(scope="module")
def dev():
    return Device()


@tile.kernel
def rmw_tile(a, v, old, MAX: tile.Constant[bool], B: tile.Constant[int]):
    idx = tile.arange(B)
    vals = tile.load(v, index=(0,), shape=(B,))
    fn = tile.atomic_max if MAX else tile.atomic_min
    tile.store(old, index=(0,), tile=fn(a, idx, vals))


@pytest.mark.parametrize("dt", [np.uint32, np.uint64, np.int32, np.int64])
@pytest.mark.parametrize("is_max", [True, False])
def test_tile_atomic_max_min_follow_the_dtype(dev, dt, is_max):
    rng = np.random.default_rng(7)
    info = np.iinfo(dt)
    n = 64
    a = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    v = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
    # The cases signedness decides: high bit set on one side only.
    a[:4] = np.array([1, info.max, 0, info.max // 2 + 1], dt)
    v[:4] = np.array([info.max // 2 + 1, 1, info.max, 0], dt)
    A = dev.put(a)
    old = dev.poisoned(n, dt)
    rmw_tile[(1,)](A, dev.put(v), old, MAX=is_max, B=n)
    want = np.maximum(a, v) if is_max else np.minimum(a, v)
    np.testing.assert_array_equal(dev.get(A), want)
    np.testing.assert_array_equal(dev.get(old), a)


@tile.kernel
def rmw_scalar(a, x):
    tile.atomic_max(a, (0,), x)
    tile.atomic_min(a, (1,), x)


def test_scalar_unsigned_atomics(dev):
    a = np.array([5, 2**32 - 2], np.uint32)
    A = dev.put(a)
    rmw_scalar[(1,)](A, np.uint32(2**31 + 3))
    np.testing.assert_array_equal(dev.get(A), np.array([2**31 + 3, 2**31 + 3], np.uint32))
