"""Promotion and broadcasting rules, property-tested against NumPy and a
PyTorch promotion table (no _tile needed)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tile
from tile import dtypes as D
from tile.language import broadcast_shapes

shapes = st.lists(st.sampled_from([1, 2, 4, 8]), min_size=0, max_size=4).map(tuple)


@settings(max_examples=300, deadline=None)
@given(shapes, shapes)
def test_broadcasting_matches_numpy(a, b):
    try:
        want = np.broadcast_shapes(a, b)
    except ValueError:
        with pytest.raises(tile.TileShapeError):
            broadcast_shapes(a, b)
        return
    assert broadcast_shapes(a, b) == want


# torch.promote_types for the dtypes both have.
TORCH = {
    ("float16", "float32"): "float32", ("bfloat16", "float16"): "float32",
    ("bfloat16", "float32"): "float32", ("float16", "float64"): "float64",
    ("int8", "uint8"): "int16", ("int8", "int32"): "int32", ("uint8", "int16"): "int16",
    ("int32", "float16"): "float16", ("int64", "bfloat16"): "bfloat16",
    ("bool_", "int8"): "int8", ("bool_", "float16"): "float16", ("int16", "int64"): "int64",
    ("uint8", "uint8"): "uint8", ("bool_", "bool_"): "bool_",
}


@pytest.mark.parametrize("pair", sorted(TORCH))
def test_tile_promotion_matches_torch(pair):
    a, b = (getattr(D, n) for n in pair)
    want = getattr(D, TORCH[pair])
    assert D.promote(a, b) is want and D.promote(b, a) is want


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(D.ALL_DTYPES), st.sampled_from(D.ALL_DTYPES))
def test_promotion_is_commutative_and_keeps_the_higher_kind(a, b):
    p = D.promote(a, b)
    assert p is D.promote(b, a)
    assert p.kind == max(a.kind, b.kind)


@pytest.mark.parametrize("scalar,dtype,want", [
    (1, D.float16, D.float16), (1.5, D.float16, D.float16), (1.5, D.int8, D.float32),
    (True, D.int8, D.int8), (3, D.bool_, D.int32), (2.0, D.bool_, D.float32),
    (7, D.uint8, D.uint8), (1.0, D.bfloat16, D.bfloat16),
])
def test_scalars_are_weak(scalar, dtype, want):
    assert D.weak_dtype(D.python_kind(scalar), dtype) is want


def test_float_literals():
    assert D.float_literal(float("inf"), D.float32) == "0x7F800000"
    assert D.float_literal(-float("inf"), D.float16) == "0xFC00"
    assert D.float_literal(float("nan"), D.bfloat16) == "0x7FC0"
    assert D.float_literal(1e6, D.float16) == "0x7C00"  # overflow saturates to inf
    assert D.float_literal(1e-5, D.float32) == "1.0e-05"
    assert D.float_literal(-float("inf"), D.float8_e4m3fn) == "0xFE"  # no inf: -448
    assert D.int_literal(255, D.uint8) == "-1" and D.int_literal(-3, D.int8) == "-3"
    with pytest.raises(OverflowError):
        D.int_literal(256, D.uint8)


def test_dtype_conversions():
    assert D.to_dtype(np.float16) is D.float16 and D.to_dtype(np.dtype("int8")) is D.int8
    assert D.to_dtype("torch.bfloat16") is D.bfloat16 and D.to_dtype(float) is D.float32
    assert D.to_dtype(bool) is D.bool_ and D.to_dtype("complex64") is None
