"""Float-to-integer casts (`t.astype(int dtype)`) truncate toward zero and
saturate at the integer type's range, NaN giving 0, on both backends
(docs/numerics.md). arith's fptosi/fptoui give poison out of range, and the
poison reached a division's zero-divisor guard: the differential fuzzer's
`X0.min().astype(uint8) // prod` (seed 20261217) killed the process with
SIGFPE on the CPU backend."""

import math
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tile
from tilehelp import ROOT, Device

INT_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"]
N = 128


def _specials(src):
    """NaN, the infinities, each integer type's bounds and their neighbours
    in `src`, fractions around zero, then random values of every size."""
    vals = [math.nan, math.inf, -math.inf, 0.0, -0.0, 0.5, -0.5, 0.99, -0.99, 1.5, -1.5]
    for dt in INT_DTYPES:
        info = np.iinfo(dt)
        for b in (info.min, info.max, info.max + 1, info.min - 1):
            with np.errstate(over="ignore"):  # float16: the bounds of 32 and 64 bits
                f = np.array(b, dtype=np.float64).astype(src)
            vals += [float(f), float(np.nextafter(f, src(np.inf))),
                     float(np.nextafter(f, src(-np.inf)))]
    rng = np.random.default_rng(7)
    finfo = np.finfo(src)
    rand = rng.standard_normal(N) * 10.0 ** rng.uniform(0, math.log10(float(finfo.max)), N)
    vals = np.array(vals + rand.tolist(), dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        return vals.astype(src)[:N]


def _saturated(x, dtname):
    info = np.iinfo(dtname)
    out = []
    for v in x.astype(np.float64).tolist():
        if math.isnan(v):
            out.append(0)
        elif math.isinf(v):
            out.append(info.max if v > 0 else info.min)
        else:
            out.append(min(max(math.trunc(v), int(info.min)), int(info.max)))
    return np.array(out, dtype=object).astype(dtname)


@tile.kernel
def to_int(x, out, N: tile.Constant[int]):
    tile.store(out, index=(0,), tile=tile.load(x, index=(0,), shape=(N,)).astype(out.dtype))


@tile.kernel
def scalar_to_int(s, out):
    tile.store(out, index=(0,), tile=tile.full((1,), tile.astype(s, out.dtype), out.dtype))


@pytest.mark.numerics
@pytest.mark.parametrize("src", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("dtname", INT_DTYPES)
def test_float_to_int_truncates_and_saturates(src, dtname):
    dev = Device()
    x = _specials(src)
    out = dev.poisoned((N,), np.dtype(dtname))
    to_int[(1,)](dev.put(x), out, N=N)
    np.testing.assert_array_equal(dev.get(out), _saturated(x, dtname))


@pytest.mark.numerics
@pytest.mark.parametrize("dtname", ["int8", "uint8", "int32", "uint64"])
def test_runtime_scalar_to_int_saturates(dtname):
    dev = Device()
    for v in (math.nan, 1e30, -1e30, 300.7, -300.7, -0.5):
        out = dev.poisoned((1,), np.dtype(dtname))
        scalar_to_int[(1,)](v, out)
        np.testing.assert_array_equal(dev.get(out), _saturated(np.array([v], np.float32),
                                                               dtname), err_msg=str(v))


def test_the_fuzzers_program_no_longer_traps():
    """Seed 20261217's shrunk program, in a child process (SIGFPE is 8)."""
    code = textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {ROOT + '/python-frontend'!r})
        sys.path.insert(0, {ROOT + '/test/python'!r})
        import numpy as np
        import tile
        from tilehelp import Device

        @tile.kernel
        def fuzz_kernel(x0, x1, out, R: tile.Constant[int], C: tile.Constant[int]):
            i, j = tile.bid(0), tile.bid(1)
            X0 = tile.load(x0, index=(i, j), shape=(R, C), padding=3e+38)
            X1 = tile.load(x1, index=(i, j), shape=(R, C))
            q = tile.min(X0, keepdims=True).astype(tile.uint8) // tile.prod(-X1, axis=0,
                                                                           keepdims=True)
            tile.store(out, index=(i, j), tile=tile.broadcast_to(q, (R, C)))

        dev = Device()
        x0 = np.array([[-1.7e38], [3.3], [-0.1], [-1.5]], dtype=np.float32)
        x1 = np.array([[24025], [-5], [-11], [-16]], dtype=np.int16)
        out = dev.poisoned((4, 1), np.int32)
        fuzz_kernel[(1, 1)](dev.put(x0), dev.put(x1), out, R=16, C=2)
        # min -1.7e38 saturates to 0; the product has padding zeros: 0 // 0 is 0
        assert (dev.get(out) == 0).all(), dev.get(out)
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", \
        f"exit {proc.returncode}:\n{proc.stderr[-3000:]}"
