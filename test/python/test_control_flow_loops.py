"""Issue 15: runtime loops. `while` on a runtime condition, `range()` with
runtime bounds and steps (negative, zero), break/continue in tile.range,
range and while (nested: break leaves the inner loop only), and the
combinations: an if in a while in a range with break, an mma accumulator
loop with an if inside, stores and reductions in branches inside a loop.
The traced IR is checked with regexes (the lit suite runs only .mlir
files); the numerics against a NumPy float64 model of the same program on
random inputs, outputs poisoned before each run, with zero, one and many
trips. Loops whose step may be zero run in a child process with a timeout,
so a hang fails the test instead of stopping the suite.
"""

import json
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tile
from tilehelp import ROOT, Device, assert_close, count, trace

F32 = np.zeros(1024, np.float32)
B = 16


@pytest.fixture(scope="module")
def dev():
    return Device()


@pytest.fixture
def rng():
    return np.random.default_rng(150)


def heads(ir, op):
    return [ln.strip() for ln in ir.splitlines() if op in ln]


def types_of(head):
    """The sorted result types of an scf.while / scf.for / scf.if head."""
    m = re.search(r"-> \(([^)]*)\)", head)
    return sorted(m.group(1).split(", ")) if m else []


def run(dev, kernel, grid, inputs, out_shapes, *scalars, **constants):
    outs = [dev.poisoned(s, np.float32) for s in out_shapes]
    kernel[grid](*[dev.put(a) for a in inputs], *outs, *scalars, **constants)
    return [dev.get(o) for o in outs]


# ---------------------------------------------------------------------------
# while on a runtime condition
# ---------------------------------------------------------------------------

@tile.kernel
def while_count(x, out, n, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    j = 0
    s = 0.0
    while j < n:
        t = t * 0.5 + 1.0
        s = s + j * 0.25
        j += 1
    tile.store(out, index=(0,), tile=t + s + j)


def test_while_is_an_scf_while_carrying_tiles_and_scalars():
    ir = trace(while_count, F32, F32, 3, B=B)
    (head,) = heads(ir, "scf.while")
    assert re.match(r"%\d+:3 = scf\.while \(%\d+ = %\d+, %\d+ = %\d+, %\d+ = %\d+\) : ", head)
    assert types_of(head) == ["f32", "i32", "tensor<16xf32>"], head
    (cond,) = heads(ir, "scf.condition")
    assert re.match(r"scf\.condition\(%\d+\) %\d+, %\d+, %\d+ : ", cond)
    assert "scf.for" not in ir and count(ir, "tile.load") == 1


@pytest.mark.numerics
def test_while_on_a_kernel_argument(dev, rng):
    x = rng.standard_normal(B).astype(np.float32)
    for n in (-1, 0, 1, 2, 7):
        (got,) = run(dev, while_count, (1,), [x], [B], n, B=B)
        t, s, j = x.astype(np.float64), 0.0, 0
        while j < n:
            t, s, j = t * 0.5 + 1, s + j * 0.25, j + 1
        assert_close(got, t + s + j)


@tile.kernel
def while_on_data(x, out, lim, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    j = 0
    while tile.max(t) < lim and j < 30:
        t = t * 1.5 + 0.1
        j += 1
    tile.store(out, index=(0,), tile=t + j * 1000)


@pytest.mark.numerics
def test_while_on_a_condition_computed_from_the_carried_tile(dev, rng):
    x = (rng.random(B) * 0.9 + 0.1).astype(np.float32)
    for lim in (0.05, 1.0, 7.5, 1e30):
        (got,) = run(dev, while_on_data, (1,), [x], [B], lim, B=B)
        t, j = x.astype(np.float64), 0
        while t.max() < lim and j < 30:
            t, j = t * 1.5 + 0.1, j + 1
        assert_close(got, t + j * 1000, rtol=1e-5)


# ---------------------------------------------------------------------------
# range() with runtime bounds and steps
# ---------------------------------------------------------------------------

@tile.kernel
def range_forms(x, out, n, a, b, B: tile.Constant[int]):
    acc = tile.load(x, index=(0,), shape=(B,))
    for i in range(n):
        acc = acc + i
    for i in range(a, b):
        acc = acc * 0.5 + i
    for i in range(b, a, -2):
        acc = acc - i * 0.125
    tile.store(out, index=(0,), tile=acc)


def test_range_with_runtime_bounds_is_a_device_loop():
    ir = trace(range_forms, F32, F32, 3, 1, 5, B=B)
    fors = heads(ir, "scf.for")
    assert len(fors) == 3, fors
    res = r"%\d+(:\d+)? = scf\.for %\d+ = "
    assert re.match(res + r"%\d+ to %n step %\d+ ", fors[0]), fors[0]
    assert re.match(res + r"%a to %b step %\d+ ", fors[1]), fors[1]
    # a negative step: the loop counts Python range's trips from 0 by 1
    assert re.match(res + r"%\d+ to %\d+ step %\d+ ", fors[2]), fors[2]
    assert "arith.divsi" in ir
    assert all("tensor<16xf32>" in types_of(h) for h in fors)


@pytest.mark.numerics
def test_range_with_runtime_bounds(dev, rng):
    x = rng.standard_normal(B).astype(np.float32)
    for n, a, b in ((0, 0, 0), (1, 3, 2), (4, -3, 4), (7, 2, 9), (-2, 5, -6)):
        (got,) = run(dev, range_forms, (1,), [x], [B], n, a, b, B=B)
        acc = x.astype(np.float64)
        for i in range(n):
            acc = acc + i
        for i in range(a, b):
            acc = acc * 0.5 + i
        for i in range(b, a, -2):
            acc = acc - i * 0.125
        assert_close(got, acc, rtol=1e-5, atol=1e-5)


# Runtime steps (zero among them) in a child process: a loop that never ends
# must fail the test, not stop the suite.
CHILD = textwrap.dedent('''
    import json, sys
    import numpy as np
    import tile
    sys.path.insert(0, {testdir!r})
    from tilehelp import Device

    @tile.kernel
    def stepped(x, out, start, stop, step, B: tile.Constant[int]):
        acc = tile.load(x, index=(0,), shape=(B,))
        for i in range(start, stop, step):
            acc = acc * 0.5 + i
        tile.store(out, index=(0,), tile=acc)

    @tile.kernel
    def stepped_break(x, out, start, stop, step, lim, B: tile.Constant[int]):
        acc = tile.load(x, index=(0,), shape=(B,))
        for i in tile.range(start, stop, step):
            if i == lim:
                break
            acc = acc * 0.5 + i
        tile.store(out, index=(0,), tile=acc)

    @tile.kernel
    def while_stepped(x, out, start, stop, step, B: tile.Constant[int]):
        acc = tile.load(x, index=(0,), shape=(B,))
        i = start
        while step != 0 and ((step > 0 and i < stop) or (step < 0 and i > stop)):
            acc = acc * 0.5 + i
            i += step
        tile.store(out, index=(0,), tile=acc)

    dev = Device()
    x = dev.put(np.random.default_rng(7).standard_normal(16).astype(np.float32))
    results = []
    for start, stop, step, lim in json.loads(sys.argv[1]):
        row = []
        for k, extra in ((stepped, ()), (stepped_break, (lim,)), (while_stepped, ())):
            out = dev.poisoned((16,), np.float32)
            k[(1,)](x, out, start, stop, step, *extra, B=16)
            row.append(dev.get(out).astype(np.float64).tolist())
        results.append(row)
    print(json.dumps(results))
''')

STEPS = [(0, 5, 0, 99), (5, 0, 0, 99), (0, 5, 1, 3), (0, 9, 2, 6), (9, 0, -2, 3),
         (9, 0, -2, 4), (-3, 4, -1, 0), (4, -3, -3, 99), (2, 2, 1, 2), (0, 40, 7, 35)]


def _stepped_ref(x, start, stop, step, lim=None):
    acc = x.astype(np.float64)
    for i in (range(start, stop, step) if step else ()):
        if i == lim:
            break
        acc = acc * 0.5 + i
    return acc


def test_runtime_steps_zero_and_negative_never_hang(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python-frontend")
               + os.pathsep + os.environ.get("PYTHONPATH", ""))
    script = tmp_path / "stepped.py"  # a file: tracing reads the loops' source
    script.write_text(CHILD.format(testdir=os.path.dirname(os.path.abspath(__file__))))
    try:
        r = subprocess.run([sys.executable, str(script), json.dumps(STEPS)], env=env,
                           capture_output=True, text=True, timeout=300)
    except subprocess.TimeoutExpired:
        pytest.fail("a loop with a runtime step hung")
    if r.returncode and "_tile module not built" in r.stderr:
        pytest.skip("_tile not built")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    x = np.random.default_rng(7).standard_normal(16).astype(np.float32)
    for (start, stop, step, lim), (plain, brk, wh) in zip(STEPS, got):
        for kind, g, want in (("range", plain, _stepped_ref(x, start, stop, step)),
                              ("tile.range+break", brk,
                               _stepped_ref(x, start, stop, step, lim)),
                              ("while", wh, _stepped_ref(x, start, stop, step))):
            np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5,
                                       err_msg=f"{kind} ({start}, {stop}, {step}, {lim})")


# ---------------------------------------------------------------------------
# break and continue in tile.range, range and while
# ---------------------------------------------------------------------------

@tile.kernel
def escapes_trange(x, out, n, lim, B: tile.Constant[int]):
    acc = tile.zeros((B,), tile.float32)
    cnt = 0
    for k in tile.range(n):
        t = tile.load(x, index=(k,), shape=(B,))
        if tile.sum(t) < 0:
            continue
        acc = acc + t
        cnt += 1
        if cnt >= lim:
            break
    tile.store(out, index=(0,), tile=acc + cnt * 100)


@tile.kernel
def escapes_range(x, out, n, lim, B: tile.Constant[int]):
    acc = tile.zeros((B,), tile.float32)
    cnt = 0
    for k in range(n):
        t = tile.load(x, index=(k,), shape=(B,))
        if tile.sum(t) < 0:
            continue
        acc = acc + t
        cnt += 1
        if cnt >= lim:
            break
    tile.store(out, index=(0,), tile=acc + cnt * 100)


@tile.kernel
def escapes_while(x, out, n, lim, B: tile.Constant[int]):
    acc = tile.zeros((B,), tile.float32)
    cnt = 0
    k = 0
    while k < n:
        t = tile.load(x, index=(k,), shape=(B,))
        k += 1
        if tile.sum(t) < 0:
            continue
        acc = acc + t
        cnt += 1
        if cnt >= lim:
            break
    tile.store(out, index=(0,), tile=acc + cnt * 100)


def _escapes_ref(x, n, lim):
    acc, cnt = np.zeros(B), 0
    for k in range(n):
        t = x[k * B:(k + 1) * B].astype(np.float64)
        if t.sum() < 0:
            continue
        acc, cnt = acc + t, cnt + 1
        if cnt >= lim:
            break
    return acc + cnt * 100


ESCAPES = [escapes_trange, escapes_range, escapes_while]


@pytest.mark.parametrize("kernel", ESCAPES, ids=lambda k: k.__name__)
def test_break_makes_a_device_loop_an_scf_while(kernel):
    ir = trace(kernel, F32, F32, 5, 2, B=B)
    assert "scf.for" not in ir
    (head,) = heads(ir, "scf.while")
    # the tile, the counter, and the break flag (i1) at least are carried
    assert {"i1", "i32", "tensor<16xf32>"} <= set(types_of(head)), head
    assert count(ir, "tile.load") == 1


def test_continue_alone_keeps_an_scf_for():
    @tile.kernel
    def k(x, out, n, B: tile.Constant[int]):
        acc = tile.zeros((B,), tile.float32)
        for i in tile.range(n):
            t = tile.load(x, index=(i,), shape=(B,))
            if tile.max(t) > 0.5:
                continue
            acc = acc + t
        tile.store(out, index=(0,), tile=acc)

    ir = trace(k, F32, F32, 4, B=B)
    (head,) = heads(ir, "scf.for")
    assert types_of(head) == ["tensor<16xf32>"] and "scf.while" not in ir
    assert len(heads(ir, "scf.if")) == 2  # the continue flag, then the guarded rest


@pytest.mark.numerics
@pytest.mark.parametrize("kernel", ESCAPES, ids=lambda k: k.__name__)
def test_break_and_continue(dev, rng, kernel):
    x = rng.standard_normal(8 * B).astype(np.float32)
    x[B:2 * B] -= 3.0  # row 1 is skipped by `continue`
    x[3 * B:4 * B] += 3.0
    for n, lim in ((0, 1), (1, 1), (2, 1), (5, 2), (8, 3), (8, 100)):
        (got,) = run(dev, kernel, (1,), [x], [B], n, lim, B=B)
        assert_close(got, _escapes_ref(x, n, lim), rtol=1e-5, atol=1e-4)


@tile.kernel
def nested_break(x, out, cnt, n, m, thr, B: tile.Constant[int]):
    acc = tile.zeros((B,), tile.float32)
    inner = 0
    for i in tile.range(n):
        row = tile.zeros((B,), tile.float32)
        for j in range(m):
            t = tile.load(x, index=(i * m + j,), shape=(B,))
            if tile.max(t) > thr:
                break  # leaves the inner loop only
            row = row + t
            inner += 1
        acc = acc + row * (i + 1)
    tile.store(out, index=(0,), tile=acc)
    tile.store(cnt, index=(0,), tile=tile.zeros((B,), tile.float32) + inner)


def test_break_in_the_inner_loop_keeps_the_outer_scf_for():
    ir = trace(nested_break, F32, F32, F32, 3, 4, 1.5, B=B)
    (outer,) = heads(ir, "scf.for")
    (inner,) = heads(ir, "scf.while")
    assert ir.index(outer) < ir.index(inner)
    assert types_of(outer) == ["i32", "tensor<16xf32>"], outer  # no break flag


@pytest.mark.numerics
def test_break_in_the_inner_loop_only(dev, rng):
    n, m = 4, 5
    x = rng.standard_normal(n * m * B).astype(np.float32)
    for thr in (-10.0, 1.8, 2.5, 10.0):
        for nn, mm in ((n, m), (n, 0), (0, m), (2, 3)):
            got, cnt = run(dev, nested_break, (1,), [x], [B, B], nn, mm, thr, B=B)
            acc, inner = np.zeros(B), 0
            for i in range(nn):
                row = np.zeros(B)
                for j in range(mm):
                    t = x[(i * mm + j) * B:(i * mm + j + 1) * B].astype(np.float64)
                    if t.max() > thr:
                        break
                    row, inner = row + t, inner + 1
                acc = acc + row * (i + 1)
            assert_close(got, acc, rtol=1e-5, atol=1e-4)
            assert_close(cnt, np.full(B, inner))


@tile.kernel
def loop_else_and_unrolled_break(x, out, n, lim, cap, B: tile.Constant[int],
                                 U: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    for i in tile.range(n):
        if i == lim:
            break
        t = t + 1.0
    else:  # runs unless the runtime break was taken
        t = t + 100.0
    for u in range(U):  # unrolled; a runtime break guards the later copies
        if tile.sum(t) > cap:
            break
        t = t * 2.0
    tile.store(out, index=(0,), tile=t)


@pytest.mark.numerics
def test_for_else_and_a_runtime_break_in_an_unrolled_loop(dev, rng):
    ir = trace(loop_else_and_unrolled_break, F32, F32, 3, 1, 2.0, B=B, U=3)
    assert len(heads(ir, "scf.while")) == 1 and "scf.for" not in ir
    assert count(ir, "arith.mulf") == 3  # the unrolled loop: three guarded copies
    x = (rng.random(B) * 0.1).astype(np.float32)
    for n, lim, cap in ((0, 9, 1e9), (3, 9, 1e9), (5, 2, 1e9), (4, 0, 100.0),
                        (2, 5, 1000.0), (3, 1, -1.0)):
        (got,) = run(dev, loop_else_and_unrolled_break, (1,), [x], [B], n, lim, cap,
                     B=B, U=3)
        t = x.astype(np.float64)
        for i in range(n):
            if i == lim:
                break
            t = t + 1
        else:
            t = t + 100
        for u in range(3):
            if t.sum() > cap:
                break
            t = t * 2
        assert_close(got, t, rtol=1e-5, atol=1e-5)


@tile.kernel
def return_in_while(x, out, n, m, stop, B: tile.Constant[int]):
    acc = tile.zeros((B,), tile.float32)
    j = 0
    while j < n:
        t = tile.load(x, index=(j,), shape=(B,))
        j += 1
        if tile.sum(t) > stop:
            return  # leaves the while and the kernel: nothing is stored
        acc = acc + t
    for q in range(m):
        if q == 1:
            continue
        if q > 3:
            break
        acc = acc * 2.0
    tile.store(out, index=(tile.bid(0),), tile=acc)


@pytest.mark.numerics
def test_a_bare_return_inside_a_while(dev, rng):
    x = rng.random(8 * B).astype(np.float32)
    for n, m, stop in ((0, 0, 0.0), (3, 2, 1e9), (5, 7, 1e9), (5, 7, 8.0), (4, 3, -1.0)):
        (got,) = run(dev, return_in_while, (2,), [x], [2 * B], n, m, stop, B=B)
        acc, j, returned = np.zeros(B), 0, False
        while j < n:
            t = x[j * B:(j + 1) * B].astype(np.float64)
            j += 1
            if t.sum() > stop:
                returned = True
                break
            acc = acc + t
        for q in range(m):
            if q == 1:
                continue
            if q > 3:
                break
            acc = acc * 2
        assert_close(got, np.full(2 * B, np.nan) if returned else np.tile(acc, 2),
                     rtol=1e-5, atol=1e-5)
        assert np.isnan(got).all() == returned


# ---------------------------------------------------------------------------
# combined: if in while in range with break; mma loop with an if; stores
# ---------------------------------------------------------------------------

@tile.kernel
def if_in_while_in_range(x, out, n, m, cap, B: tile.Constant[int]):
    acc = tile.zeros((B,), tile.float32)
    hits = 0
    for i in range(n):
        t = tile.load(x, index=(i,), shape=(B,))
        j = 0
        while j < m:
            if tile.sum(t) > 0:
                t = t - 0.75
            else:
                t = t * 0.5 + 0.2
                hits += 1
            j += 1
        acc = acc + t * (j + 1)
        if hits > cap:
            break
    tile.store(out, index=(0,), tile=acc + hits * 1000)


def test_if_in_while_in_range_with_break_ir():
    ir = trace(if_in_while_in_range, F32, F32, 3, 2, 1, B=B)
    assert "scf.for" not in ir  # the outer range has a break
    whiles = heads(ir, "scf.while")
    assert len(whiles) == 2
    assert {"i1", "i32", "tensor<16xf32>"} <= set(types_of(whiles[0]))
    assert len([h for h in heads(ir, "scf.if") if re.search(r"-> \(.*tensor<16xf32>.*i32|"
                                                            r"-> \(.*i32.*tensor<16xf32>", h)])


@pytest.mark.numerics
def test_if_in_while_in_range_with_break(dev, rng):
    x = (rng.standard_normal(6 * B) * 0.3).astype(np.float32)
    for n, m, cap in ((0, 3, 0), (1, 0, 0), (6, 1, 100), (6, 3, 2), (6, 4, 0), (4, 6, 5)):
        (got,) = run(dev, if_in_while_in_range, (1,), [x], [B], n, m, cap, B=B)
        acc, hits = np.zeros(B), 0
        for i in range(n):
            t, j = x[i * B:(i + 1) * B].astype(np.float64), 0
            while j < m:
                if t.sum() > 0:
                    t = t - 0.75
                else:
                    t, hits = t * 0.5 + 0.2, hits + 1
                j += 1
            acc = acc + t * (j + 1)
            if hits > cap:
                break
        assert_close(got, acc + hits * 1000, rtol=1e-5, atol=1e-3)


@tile.kernel
def mma_with_if(a, b, c, K, kuse, BM: tile.Constant[int], BN: tile.Constant[int],
                BK: tile.Constant[int]):
    pm, pn = tile.bid(0), tile.bid(1)
    acc = tile.zeros((BM, BN), tile.float32)
    for k in tile.range(tile.cdiv(K, BK)):
        x = tile.load(a, index=(pm, k), shape=(BM, BK))
        y = tile.load(b, index=(k, pn), shape=(BK, BN))
        if k < kuse:
            acc = tile.mma(x, y, acc)
        else:
            acc = acc * 0.5
    tile.store(c, index=(pm, pn), tile=acc)


def test_mma_accumulator_through_an_if_in_a_loop_ir():
    h = np.zeros((64, 64), np.float16)
    ir = trace(mma_with_if, h, h, np.zeros((64, 64), np.float32), 64, 2, BM=32, BN=32, BK=16)
    (loop,) = heads(ir, "scf.for")
    assert types_of(loop) == ["tensor<32x32xf32>"]
    (branch,) = heads(ir, "scf.if")
    assert types_of(branch) == ["tensor<32x32xf32>"]
    assert ir.index(loop) < ir.index(branch) < ir.index("tile.mma")


@pytest.mark.numerics
def test_mma_accumulator_through_an_if_in_a_loop(dev, rng):
    M, N, K, BK = 64, 64, 64, 16
    a = rng.standard_normal((M, K)).astype(np.float16)
    b = rng.standard_normal((K, N)).astype(np.float16)
    for kuse in (0, 1, 3, 100):
        (got,) = run(dev, mma_with_if, (2, 2), [a, b], [(M, N)], K, kuse, BM=32, BN=32,
                     BK=BK)
        acc = np.zeros((M, N))
        for k in range(K // BK):
            if k < kuse:
                acc = acc + a[:, k * BK:(k + 1) * BK].astype(np.float64) \
                    @ b[k * BK:(k + 1) * BK].astype(np.float64)
            else:
                acc = acc * 0.5
        assert_close(got, acc, rtol=2e-3, atol=2e-3 * np.sqrt(K))


@tile.kernel
def stores_in_loop_branches(x, out, red, n, B: tile.Constant[int]):
    s = tile.zeros((), tile.float32)
    m = tile.full((), -tile.inf, tile.float32)
    for k in tile.range(n):
        t = tile.load(x, index=(k,), shape=(B,))
        if tile.sum(t) > 0:
            tile.store(out, index=(k,), tile=t * 2.0)
            s = s + tile.sum(t)
        else:
            m = tile.maximum(m, tile.max(t))
    tile.store(red, index=(0,), tile=tile.zeros((B,), tile.float32) + s)
    tile.store(red, index=(1,), tile=tile.zeros((B,), tile.float32) + m)


@pytest.mark.numerics
def test_stores_and_reductions_in_branches_inside_a_loop(dev, rng):
    rows = 8
    x = rng.standard_normal(rows * B).astype(np.float32)
    x[:B] += 2.0
    x[B:2 * B] -= 2.0
    for n in (0, 1, 2, 5, 8):
        got, red = run(dev, stores_in_loop_branches, (1,), [x], [rows * B, 2 * B], n, B=B)
        want = np.full((rows, B), np.nan)
        s, m = 0.0, -np.inf
        for k in range(n):
            t = x[k * B:(k + 1) * B].astype(np.float64)
            if t.sum() > 0:
                want[k], s = t * 2, s + t.sum()
            else:
                m = max(m, t.max())
        assert_close(got, want.reshape(-1))
        assert np.isnan(got).sum() == np.isnan(want).sum()  # rows not taken stay poisoned
        assert_close(red, np.repeat([s, m], B), rtol=1e-5, atol=1e-5)
