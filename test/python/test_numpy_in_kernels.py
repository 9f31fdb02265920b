"""NumPy inside a kernel body: a NumPy scalar (a module constant such as
np.log2(np.e), a float64) on either side of an operator with a tile acts as
a Python number does (NumPy tried to turn the tile into an array and raised
"Could not convert object to sequence" when the scalar came first); a NumPy
function given a tile says it takes none, and every exception that is not
tile's own is annotated with the kernel and the user's line."""

import numpy as np
import pytest

import tile
from tilehelp import Device, line_of

LOG2E = np.log2(np.e)  # a numpy.float64


@tile.kernel
def numpy_scalars_first(x, out, BLOCK: tile.Constant[int]):
    t = tile.load(x, index=(tile.bid(0),), shape=(BLOCK,))
    r = LOG2E * t + np.int32(3) - np.float32(0.25) * t / np.float16(2)
    tile.store(out, index=(tile.bid(0),), tile=r - t * LOG2E + np.int64(1) - t)


@pytest.mark.numerics
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_numpy_scalars_on_either_side_act_as_python_numbers(dtype):
    dev = Device()
    x = np.random.default_rng(0).standard_normal(64).astype(dtype)
    out = dev.poisoned((64,), dtype)
    numpy_scalars_first[(2,)](dev.put(x), out, BLOCK=32)
    x64 = x.astype(np.float64)
    want = 3.0 - 0.125 * x64 + 1.0 - x64
    tol = 1e-2 if dtype == np.float16 else 1e-5
    np.testing.assert_allclose(dev.get(out).astype(np.float64), want, rtol=tol, atol=tol)


@tile.kernel
def calls_numpy_on_a_tile(x, out, BLOCK: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(BLOCK,))
    tile.store(out, index=(0,), tile=np.exp(t))  # @numpy


def test_a_numpy_function_given_a_tile_names_the_kernel_line():
    x = np.zeros(16, np.float32)
    with pytest.raises(TypeError, match="does not support ufuncs") as e:
        calls_numpy_on_a_tile.trace(x, x, BLOCK=16)
    line = line_of(calls_numpy_on_a_tile, "@numpy")
    assert f"kernel 'calls_numpy_on_a_tile' at {__file__}:{line}" in "".join(e.value.__notes__)
