"""Issue 15: runtime `if`/`elif`/`else`, conditional expressions, and/or/not,
chained compares, min/max/abs on runtime scalars, early `return`, and
tile.static_iter: what the traced IR looks like (regex checks; the lit suite
runs only .mlir files, so Python tracing is checked here) and what the
kernels compute, against a NumPy float64 model of the same program on random
inputs with the outputs poisoned before each run. Several runtime values per
kernel take every branch. Loops are in test_control_flow_loops.py, errors in
test_control_flow_errors.py.
"""

import re

import numpy as np
import pytest

import tile
from tilehelp import Device, assert_close, count, line_of, trace

F32 = np.zeros(1024, np.float32)
B = 16


@pytest.fixture(scope="module")
def dev():
    return Device()


@pytest.fixture
def rng():
    return np.random.default_rng(15)


def if_heads(ir):
    return [ln.strip() for ln in ir.splitlines() if "scf.if" in ln]


def run(dev, kernel, grid, inputs, out_shapes, *scalars, **constants):
    """Launches `kernel` on device copies of `inputs` and freshly poisoned f32
    outputs; returns the outputs as NumPy arrays."""
    outs = [dev.poisoned(s, np.float32) for s in out_shapes]
    kernel[grid](*[dev.put(a) for a in inputs], *outs, *scalars, **constants)
    return [dev.get(o) for o in outs]


# ---------------------------------------------------------------------------
# if / elif / else on kernel arguments: tiles and scalars flow out
# ---------------------------------------------------------------------------

@tile.kernel
def elif_chain(x, out, n, B: tile.Constant[int]):
    t = tile.load(x, index=(tile.bid(0),), shape=(B,))
    if n > 3:
        t = t * 2.0
        s = 1
    elif n > 1:
        t = t + 1.0
        s = n * 2
    elif n == 1:
        s = -5
    else:
        t = -t
        s = 7
    tile.store(out, index=(tile.bid(0),), tile=t + s)


def elif_chain_ref(x, n):
    t = x.astype(np.float64)
    if n > 3:
        t, s = t * 2, 1
    elif n > 1:
        t, s = t + 1, n * 2
    elif n == 1:
        s = -5
    else:
        t, s = -t, 7
    return t + s


def test_elif_chain_is_nested_scf_ifs_with_tile_and_scalar_results():
    ir = trace(elif_chain, F32, F32, 3, B=B)
    heads = if_heads(ir)
    assert len(heads) == 3, heads
    for h in heads:
        m = re.fullmatch(r"%\d+:2 = scf\.if %\d+ -> \((.*)\) \{", h)
        assert m and sorted(m.group(1).split(", ")) == ["i32", "tensor<16xf32>"], h
    assert re.search(r"arith\.cmpi sgt, %n, %\d+ : i32", ir)
    assert re.search(r"arith\.cmpi eq, %n, %\d+ : i32", ir)
    # the nested ifs yield their results to the outer ones: 6 yields, 2 values each
    yields = [ln for ln in ir.splitlines() if "scf.yield" in ln]
    assert len(yields) == 6
    assert all(re.search(r": (tensor<16xf32>, i32|i32, tensor<16xf32>) loc", y) for y in yields)


@pytest.mark.numerics
def test_elif_chain_takes_every_branch(dev, rng):
    x = rng.standard_normal(4 * B).astype(np.float32)
    for n in (-2, 0, 1, 2, 3, 4, 9):
        (got,) = run(dev, elif_chain, (4,), [x], [4 * B], n, B=B)
        assert_close(got, elif_chain_ref(x, n))


@tile.kernel
def constant_if(x, out, n, MODE: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(16,))
    if MODE > 0:  # a Constant: decided while tracing
        t = t * 2.0
    else:
        t = t + n
    tile.store(out, index=(0,), tile=t)


def test_an_if_on_a_constant_runs_at_trace_time():
    for mode, op in ((1, "arith.mulf"), (0, "arith.addf")):
        ir = trace(constant_if, F32, F32, 3, MODE=mode)
        assert "scf.if" not in ir and count(ir, op) == 1
        assert count(ir, "arith.mulf" if op == "arith.addf" else "arith.addf") == 0


# ---------------------------------------------------------------------------
# conditions: the block id, an array's shape, a reduction, a one-element tile
# ---------------------------------------------------------------------------

@tile.kernel
def on_bid(x, out, B: tile.Constant[int]):
    i = tile.bid(0)
    t = tile.load(x, index=(i,), shape=(B,))
    if i % 2 == 0:
        t = t * 3.0
    else:
        t = t - 1.0
    if i == tile.num_blocks(0) - 1:
        t = t + 100.0
    tile.store(out, index=(i,), tile=t)


@pytest.mark.numerics
def test_if_on_the_block_id(dev, rng):
    x = rng.standard_normal(5 * B).astype(np.float32)
    (got,) = run(dev, on_bid, (5,), [x], [5 * B], B=B)
    want = x.astype(np.float64).reshape(5, B)
    want = np.where((np.arange(5) % 2 == 0)[:, None], want * 3, want - 1)
    want[4] += 100
    assert_close(got, want.reshape(-1))


@tile.kernel
def on_shape(x, out, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    if x.shape[0] > 2 * B:
        t = t * 2.0
    elif x.shape[0] >= B:
        t = t + x.shape[0]
    tile.store(out, index=(0,), tile=t)


@pytest.mark.numerics
def test_if_on_an_array_shape(dev, rng):
    ir = trace(on_shape, F32, F32, B=B)
    assert re.search(r"%\d+ = tile\.dim %x, 0", ir) and len(if_heads(ir)) == 2
    for size in (B, 2 * B, 2 * B + 1, 5 * B):
        x = rng.standard_normal(size).astype(np.float32)
        (got,) = run(dev, on_shape, (1,), [x], [B], B=B)
        t = x[:B].astype(np.float64)
        assert_close(got, t * 2 if size > 2 * B else t + size)


@tile.kernel
def on_reduction(x, c, out, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    if tile.sum(t) > 0:
        u = t * 2.0
    else:
        u = -t
    one = tile.load(c, index=(0,), shape=(1,))
    if one > 0.5:  # a one-element tile has one truth value
        u = u + one
    tile.store(out, index=(0,), tile=u)


def test_reduced_and_one_element_conditions_are_extracted_to_i1():
    ir = trace(on_reduction, F32, F32, F32, B=B)
    assert re.search(r"= tensor\.extract %\d+\[\] : tensor<i1>", ir)
    assert len(if_heads(ir)) == 2
    assert all("-> (tensor<16xf32>)" in h for h in if_heads(ir))


@pytest.mark.numerics
def test_if_on_a_reduction_and_on_a_one_element_tile(dev, rng):
    for shift, c in ((1.0, 0.9), (-1.0, 0.9), (1.0, 0.1), (-1.0, -3.0)):
        x = (rng.standard_normal(B) + shift).astype(np.float32)
        cc = np.array([c], np.float32)
        (got,) = run(dev, on_reduction, (1,), [x, cc], [B], B=B)
        u = x.astype(np.float64)
        u = u * 2 if u.sum() > 0 else -u
        assert_close(got, u + c if c > 0.5 else u)


# ---------------------------------------------------------------------------
# names bound in one branch only; conditional expressions
# ---------------------------------------------------------------------------

@tile.kernel
def one_branch_names(x, out, n, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    if n > 0:
        tmp = t * 3.0       # bound here only, never used after the if: fine
        label = "positive"  # a Python value on one path only, unused after: fine
        t = tmp + 1.0
    tile.store(out, index=(0,), tile=t)


def test_a_name_bound_on_one_path_and_unused_after_is_no_result():
    (head,) = if_heads(trace(one_branch_names, F32, F32, 2, B=B))
    assert re.fullmatch(r"%\d+ = scf\.if %\d+ -> \(tensor<16xf32>\) \{", head)


@pytest.mark.numerics
def test_names_bound_on_one_path(dev, rng):
    x = rng.standard_normal(B).astype(np.float32)
    for n in (-1, 0, 1, 5):
        (got,) = run(dev, one_branch_names, (1,), [x], [B], n, B=B)
        assert_close(got, x * 3.0 + 1.0 if n > 0 else x.astype(np.float64))


@tile.kernel
def cond_exprs(x, out, n, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    u = t * 2.0 if n > 2 else t - 1.0          # tiles
    s = n * 3 if n % 2 == 0 else n + 10        # i32 scalars
    f = 0.5 if tile.max(t) > 0.9 else 1.5      # two Python numbers: a runtime f32
    g = tile.sum(t) if n < 0 else 4.0          # a 0-d tile and a number
    tile.store(out, index=(0,), tile=u + s + f + g)


def test_conditional_expressions_are_scf_ifs_with_one_result():
    heads = if_heads(trace(cond_exprs, F32, F32, 3, B=B))
    results = sorted(re.fullmatch(r"%\d+ = scf\.if %\d+ -> \((.*)\) \{", h).group(1)
                     for h in heads)
    assert results == ["f32", "i32", "tensor<16xf32>", "tensor<f32>"], heads


@pytest.mark.numerics
def test_conditional_expressions(dev, rng):
    for n, shift in ((3, 0.0), (2, 0.0), (-1, -2.0), (0, 3.0), (7, -2.0)):
        x = (rng.random(B) + shift).astype(np.float32)
        (got,) = run(dev, cond_exprs, (1,), [x], [B], n, B=B)
        t = x.astype(np.float64)
        u = t * 2 if n > 2 else t - 1
        s = n * 3 if n % 2 == 0 else n + 10
        f = 0.5 if t.max() > 0.9 else 1.5
        g = t.sum() if n < 0 else 4.0
        assert_close(got, u + s + f + g, rtol=1e-5, atol=1e-5)


@tile.kernel
def int_or_float_path(x, out, n, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    if n > 0:
        s = n
    else:
        s = 0.5  # a Python float beside an int32 scalar: a float32, as n + 0.5 is
    tile.store(out, index=(0,), tile=t + s)


@pytest.mark.numerics
def test_an_int_scalar_and_a_python_float_on_two_paths(dev, rng):
    x = rng.standard_normal(B).astype(np.float32)
    for n in (-1, 3):
        (got,) = run(dev, int_or_float_path, (1,), [x], [B], n, B=B)
        assert_close(got, x.astype(np.float64) + (n if n > 0 else 0.5))


# ---------------------------------------------------------------------------
# and / or / not, chained compares, min / max / abs
# ---------------------------------------------------------------------------

@tile.kernel
def logic(x, out, n, m, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    if n > 0 and m < 5 or not (n == m):
        t = t + 1.0
    if 0 <= n < m:
        t = t * 10.0
    if not n:
        t = t - 100.0
    if n > 0 and True:  # a Python operand folds
        t = t + 1000.0
    tile.store(out, index=(0,), tile=t)


def logic_ref(x, n, m):
    t = x.astype(np.float64)
    if n > 0 and m < 5 or not (n == m):
        t = t + 1
    if 0 <= n < m:
        t = t * 10
    if not n:
        t = t - 100
    if n > 0:
        t = t + 1000
    return t


def test_logic_on_runtime_scalars_is_i1_arithmetic():
    ir = trace(logic, F32, F32, 1, 2, B=B)
    assert count(ir, "arith.andi") >= 2 and count(ir, "arith.ori") >= 1
    assert count(ir, "arith.xori") >= 2  # the two `not`s
    assert len(if_heads(ir)) == 4


@pytest.mark.numerics
def test_and_or_not_and_chained_compares(dev, rng):
    x = rng.standard_normal(B).astype(np.float32)
    for n, m in ((0, 0), (1, 1), (3, 7), (5, 5), (-1, 3), (2, 1), (6, 9), (0, 4)):
        (got,) = run(dev, logic, (1,), [x], [B], n, m, B=B)
        assert_close(got, logic_ref(x, n, m))


@tile.kernel
def logic_values(x, out, n, m, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    tile.store(out, index=(0,), tile=t + (n or 5) * 10 + (n and m))


@pytest.mark.numerics
def test_and_or_give_an_operand_as_python_does(dev, rng):
    x = rng.standard_normal(B).astype(np.float32)
    for n, m in ((0, 3), (2, 3), (2, 0), (-1, 7)):
        (got,) = run(dev, logic_values, (1,), [x], [B], n, m, B=B)
        assert_close(got, x.astype(np.float64) + (n or 5) * 10 + (n and m))


@tile.kernel
def min_max_abs(x, out, n, m, f, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    a = min(n, 4) + max(n, m) * 10 + max(n, m, 2, -7) * 100 + min(m, n, 0) * 1000
    g = max(f, 0.25) + abs(f) * 2.0 + min(f, n, 3) * 4.0 + abs(n - m) * 8.0
    tile.store(out, index=(0,), tile=t + a + g)


def test_min_max_of_runtime_scalars_fold_to_min_max_ops():
    ir = trace(min_max_abs, F32, F32, 1, 2, 0.5, B=B)
    assert count(ir, "arith.minsi") == 3 and count(ir, "arith.maxsi") >= 4
    assert count(ir, "arith.maximumf") == 1 and count(ir, "arith.minimumf") == 2
    assert count(ir, "math.absf") == 1 and "scf.if" not in ir


@pytest.mark.numerics
def test_min_max_abs_on_runtime_scalars(dev, rng):
    x = rng.standard_normal(B).astype(np.float32)
    for n, m, f in ((1, 2, 0.5), (9, -3, -2.25), (-4, -4, 0.125), (3, 100, 7.5), (0, 0, -0.0)):
        (got,) = run(dev, min_max_abs, (1,), [x], [B], n, m, f, B=B)
        a = min(n, 4) + max(n, m) * 10 + max(n, m, 2, -7) * 100 + min(m, n, 0) * 1000
        g = max(f, 0.25) + abs(f) * 2 + min(f, n, 3) * 4 + abs(n - m) * 8
        assert_close(got, x.astype(np.float64) + a + g, rtol=1e-6, atol=1e-4)


# ---------------------------------------------------------------------------
# tile.static_iter unrolls
# ---------------------------------------------------------------------------

@tile.kernel
def static_iters(x, out, n, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    for c in tile.static_iter((1.5, -2.0, 0.5)):
        t = t * c + n
    for k in tile.static_iter(tile.range(1, 4)):
        t = t + tile.load(x, index=(k,), shape=(B,)) * k
    tile.store(out, index=(0,), tile=t)


@pytest.mark.numerics
def test_static_iter_unrolls(dev, rng):
    ir = trace(static_iters, F32, F32, 2, B=B)
    assert "scf.for" not in ir and "scf.while" not in ir
    assert count(ir, "tile.load") == 4 and count(ir, "arith.mulf") == 6
    x = rng.standard_normal(4 * B).astype(np.float32)
    for n in (0, 3, -2):
        (got,) = run(dev, static_iters, (1,), [x], [B], n, B=B)
        r = x.astype(np.float64).reshape(4, B)
        t = r[0]
        for c in (1.5, -2.0, 0.5):
            t = t * c + n
        assert_close(got, t + r[1] + 2 * r[2] + 3 * r[3], rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------
# early return: from the kernel, and from a helper with two returns
# ---------------------------------------------------------------------------

@tile.kernel
def early_exit(x, out, n, B: tile.Constant[int]):
    i = tile.bid(0)
    if i >= n:
        return
    t = tile.load(x, index=(i,), shape=(B,))
    tile.store(out, index=(i,), tile=t * 2.0)  # @after-return


def test_early_return_guards_the_rest_of_the_kernel():
    ir = trace(early_exit, F32, F32, 3, B=B)
    heads = if_heads(ir)
    assert len(heads) == 2
    assert re.fullmatch(r"%\d+ = scf\.if %\d+ -> \(i1\) \{", heads[0])  # the return flag
    assert re.fullmatch(r"scf\.if %\d+ \{", heads[1])  # `if not returned:`
    guard = ir[ir.index(heads[1]):]
    assert guard.index("tile.store") < guard.index("} else {")
    # the guarded statements keep their own lines
    (store,) = [ln for ln in ir.splitlines() if "tile.store" in ln]
    assert f":{line_of(early_exit, '@after-return')}:" in store, store


@pytest.mark.numerics
def test_early_return_from_the_kernel(dev, rng):
    x = rng.standard_normal(6 * B).astype(np.float32)
    for n in (0, 1, 4, 6, 10):
        (got,) = run(dev, early_exit, (6,), [x], [6 * B], n, B=B)
        want = x.astype(np.float64).reshape(6, B) * 2
        want[n:] = np.nan  # blocks that returned early store nothing
        assert_close(got, want.reshape(-1))


def pick(t, n):
    if n > 0:
        return t * 2.0
    return t - 1.0


def clamp_count(n):
    if n > 5:
        return n - 5
    elif n > 0:
        return n
    return 0


@tile.kernel
def helper_returns(x, out, n, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    tile.store(out, index=(0,), tile=pick(t, n) + clamp_count(n) * 100)


@pytest.mark.numerics
def test_return_from_a_helper_inside_an_if(dev, rng):
    x = rng.standard_normal(B).astype(np.float32)
    for n in (-3, 0, 1, 5, 6, 40):
        (got,) = run(dev, helper_returns, (1,), [x], [B], n, B=B)
        t = x.astype(np.float64)
        c = n - 5 if n > 5 else (n if n > 0 else 0)
        assert_close(got, (t * 2 if n > 0 else t - 1) + c * 100, rtol=1e-6, atol=1e-4)


# ---------------------------------------------------------------------------
# stores and reductions inside branches
# ---------------------------------------------------------------------------

@tile.kernel
def branch_stores(x, out, red, n, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    if n > 2:
        tile.store(out, index=(0,), tile=t * 2.0)
    elif n > 0:
        tile.store(out, index=(1,), tile=t + 1.0)
    # n <= 0: out is not written at all
    if n % 2 == 1:
        s = tile.sum(t)
    else:
        s = tile.max(t) - tile.min(t)
    tile.store(red, index=(0,), tile=tile.zeros((B,), tile.float32) + s)


def test_stores_stay_inside_their_branch():
    ir = trace(branch_stores, F32, F32, F32, 1, B=B)
    heads = if_heads(ir)
    assert re.fullmatch(r"scf\.if %\d+ \{", heads[0]), heads  # no results
    assert count(ir, "tile.store") == 3
    first_if = ir[ir.index(heads[0]):]
    # both out-stores sit inside the first if (the second store in its nested if)
    assert first_if.index("tile.store") < first_if.index("tile.reduce")


@pytest.mark.numerics
def test_stores_happen_only_on_the_taken_path(dev, rng):
    x = rng.standard_normal(B).astype(np.float32)
    for n in (-1, 0, 1, 2, 3, 8):
        got, red = run(dev, branch_stores, (1,), [x], [2 * B, B], n, B=B)
        t = x.astype(np.float64)
        want = np.full(2 * B, np.nan)
        if n > 2:
            want[:B] = t * 2
        elif n > 0:
            want[B:] = t + 1
        assert_close(got, want)
        assert np.isnan(got).sum() == np.isnan(want).sum()  # untouched stays poisoned
        s = t.sum() if n % 2 == 1 else t.max() - t.min()
        assert_close(red, np.full(B, s), rtol=1e-5, atol=1e-5)


@tile.kernel
def scalar_or_reduction(x, out, n, f, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    s = f
    if n > 2:
        s = tile.sum(t)  # a 0-d tile beside an f32 scalar: carried as a scalar
    tile.store(out, index=(0,), tile=t + s)


@pytest.mark.numerics
def test_a_zero_d_tile_and_a_scalar_on_two_paths(dev, rng):
    x = rng.standard_normal(B).astype(np.float32)
    for n in (1, 3):
        (got,) = run(dev, scalar_or_reduction, (1,), [x], [B], n, 0.5, B=B)
        t = x.astype(np.float64)
        assert_close(got, t + (t.sum() if n > 2 else 0.5), rtol=1e-5, atol=1e-5)


@tile.kernel
def prints(x, out, n, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    print("block size", B)  # Python values only: printed while tracing
    print(f"n = {n}")  # a traced value: printed by the device
    print("sum", tile.sum(t))
    tile.store(out, index=(0,), tile=t)


def test_builtin_print_of_traced_values_prints_on_the_device(capsys):
    ir = trace(prints, F32, F32, 3, B=B)
    assert capsys.readouterr().out == f"block size {B}\n"
    assert count(ir, "tile.print") == 2
