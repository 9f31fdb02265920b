"""Kernels whose signature has keyword-only parameters (`def k(x, y, *, B)`,
plain Python): they are passed by name at launch, and the tracer passes
them by name to the kernel's body too (it called the body positionally, a
TypeError of the tracer's own naming no kernel line)."""

import numpy as np
import pytest

import tile
from tilehelp import Device, line_of


def make_scaled_copy():
    @tile.kernel
    def scaled_copy(x, out, *, BLOCK: tile.Constant[int], scale=2.0):
        i = tile.bid(0)
        tile.store(out, index=(i,), tile=tile.load(x, index=(i,), shape=(BLOCK,)) * scale)
    return scaled_copy


@pytest.mark.numerics
def test_keyword_only_parameters_reach_the_kernel(launcher):
    dev, kern = Device(), make_scaled_copy()
    x = np.random.default_rng(0).standard_normal(64).astype(np.float32)
    for scale, consts in ((2.0, {}), (-0.5, {"scale": -0.5})):
        out = dev.poisoned((64,), np.float32)
        kern[(4,)](dev.put(x), out, BLOCK=16, **consts)
        np.testing.assert_allclose(dev.get(out), x.astype(np.float64) * scale, rtol=1e-6)


def test_a_keyword_only_parameter_given_by_position_is_named(launcher):
    kern = make_scaled_copy()
    x = Device().put(np.zeros(16, np.float32))
    with pytest.raises(tile.TileTypeError) as e:
        kern[(1,)](x, x, 16)  # @call
    assert "takes 2 positional arguments but 3 were given" in str(e.value)
    assert e.value.kernel == "scaled_copy" and e.value.lineno == line_of(
        test_a_keyword_only_parameter_given_by_position_is_named, "@call")
