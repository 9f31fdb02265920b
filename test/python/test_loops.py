"""tile.range device loops: loop-carried values through ordinary rebinding."""

import re

import numpy as np
import pytest

import tile
from tilehelp import count, line_of, trace

F32 = np.zeros(4096, np.float32)
F16 = np.zeros(4096, np.float16)
M32 = np.zeros((64, 64), np.float32)


def scf_for_lines(ir):
    return [ln for ln in ir.splitlines() if "scf.for" in ln]


@tile.kernel
def two_carried(x, out, n, B: tile.Constant[int]):
    acc = tile.zeros((B,), tile.float32)
    m = tile.full((B,), -tile.inf, tile.float32)
    for k in tile.range(n):  # @loop
        t = tile.load(x, index=(k,), shape=(B,))
        acc = acc + t
        m = tile.maximum(m, t)
    tile.store(out, index=(0,), tile=acc + m)


def test_several_carried_values():
    ir = trace(two_carried, F32, F32, 5, B=64)
    (head,) = scf_for_lines(ir)
    assert re.search(r"%\d+:2 = scf\.for %\d+ = %\d+ to %n step %\d+ iter_args\(", head)
    assert "-> (tensor<64xf32>, tensor<64xf32>) : i32" in head
    assert count(ir, "scf.yield") == 1
    assert count(ir, "tile.load") == 1  # traced once, not unrolled
    assert f":{line_of(two_carried, '@loop')}:5)" in [ln for ln in ir.splitlines()
                                                     if ln.strip().startswith("}")][0]


@tile.kernel
def nested(x, out, n, m, B: tile.Constant[int]):
    total = tile.zeros((B,), tile.float32)
    for i in tile.range(n):
        row = tile.zeros((B,), tile.float32)
        for j in tile.range(m):
            row = row + tile.load(x, index=(i * m + j,), shape=(B,))
        total = total + row * 0.5
    tile.store(out, index=(0,), tile=total)


def test_nested_loops():
    ir = trace(nested, F32, F32, 3, 4, B=32)
    heads = scf_for_lines(ir)
    assert len(heads) == 2
    assert all("-> (tensor<32xf32>)" in h for h in heads)
    assert count(ir, "scf.yield") == 2


@tile.kernel
def defined_inside(x, out, n, B: tile.Constant[int]):
    for k in tile.range(n):
        last = tile.load(x, index=(k,), shape=(B,))
        scratch = last * 2.0  # never used after the loop: not carried
        tile.store(out, index=(k,), tile=scratch)
    tile.store(out, index=(0,), tile=last + k)


def test_values_defined_inside_and_used_after():
    ir = trace(defined_inside, F32, F32, 4, B=16)
    (head,) = scf_for_lines(ir)
    # `last` and the induction variable `k` are used after the loop; the
    # temporaries are not carried.
    assert "-> (tensor<16xf32>, i32)" in head or "-> (i32, tensor<16xf32>)" in head


@tile.kernel
def promoted(x, out, n, B: tile.Constant[int]):
    acc = 0.0                # a Python number becomes a carried tile
    count_ = 0               # a Python int counter becomes an i32 scalar
    best = -tile.inf
    for k in tile.range(1, n, 2):
        t = tile.load(x, index=(k,), shape=(B,))
        acc = acc + t
        count_ = count_ + 1
        best = tile.maximum(best, tile.max(t))
    tile.store(out, index=(0,), tile=acc / count_ + best)


def test_python_numbers_become_carried_values():
    ir = trace(promoted, F16, F16, 9, B=16)
    (head,) = scf_for_lines(ir)
    assert "tensor<16xf16>" in head and "i32" in head and "tensor<f16>" in head
    assert "step %" in head


@tile.kernel
def carried_tuple(x, out, n, B: tile.Constant[int]):
    pair = (tile.zeros((B,), tile.float32), tile.zeros((B,), tile.float32))
    accs = [tile.zeros((B,), tile.float32) for _ in range(2)]
    for k in tile.range(n):
        t = tile.load(x, index=(k,), shape=(B,))
        pair = (pair[0] + t, pair[1] * t)
        accs = [a + t for a in accs]
    tile.store(out, index=(0,), tile=pair[0] + pair[1] + accs[0] + accs[1])


def test_tuples_and_lists_of_tiles_are_carried():
    ir = trace(carried_tuple, F32, F32, 3, B=16)
    (head,) = scf_for_lines(ir)
    assert head.count("tensor<16xf32>") == 4
    assert re.search(r"%\d+:4 = scf\.for", head)


@tile.kernel
def no_carried(x, out, n, B: tile.Constant[int]):
    for k in tile.range(n):
        tile.store(out, index=(k,), tile=tile.load(x, index=(k,), shape=(B,)) * 3.0)


def test_loop_without_carried_values():
    ir = trace(no_carried, F32, F32, 8, B=16)
    (head,) = scf_for_lines(ir)
    assert "iter_args" not in head and "scf.yield" not in ir


@tile.kernel
def same_names_in_two_branches(x, out, n, B: tile.Constant[int], FIRST: tile.Constant[bool]):
    # `k2` and `t` are bound in the loop of each trace-time branch and read
    # only there: neither loop carries them (each reads the other's only).
    if FIRST:
        for k in range(n):
            k2 = k * 2
            t = tile.load(x, index=(k2,), shape=(B,))
            tile.store(out, index=(k2,), tile=t)
    else:
        for k in range(n):
            k2 = k * 2 + 1
            t = tile.load(x, index=(k2,), shape=(B,))
            tile.store(out, index=(k2,), tile=t * 2.0)


@tile.kernel
def read_below_the_loop(x, out, n, B: tile.Constant[int]):
    for k in range(n):
        last = tile.load(x, index=(k,), shape=(B,))
    tile.store(out, index=(0,), tile=last)


def test_a_name_read_only_in_another_branch_is_not_carried():
    for first in (True, False):
        ir = trace(same_names_in_two_branches, F32, F32, 4, B=16, FIRST=first)
        (head,) = scf_for_lines(ir)
        assert "iter_args" not in head, head


def test_a_name_read_below_the_loop_is_carried():
    (head,) = scf_for_lines(trace(read_below_the_loop, F32, F32, 4, B=16))
    assert "iter_args" in head and "tensor<16xf32>" in head



@tile.kernel
def mma_loop(a, b, out, K, BM: tile.Constant[int], BN: tile.Constant[int],
             BK: tile.Constant[int]):
    pm, pn = tile.bid(0), tile.bid(1)
    acc = tile.zeros((BM, BN), tile.float32)
    for k in tile.range(tile.cdiv(K, BK)):
        x = tile.load(a, index=(pm, k), shape=(BM, BK))
        y = tile.load(b, index=(k, pn), shape=(BK, BN))
        acc = tile.mma(x, y, acc)
    tile.store(out, index=(pm, pn), tile=acc.astype(out.dtype))


def test_mma_accumulator_loop():
    h = np.zeros((64, 64), np.float16)
    ir = trace(mma_loop, h, h, h, 64, BM=32, BN=32, BK=16)
    (head,) = scf_for_lines(ir)
    assert "-> (tensor<32x32xf32>)" in head
    assert "arith.ceildivsi" in ir and "arith.truncf" in ir


def helper_with_loop(x, n, B):
    s = tile.zeros((B,), tile.float32)
    for k in tile.range(n):
        s = s + tile.load(x, index=(k,), shape=(B,))
    return s


@tile.kernel
def calls_helper_with_loop(x, out, n, B: tile.Constant[int]):
    tile.store(out, index=(0,), tile=helper_with_loop(x, n, B) * 2.0)


def test_loops_inside_helpers():
    ir = trace(calls_helper_with_loop, F32, F32, 3, B=16)
    (head,) = scf_for_lines(ir)
    assert "-> (tensor<16xf32>)" in head


@tile.kernel
def python_loop_inside_device_loop(x, out, n, B: tile.Constant[int],
                                   U: tile.Constant[int]):
    acc = tile.zeros((B,), tile.float32)
    for k in tile.range(n):
        for u in range(U):  # unrolled inside the device loop
            acc = acc + tile.load(x, index=(k * U + u,), shape=(B,))
    tile.store(out, index=(0,), tile=acc)


def test_unrolled_python_loop_inside_device_loop():
    ir = trace(python_loop_inside_device_loop, F32, F32, 2, B=16, U=3)
    assert len(scf_for_lines(ir)) == 1
    assert count(ir, "tile.load") == 3


@tile.kernel
def python_loop_break(x, out, B: tile.Constant[int]):
    acc = tile.zeros((B,), tile.float32)
    for u in range(10):  # break: left as a plain Python loop
        if u == 2:
            break
        acc = acc + 1.0
    tile.store(out, index=(0,), tile=acc)


def test_python_loops_with_break_still_work():
    ir = trace(python_loop_break, F32, F32, B=16)
    assert count(ir, "arith.addf") == 2


def test_loop_bounds_and_step():
    @tile.kernel
    def k(x, out, lo, hi, B: tile.Constant[int]):
        acc = tile.zeros((B,), tile.float32)
        for i in tile.range(lo, hi, 4):
            acc = acc + i
        tile.store(out, index=(0,), tile=acc)

    ir = trace(k, F32, F32, 3, 40, B=16)
    (head,) = scf_for_lines(ir)
    assert "to %hi step" in head and "= %lo to" in head
    with pytest.raises(tile.TileTypeError, match="step must not be zero"):
        @tile.kernel
        def bad(x, out, n):
            for i in tile.range(0, n, 0):
                pass
        bad.compile(F32, F32, 5)


def test_carried_shape_change_is_an_error():
    @tile.kernel
    def k(x, out, n):
        acc = tile.zeros((16,), tile.float32)
        for i in tile.range(n):
            acc = tile.reshape(acc, (4, 4))
        tile.store(out, index=(0,), tile=acc)

    with pytest.raises(tile.TileError) as e:
        k.compile(F32, F32, 3)
    assert "acc" in str(e.value) or "shape" in str(e.value)


def test_unconditional_break_leaves_a_device_loop_after_one_trip():
    # (spec v2: break works in device loops; it used to be an error)
    @tile.kernel
    def k(x, out, n):
        acc = tile.zeros((16,), tile.float32)
        for i in tile.range(n):
            acc = acc + tile.load(x, index=(i,), shape=(16,))
            break
        tile.store(out, index=(0,), tile=acc)

    x = np.random.rand(64).astype(np.float32)
    for n in (0, 3):
        out = np.full(16, np.nan, np.float32)
        k[(1,)](x, out, n)
        np.testing.assert_allclose(out, x[:16] if n else np.zeros(16), rtol=1e-6)


def test_loop_carried_dtype_widens_to_the_body_result():
    @tile.kernel
    def k(x, out, n):
        acc = tile.zeros((16,), tile.float16)
        for i in tile.range(n):
            acc = acc + tile.load(x, index=(i,), shape=(16,))  # f16 + f32 -> f32
        tile.store(out, index=(0,), tile=acc)

    ir = trace(k, F32, F32, 3)
    (head,) = scf_for_lines(ir)
    assert "-> (tensor<16xf32>)" in head and "arith.extf" in ir


def test_range_outside_kernels_is_python_range():
    assert list(tile.range(3)) == [0, 1, 2]
    assert list(tile.range(1, 7, 3)) == [1, 4]
