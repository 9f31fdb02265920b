"""Issue 13 items 2, 4, 8, 9: integer `//`, `%`, shifts, float `//` and `%`,
and half-precision rounding give NumPy's results on every operand, as
docs/numerics.md says: no heap garbage, no SIGFPE, no skipped rounding.

Every kernel runs on the available backend against NumPy (warnings
suppressed where NumPy warns); outputs are poisoned before each run. The
integer division checks run in a child process, so a SIGFPE fails the test
instead of killing pytest."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import tile
from tilehelp import Device, ROOT, tile_opt_path, trace

N = 64
NI = 256  # integer tests: all pairs of special values fit
INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
HERE = os.path.dirname(os.path.abspath(__file__))


def _dev():
    return Device()


def _int_operands(dtname, rng):
    """Dividends and divisors: every pair of special values (zero divisors,
    INT_MIN and -1, the extremes), then random values with some zeros."""
    info = np.iinfo(np.dtype(dtname))
    special = [0, 1, 2, 3, 7, info.max, info.max - 1]
    if info.min < 0:
        special += [-1, -2, -3, -7, info.min, info.min + 1]
    pairs = [(x, y) for x in special for y in special]
    n = NI - len(pairs)
    a = np.concatenate([np.array([p[0] for p in pairs], dtype=object).astype(dtname),
                        rng.integers(info.min, info.max, n, dtype=dtname, endpoint=True)])
    b = np.concatenate([np.array([p[1] for p in pairs], dtype=object).astype(dtname),
                        rng.integers(info.min, info.max, n, dtype=dtname, endpoint=True)])
    b[len(pairs)::5] = 0
    return a, b


def _np(fn, *args):
    with np.errstate(all="ignore"):
        return fn(*args)


def _np_cdiv(a, b):
    """-(-a // b) in Python ints, 0 for a zero divisor, wrapped to a's dtype."""
    dt = a.dtype
    bits = dt.itemsize * 8
    out = []
    for x, y in zip(a.tolist(), np.broadcast_to(b, a.shape).tolist()):
        v = 0 if y == 0 else -(-x // y)
        v &= (1 << bits) - 1
        out.append(v - (1 << bits) if dt.kind == "i" and v >> (bits - 1) else v)
    return np.array(out, dtype=object).astype(dt)


def _eq(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (what, got.dtype, want.dtype)
    bad = np.flatnonzero(got != want)
    assert bad.size == 0, f"{what}: at {bad[:8].tolist()} got {got[bad[:8]].tolist()}, " \
                          f"NumPy {want[bad[:8]].tolist()}"


# -- integer `//`, `%`, tile.cdiv ------------------------------------------

@tile.kernel
def int_divmod(x, y, q, r, c, N: tile.Constant[int]):
    a = tile.load(x, index=(0,), shape=(N,))
    b = tile.load(y, index=(0,), shape=(N,))
    tile.store(q, index=(0,), tile=a // b)
    tile.store(r, index=(0,), tile=a % b)
    tile.store(c, index=(0,), tile=tile.cdiv(a, b))


@tile.kernel
def int_divmod_by_scalar(x, s, q, r, N: tile.Constant[int]):
    a = tile.load(x, index=(0,), shape=(N,))
    tile.store(q, index=(0,), tile=a // s)
    tile.store(r, index=(0,), tile=a % s)


@tile.kernel
def int_divmod_by_constant(x, q, r, c, N: tile.Constant[int], D: tile.Constant[int]):
    a = tile.load(x, index=(0,), shape=(N,))
    tile.store(q, index=(0,), tile=a // D)
    tile.store(r, index=(0,), tile=a % D)
    tile.store(c, index=(0,), tile=tile.cdiv(a, D))


@tile.kernel
def scalar_divmod(s, t, out, N: tile.Constant[int]):
    tile.store(out, index=(0,), tile=tile.full((N,), s // t, tile.int64))
    tile.store(out, index=(1,), tile=tile.full((N,), s % t, tile.int64))


def _check_int_division(dtname):
    """All integer division checks of one dtype (run in a child process)."""
    dev, rng = _dev(), np.random.default_rng(13)
    dt = np.dtype(dtname)
    info = np.iinfo(dt)
    a, b = _int_operands(dtname, rng)
    outs = [dev.poisoned(NI, dt) for _ in range(3)]
    int_divmod[(1,)](dev.put(a), dev.put(b), *outs, N=NI)
    q, r, c = (dev.get(o) for o in outs)
    _eq(q, _np(np.floor_divide, a, b), f"{dtname} tile // tile")
    _eq(r, _np(np.remainder, a, b), f"{dtname} tile % tile")
    _eq(c, _np_cdiv(a, b), f"{dtname} tile.cdiv(tile, tile)")

    divisors = [0, 1, 3, info.max] + ([-1, -3] if info.min < 0 else [])
    for d in [d for d in divisors if d < 2**63]:  # runtime scalars take the tile's dtype
        outs = [dev.poisoned(NI, dt) for _ in range(2)]
        int_divmod_by_scalar[(1,)](dev.put(a), d, *outs, N=NI)
        q, r = (dev.get(o) for o in outs)
        _eq(q, _np(np.floor_divide, a, dt.type(d)), f"{dtname} tile // runtime {d}")
        _eq(r, _np(np.remainder, a, dt.type(d)), f"{dtname} tile % runtime {d}")
    for d in divisors + [info.min]:
        outs = [dev.poisoned(NI, dt) for _ in range(3)]
        int_divmod_by_constant[(1,)](dev.put(a), *outs, N=NI, D=int(d))
        q, r, c = (dev.get(o) for o in outs)
        dd = np.full(NI, d, dt)
        _eq(q, _np(np.floor_divide, a, dd), f"{dtname} tile // Constant {d}")
        _eq(r, _np(np.remainder, a, dd), f"{dtname} tile % Constant {d}")
        _eq(c, _np_cdiv(a, dd), f"{dtname} tile.cdiv(tile, Constant {d})")


def _check_scalar_division():
    """Runtime int arguments (i32, and i64 beyond its range) divided."""
    dev = _dev()
    cases = [(7, 0), (-7, 0), (0, 0), (-2**31, -1), (-2**31, 0), (2**31 - 1, -1),
             (-7, 2), (7, -2), (-2**63, -1), (-2**63, 0), (2**40, 0), (2**40 + 5, -3)]
    for s, t in cases:
        out = dev.poisoned((2 * N,), np.int64)
        scalar_divmod[(1,)](s, t, out, N=N)
        got = dev.get(out)
        # i32 arguments divide in int32; an i64 argument makes it int64
        dt = np.int64 if not (-2**31 <= s < 2**31 and -2**31 <= t < 2**31) else np.int32
        want_q = _np(np.floor_divide, dt(s), dt(t))
        want_r = _np(np.remainder, dt(s), dt(t))
        assert (got[:N] == want_q).all() and (got[N:] == want_r).all(), \
            f"runtime {s} // {t}: got {got[0]}, {got[N]}; NumPy {want_q}, {want_r}"


def _in_child(call):
    """Runs `call` (Python text) in a fresh interpreter that imports this
    file; a signal there fails the test with its name."""
    code = (f"import sys; sys.path[:0] = [{HERE!r}, {os.path.join(ROOT, 'python-frontend')!r}]"
            f"\nimport test_hostile_arith as t\nt.{call}")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600, env=dict(os.environ))
    if proc.returncode < 0:
        pytest.fail(f"{call} was killed by signal {-proc.returncode} "
                    f"(SIGFPE is 8):\n{proc.stderr[-3000:]}")
    assert proc.returncode == 0, f"{call} failed:\n{proc.stderr[-3000:]}"


@pytest.mark.numerics
@pytest.mark.parametrize("dtname", INT_DTYPES)
def test_integer_division_by_zero_and_int_min_by_minus_one_as_numpy(dtname):
    _in_child(f"_check_int_division({dtname!r})")


@pytest.mark.numerics
def test_runtime_scalar_division_by_zero_as_numpy():
    _in_child("_check_scalar_division()")


# -- shifts ----------------------------------------------------------------

@tile.kernel
def shifts(x, y, left, right, N: tile.Constant[int]):
    a = tile.load(x, index=(0,), shape=(N,))
    b = tile.load(y, index=(0,), shape=(N,))
    tile.store(left, index=(0,), tile=a << b)
    tile.store(right, index=(0,), tile=a >> b)


@tile.kernel
def shifts_by_constant(x, left, right, N: tile.Constant[int], S: tile.Constant[int]):
    a = tile.load(x, index=(0,), shape=(N,))
    tile.store(left, index=(0,), tile=a << S)
    tile.store(right, index=(0,), tile=a >> S)


@tile.kernel
def shifts_by_scalar(x, s, left, right, N: tile.Constant[int]):
    a = tile.load(x, index=(0,), shape=(N,))
    tile.store(left, index=(0,), tile=a << s)
    tile.store(right, index=(0,), tile=a >> s)


def _shift_reference(a, b):
    return _np(np.left_shift, a, b), _np(np.right_shift, a, b)


@pytest.mark.numerics
@pytest.mark.parametrize("dtname", INT_DTYPES)
def test_shifts_out_of_range_as_numpy(dtname):
    dev, rng = _dev(), np.random.default_rng(7)
    dt = np.dtype(dtname)
    info, bits = np.iinfo(dt), dt.itemsize * 8
    a = rng.integers(info.min, info.max, N, dtype=dt, endpoint=True)
    a[:4] = [0, 1, info.max, info.min]
    amounts = [0, 1, bits - 1, bits, bits + 1, 2 * bits, info.max] + \
        ([-1, -bits, info.min] if info.min < 0 else [])
    b = np.resize(np.array(amounts, dtype=object).astype(dt), N)
    b[len(amounts) * 3:] = rng.integers(info.min, info.max, N - len(amounts) * 3, dtype=dt,
                                        endpoint=True)
    outs = [dev.poisoned(N, dt) for _ in range(2)]
    shifts[(1,)](dev.put(a), dev.put(b), *outs, N=N)
    want_l, want_r = _shift_reference(a, b)
    _eq(dev.get(outs[0]), want_l, f"{dtname} tile << tile")
    _eq(dev.get(outs[1]), want_r, f"{dtname} tile >> tile")
    for s in [3, bits - 1, bits, bits + 5, 100] + ([-1] if info.min < 0 else []):
        outs = [dev.poisoned(N, dt) for _ in range(2)]
        shifts_by_constant[(1,)](dev.put(a), *outs, N=N, S=s)
        want_l, want_r = _shift_reference(a, np.full(N, s, dt))
        _eq(dev.get(outs[0]), want_l, f"{dtname} tile << Constant {s}")
        _eq(dev.get(outs[1]), want_r, f"{dtname} tile >> Constant {s}")
        if s <= info.max:
            outs = [dev.poisoned(N, dt) for _ in range(2)]
            shifts_by_scalar[(1,)](dev.put(a), s, *outs, N=N)
            _eq(dev.get(outs[0]), want_l, f"{dtname} tile << runtime {s}")
            _eq(dev.get(outs[1]), want_r, f"{dtname} tile >> runtime {s}")


def test_constant_operands_never_fold_to_poison():
    """Item 2 at the IR level: a Constant zero divisor or an oversized
    shift must not fold to poison (what made the CPU store heap bytes)."""
    i32 = np.zeros(4, np.int32)
    for d in [0, -1]:
        text = trace(int_divmod_by_constant, i32, i32, i32, i32, N=16, D=d)
        out = subprocess.run([tile_opt_path(), "--canonicalize", "-"], input=text,
                             capture_output=True, text=True, check=True).stdout
        assert "poison" not in out, out
    for s in [32, 40, -1]:
        text = trace(shifts_by_constant, i32, i32, i32, N=16, S=s)
        out = subprocess.run([tile_opt_path(), "--canonicalize", "-"], input=text,
                             capture_output=True, text=True, check=True).stdout
        assert "poison" not in out, out
        assert not re.search(r"arith\.sh(li|rsi|rui) .*\b(3[2-9]|40|-1)\b", out)


def test_no_undefined_division_is_emitted_for_runtime_divisors():
    """Every runtime divisor and shift amount passes through a guard."""
    i32 = np.zeros(4, np.int32)
    text = trace(int_divmod, i32, i32, i32, i32, i32, N=16)
    defs = dict(re.findall(r"(%\w+) = (\S+)", text))
    for op, divisor in re.findall(
            r"(arith\.(?:floordivsi|divui|remsi|remui|ceildivsi|ceildivui)) %\w+, (%\w+)",
            text):
        assert defs[divisor] == "arith.select", (op, divisor, text)
    text = trace(shifts, i32, i32, i32, i32, N=16)
    defs = dict(re.findall(r"(%\w+) = (\S+)", text))
    for op, amount in re.findall(r"(arith\.sh(?:li|rsi|rui)) %\w+, (%\w+)", text):
        assert defs[amount] == "arith.minui", (op, amount, text)


# -- float `//` and `%` ----------------------------------------------------

FLOAT_SPECIALS = [1.0, 0.1, -1.0, np.inf, 5.0, 3.0, -5.0, 3.0, 0.0, -2.0, 3.0, 0.0,
                  7.0, -0.0, 1.0, -1.0, -0.0, 2.0, 0.0, -0.0, np.inf, 1.0, -np.inf, 1.0,
                  np.nan, 1.0, 1.0, np.nan, 1.0, np.inf, -1.0, np.inf, 1.0, -np.inf,
                  -1.0, -np.inf, 0.0, 0.0, 1e-30, 1.0, 6.0, 0.5, -6.0, 0.5, 1e30, 3.0,
                  5.0, -0.0, -5.0, -0.0, 0.3, 0.1, 0.7, -0.1, -0.7, 0.1, 2.5, -0.5]


def _float_operands(rng):
    pairs = np.array(FLOAT_SPECIALS, np.float64).reshape(-1, 2)
    a = np.concatenate([pairs[:, 0], rng.standard_normal(N) * 10])[:N]
    b = np.concatenate([pairs[:, 1], rng.standard_normal(N) * 3])[:N]
    return a, b


def _bf16(x):
    """float32 `x` rounded to bfloat16 (nearest even), as float32."""
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    rounded = np.where(np.isnan(np.asarray(x, np.float32)), 0x7FC00000, rounded)
    return rounded.astype(np.uint32).view(np.float32)


def _same_floats(got, want, what):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    same = (got == want) & (np.signbit(got) == np.signbit(want)) | \
        (np.isnan(got) & np.isnan(want))
    bad = np.flatnonzero(~same)
    assert bad.size == 0, f"{what}: at {bad[:8].tolist()} got {got[bad[:8]].tolist()}, " \
                          f"NumPy {want[bad[:8]].tolist()}"


@tile.kernel
def float_divmod(x, y, q, r, N: tile.Constant[int], DT: tile.Constant[str]):
    a = tile.load(x, index=(0,), shape=(N,)).astype(DT)
    b = tile.load(y, index=(0,), shape=(N,)).astype(DT)
    tile.store(q, index=(0,), tile=(a // b).astype(x.dtype))
    tile.store(r, index=(0,), tile=(a % b).astype(x.dtype))


@tile.kernel
def float_divmod_by_constant(x, q, r, N: tile.Constant[int], D: tile.Constant[float]):
    a = tile.load(x, index=(0,), shape=(N,))
    tile.store(q, index=(0,), tile=a // D)
    tile.store(r, index=(0,), tile=a % D)


@tile.kernel
def float_divmod_by_scalar(x, s, q, r, N: tile.Constant[int]):
    a = tile.load(x, index=(0,), shape=(N,))
    tile.store(q, index=(0,), tile=a // s)
    tile.store(r, index=(0,), tile=a % s)


@pytest.mark.numerics
@pytest.mark.parametrize("dtname", ["float16", "bfloat16", "float32", "float64"])
def test_float_floordiv_and_mod_as_numpy(dtname):
    dev, rng = _dev(), np.random.default_rng(8)
    a, b = _float_operands(rng)
    if dtname == "bfloat16":  # NumPy has none: f32 in and out, bf16 inside
        io = np.float32
        a, b = _bf16(a), _bf16(b)
        want_q = _bf16(_np(np.floor_divide, a, b))
        want_r = _bf16(_np(np.remainder, a, b))
    else:
        io = np.dtype(dtname)
        a, b = _np(lambda: (a.astype(io), b.astype(io)))  # 1e30 is inf in f16
        want_q, want_r = _np(np.floor_divide, a, b), _np(np.remainder, a, b)
    q, r = dev.poisoned(N, io), dev.poisoned(N, io)
    float_divmod[(1,)](dev.put(a), dev.put(b), q, r, N=N, DT=dtname)
    _same_floats(dev.get(q), want_q, f"{dtname} //")
    _same_floats(dev.get(r), want_r, f"{dtname} %")
    q64 = np.asarray(dev.get(q), np.float64)
    r64 = np.asarray(dev.get(r), np.float64)
    finite = np.isfinite(a) & np.isfinite(b) & (b != 0) & np.isfinite(q64) & np.isfinite(r64)
    recon = _np(lambda: q64 * b.astype(np.float64) + r64)
    eps = np.finfo(np.float16 if dtname in ("float16", "bfloat16") else io).eps * 8
    assert np.allclose(recon[finite], a[finite], rtol=eps, atol=eps * np.abs(b[finite]))


@pytest.mark.numerics
@pytest.mark.parametrize("d", [0.1, 3.0, -0.5, 0.0, -0.0, np.inf, -np.inf])
def test_float_floordiv_by_constants_and_scalars_as_numpy(d):
    dev, rng = _dev(), np.random.default_rng(9)
    a, _ = _float_operands(rng)
    a = a.astype(np.float32)
    want_q = _np(np.floor_divide, a, np.float32(d))
    want_r = _np(np.remainder, a, np.float32(d))
    # (Constant -0.0 is left out: it specializes like 0.0, the keys compare
    # by ==, so it would run the kernel compiled for 0.0.)
    if not (d == 0 and np.signbit(d)):
        q, r = dev.poisoned(N, np.float32), dev.poisoned(N, np.float32)
        float_divmod_by_constant[(1,)](dev.put(a), q, r, N=N, D=float(d))
        _same_floats(dev.get(q), want_q, f"f32 // Constant {d}")
        _same_floats(dev.get(r), want_r, f"f32 % Constant {d}")
    q, r = dev.poisoned(N, np.float32), dev.poisoned(N, np.float32)
    float_divmod_by_scalar[(1,)](dev.put(a), float(d), q, r, N=N)
    _same_floats(dev.get(q), want_q, f"f32 // runtime {d}")
    _same_floats(dev.get(r), want_r, f"f32 % runtime {d}")


@pytest.mark.numerics
@pytest.mark.parametrize("dtname", ["float16", "float32"])
def test_float_floordiv_of_huge_quotients_as_numpy(dtname):
    """Quotients far beyond 2**24: npy_divmod's (a - fmod(a, b)) / b must be
    rounded correctly, which the GPU's f32 `/` (div.full, 2 ulp) is not
    (the fuzzer's seed 20261205: -1153987244032968279 // 3.0 was an ulp off)."""
    rng = np.random.default_rng(20261205)
    io = np.dtype(dtname)
    top = 30 if dtname == "float32" else 4.5
    a = (rng.choice([-1.0, 1.0], N) * 10.0 ** rng.uniform(top - 12, top, N)).astype(io)
    if dtname == "float32":
        a[0] = np.float32(-1153987244032968279)
    b = rng.choice([3.0, -3.0, 7.0, 0.3, 1.7, -11.0], N).astype(io)
    want_q, want_r = _np(np.floor_divide, a, b), _np(np.remainder, a, b)
    dev = _dev()
    q, r = dev.poisoned(N, io), dev.poisoned(N, io)
    float_divmod[(1,)](dev.put(a), dev.put(b), q, r, N=N, DT=dtname)
    _same_floats(dev.get(q), want_q, f"{dtname} // of huge quotients")
    _same_floats(dev.get(r), want_r, f"{dtname} % of huge quotients")


def test_python_examples_of_the_issue():
    """1.0 // 0.1 is 9 and -1.0 // inf is -1, as in Python."""
    dev = _dev()
    a = np.array([1.0, -1.0, 1.0, -7.5] + [1.0] * 12, np.float32)
    b = np.array([0.1, np.inf, -np.inf, 2.0] + [1.0] * 12, np.float32)
    q, r = dev.poisoned(16, np.float32), dev.poisoned(16, np.float32)
    float_divmod[(1,)](dev.put(a), dev.put(b), q, r, N=16, DT="float32")
    got_q, got_r = dev.get(q), dev.get(r)
    for i in range(4):
        want = divmod(float(a[i]), float(np.float32(b[i])))
        assert (got_q[i], got_r[i]) == pytest.approx(want), (a[i], b[i])


# -- float16 / bfloat16 rounding after every operation (item 4) ------------

@tile.kernel
def half_chain(x, y, z, s, e, eq, m, N: tile.Constant[int], DT: tile.Constant[str]):
    a = tile.load(x, index=(0,), shape=(N,)).astype(DT)
    b = tile.load(y, index=(0,), shape=(N,)).astype(DT)
    c = tile.load(z, index=(0,), shape=(N,)).astype(DT)
    t = a + b
    tile.store(s, index=(0,), tile=((a + a) - a).astype(x.dtype))
    tile.store(e, index=(0,), tile=(t - a).astype(x.dtype))
    tile.store(eq, index=(0,), tile=t == a)  # the comparison and the select
    tile.store(m, index=(0,), tile=tile.where(t > a, t, c).astype(x.dtype))  # see one t


@tile.kernel
def half_mul_add(x, y, z, out, N: tile.Constant[int], DT: tile.Constant[str]):
    a = tile.load(x, index=(0,), shape=(N,)).astype(DT)
    b = tile.load(y, index=(0,), shape=(N,)).astype(DT)
    c = tile.load(z, index=(0,), shape=(N,)).astype(DT)
    tile.store(out, index=(0,), tile=((a * b + c) + b).astype(x.dtype))


def _half_inputs(dtname, rng):
    """Values whose f32 sums differ from the rounded half sums: overflow
    (40000 + 40000 in f16), a lost unit (2048 + 1 in f16, 256 + 1 in bf16)."""
    big, unit = (40000.0, 2048.0) if dtname == "float16" else (1e38, 256.0)
    a = np.concatenate([[big, unit, unit, -unit], rng.standard_normal(N - 4) * 300])
    b = np.concatenate([[1.0, 1.0, 0.5, -1.0], rng.standard_normal(N - 4)])
    c = rng.standard_normal(N)
    return a, b, c


def _round_half(dtname, v):
    v = np.asarray(v)
    if dtname == "float16":
        return v.astype(np.float16)
    return _bf16(v.astype(np.float32))


@pytest.mark.numerics
@pytest.mark.parametrize("dtname", ["float16", "bfloat16"])
def test_half_arithmetic_rounds_after_every_operation(dtname):
    dev, rng = _dev(), np.random.default_rng(4)
    a, b, c = (_round_half(dtname, v) for v in _half_inputs(dtname, rng))
    io = np.float16 if dtname == "float16" else np.float32
    a, b, c = a.astype(io), b.astype(io), c.astype(io)
    outs = [dev.poisoned(N, io), dev.poisoned(N, io), dev.poisoned(N, np.bool_),
            dev.poisoned(N, io)]
    half_chain[(1,)](*(dev.put(v) for v in (a, b, c)), *outs, N=N, DT=dtname)
    r = lambda v: _round_half(dtname, v).astype(io)  # noqa: E731
    with np.errstate(all="ignore"):
        t = r(a + b)
        want = [r(r(a + a) - a), r(t - a), t == a, np.where(t > a, t, c)]
    got = [dev.get(o) for o in outs]
    _same_floats(got[0], want[0], f"{dtname} (a + a) - a")
    _same_floats(got[1], want[1], f"{dtname} (a + b) - a")
    _eq(got[2], want[2], f"{dtname} a + b == a")
    _same_floats(got[3], want[3], f"{dtname} where(a + b > a, a + b, c)")


@pytest.mark.numerics
@pytest.mark.parametrize("dtname", ["float16", "bfloat16"])
def test_half_multiply_add_rounds_once_and_the_rest_after_every_op(dtname):
    """`a * b + c` is contracted into one fma on both backends (tile-fuse,
    docs/numerics.md): one rounding of the exact a * b + c; the next add
    rounds to the half type. (No product follows: the GPU contracts those
    too.)"""
    dev, rng = _dev(), np.random.default_rng(5)
    io = np.float16 if dtname == "float16" else np.float32
    a, b, c = (_round_half(dtname, rng.standard_normal(N) * 8).astype(io) for _ in range(3))
    out = dev.poisoned(N, io)
    half_mul_add[(1,)](dev.put(a), dev.put(b), dev.put(c), out, N=N, DT=dtname)
    r = lambda v: _round_half(dtname, v).astype(io)  # noqa: E731
    exact = a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)
    want = r(r(exact) + b)
    _same_floats(dev.get(out), want, f"{dtname} (a * b + c) + b")


# -- signed overflow wraps (two's complement), as NumPy ----------------------

@tile.kernel
def wrapping(x, y, add, sub, mul, neg, N: tile.Constant[int], C: tile.Constant[int]):
    a = tile.load(x, index=(0,), shape=(N,))
    b = tile.load(y, index=(0,), shape=(N,))
    tile.store(add, index=(0,), tile=a + b + C)
    tile.store(sub, index=(0,), tile=a - b - C)
    tile.store(mul, index=(0,), tile=a * b * C)
    tile.store(neg, index=(0,), tile=tile.abs(-a))


@pytest.mark.numerics
@pytest.mark.parametrize("dtname", INT_DTYPES)
def test_integer_overflow_wraps_as_numpy(dtname):
    dev, rng = _dev(), np.random.default_rng(10)
    dt = np.dtype(dtname)
    info = np.iinfo(dt)
    a = rng.integers(info.min, info.max, N, dtype=dt, endpoint=True)
    b = rng.integers(info.min, info.max, N, dtype=dt, endpoint=True)
    a[:4], b[:4] = [info.max, info.min, info.max, info.min], [info.max, info.min, 1, 1]
    c = 3
    outs = [dev.poisoned(N, dt) for _ in range(4)]
    wrapping[(1,)](dev.put(a), dev.put(b), *outs, N=N, C=c)
    with np.errstate(all="ignore"):
        want = [a + b + dt.type(c), a - b - dt.type(c), a * b * dt.type(c),
                np.abs(-a)]
    for got, w, what in zip(outs, want, ["a + b + 3", "a - b - 3", "a * b * 3", "abs(-a)"]):
        _eq(dev.get(got), w, f"{dtname} {what}")
