"""The differential fuzzer (issue 13): random kernels against a NumPy model
of the spec, at least 1,000 per run on the CPU backend.

Each run fuzzes a fixed seed (the same kernels every time: a regression
net) and a rotating one ($TILE_FUZZ_SEED, by default the date: new kernels
every day). $TILE_FUZZ_COUNT kernels per seed (default 600); $TILE_FUZZ_WORKERS
processes. A failure prints, for each failing kernel, a shrunk reproducer:
the kernel source, its inputs, the launch, the expected interval and what
tile gave; `python -m fuzz.campaign SEED COUNT` (from test/python) reruns a
whole campaign, fuzz/generate.py `generate(seed, index)` one kernel.

The model (fuzz/model.py) is written from the spec: promotion, Python's
`//` and `%`, NumPy's integer semantics (wrap; x // 0 == x % 0 == 0;
INT_MIN // -1 == INT_MIN; shifts out of range as npy_lshift/npy_rshift),
float16/bfloat16 rounded after every operation. Float results are intervals
that any implementation within the documented error bounds stays inside;
NaN positions, inf signs and integers are exact."""

import datetime
import os
import tempfile

import numpy as np
import pytest

from fuzz import kernelgen as G
from fuzz import model as Mo
from fuzz import numeric as N
from fuzz import reductions as Re
from fuzz.generate import generate
from fuzz.program import Input, Program
from fuzz.runner import campaign, reproducer, run

FIXED_SEED = 13  # issue 13; rotating seeds are dates (YYYYMMDD), never 13


def rotating_seed():
    env = os.environ.get("TILE_FUZZ_SEED")
    return int(env) if env else int(datetime.date.today().strftime("%Y%m%d"))


COUNT = int(os.environ.get("TILE_FUZZ_COUNT", "600"))


# -- the model itself (no compiler needed) ----------------------------------

def test_promotion_follows_the_spec():
    assert N.promote(N.float16, N.float32) is N.float32
    assert N.promote(N.bfloat16, N.float16) is N.float32
    assert N.promote(N.int32, N.float16) is N.float16
    assert N.promote(N.uint8, N.int8) is N.int16
    assert N.promote(N.bool_, N.int8) is N.int8
    # weak scalars: the tile's dtype unless the scalar's kind is higher
    assert N.weak(N.INT, N.int8) is N.int8
    assert N.weak(N.FLOAT, N.int8) is N.float32
    assert N.weak(N.FLOAT, N.float16) is N.float16
    assert N.weak(N.INT, N.bool_) is N.int32
    x = G.Tile("X", N.int8, (2, 2))
    assert G.Binary("add", x, G.Lit(3)).dt is N.int8
    assert G.Binary("truediv", x, G.Lit(3)).dt is N.float32
    assert G.Binary("mul", x, G.Scalar("s", N.float32)).dt is N.float32
    with pytest.raises(G.Invalid):
        G.Binary("and", G.Tile("F", N.float32, (2, 2)), x)


def test_half_formats_round_after_every_operation():
    sem = Mo.Semantics()
    a = Mo.MV(N.float16, np.full(2, 40000.0))
    twice = Mo.binary("add", a, a, N.float16, sem)
    assert np.isinf(Mo.binary("sub", twice, a, N.float16, sem).nom).all()
    # bfloat16: round to nearest even on the float32 bits
    assert N.round_to(np.array([1 + 2.0 ** -8, 1 + 3 * 2.0 ** -8]), N.bfloat16).tolist() == \
        [1.0, 1 + 2.0 ** -6]


def test_integer_semantics_are_numpys():
    sem = Mo.Semantics()
    a = Mo.MV(N.int8, np.array([7, -128, -7, 5], np.int8))
    b = Mo.MV(N.int8, np.array([0, -1, 2, 9], np.int8))
    assert Mo.binary("floordiv", a, b, N.int8, sem).nom.tolist() == [0, -128, -4, 0]
    assert Mo.binary("mod", a, b, N.int8, sem).nom.tolist() == [0, 0, 1, 5]
    assert Mo.binary("lshift", a, b, N.int8, sem).nom.tolist() == [7, 0, -28, 0]
    assert Mo.binary("rshift", a, b, N.int8, sem).nom.tolist() == [7, -1, -2, 0]
    # Integer powers wrap as repeated multiplication; large exponents too.
    assert Mo.power(a, 3, N.int8, sem).nom.tolist() == [87, 0, -87, 125]
    big = Mo.power(b, 2147483647, N.int8, sem).nom.tolist()
    nine = pow(9, 2147483647, 256)
    assert big == [0, -1, 0, nine - 256 * (nine > 127)]
    f = Mo.MV(N.float32, np.array([1.0, -1.0]))
    g = Mo.MV(N.float32, np.array([N.round_to(0.1, N.float32), np.inf]))
    assert Mo.binary("floordiv", f, g, N.float32, sem).nom.tolist() == [9.0, -1.0]


def test_intervals_hold_what_rounding_can_give():
    sem = Mo.Semantics()
    x = Mo.MV(N.float32, np.array([1.0]))
    e = Mo.unary("exp", x, N.float32, sem)
    assert e.lo[0] < np.e < e.hi[0] and e.hi[0] - e.lo[0] < 1e-5
    # a comparison within that error is unknown, not guessed
    c = Mo.binary("lt", e, Mo.literal(float(np.float32(np.e)), N.float32), N.float32, sem)
    assert c.unk.all()
    s = Re.reduce("sum", Mo.MV(N.float16, np.full((4, 4), 0.5)), None, False)
    assert s.dt is N.float16 and s.nom == 8.0 and s.exact().all()


def test_a_power_added_to_may_contract_into_an_fma():
    """`x ** 2 + z` is x * x + z, which tile-fuse contracts: FLT_MAX ** 2 +
    -inf is nan unfused and -inf as an fma (seed 20261231); x ** 3 + z fuses
    its last product, x * (x * x)."""
    big = float(np.finfo(np.float32).max)
    env = {"__sem": Mo.Semantics(), "X": Mo.MV(N.float32, np.array([big, 2.0])),
           "Z": Mo.MV(N.float32, np.array([-np.inf, 0.5]))}
    X, Z = G.Tile("X", N.float32, (2,)), G.Tile("Z", N.float32, (2,))
    with np.errstate(all="ignore"):
        square = G.Binary("add", G.Pow(X, G.Lit(2)), Z).eval(env)
        unfused = Mo.binary("add", G.Pow(X, G.Lit(2)).eval(env), env["Z"], N.float32,
                            env["__sem"])
    assert np.isnan(unfused.nom[0]) and not unfused.unk[0]  # nan, and only nan
    assert square.unk[0]  # nan or -inf: either is right
    assert square.lo[1] <= 4.5 <= square.hi[1] and not square.unk[1]
    assert [len(G.Pow(X, G.Lit(n)).last_factors(env) or ()) for n in (1, 2, 3, 5)] == [0, 2, 2, 2]


def test_a_large_int_exponent_takes_the_float_dtype():
    """float32 ** 2147483647 raises to float32(2147483647) = 2^31, an even
    power, as NumPy 2 does: -3.4 ** 2147483647 is +inf (seed 20270150),
    while a small exponent (multiplied out) keeps its parity."""
    env = {"__sem": Mo.Semantics(), "X": Mo.MV(N.float32, np.array([-3.4088688, -2.0]))}
    X = G.Tile("X", N.float32, (2,))
    with np.errstate(all="ignore"):
        big = G.Pow(X, G.Lit(2147483647)).eval(env)
        small = G.Pow(X, G.Lit(3)).eval(env)
    assert big.nom.tolist() == [np.inf, np.inf] and not big.unk.any()
    assert small.nom[1] == -8.0


def test_a_factor_around_zero_times_inf_may_be_nan():
    """A factor known only to lie around 0 (a sigmoid that underflowed, with
    its slack) times inf is nan if it is 0 and ±inf if not (seed 20270106):
    unknown, both in a product and in an fma."""
    sem = Mo.Semantics()
    tiny = Mo.MV(N.float16, np.array([6e-8, 1.0]), np.array([-1.2e-7, 1.0]),
                 np.array([1.8e-7, 1.0]), np.array([False, False]))
    inf = Mo.MV(N.float16, np.array([np.inf, np.inf]))
    zero = Mo.MV(N.float16, np.array([0.0, 0.0]))
    with np.errstate(all="ignore"):
        assert Mo.fma(tiny, inf, zero, N.float16, sem).unk.tolist() == [True, False]
        assert Mo.binary("mul", tiny, inf, N.float16, sem).unk.tolist() == [True, False]


def test_a_remainder_of_a_huge_quotient_is_unknown():
    """x % y with y known to an ulp and x / y past float32's integers (or
    past its range): the remainder can be anywhere in [0, y) (seed
    20261210: 1.7e38 % rsqrt(1.7e38), whose quotient is inf in float32).
    A small quotient keeps its interval."""
    sem = Mo.Semantics()
    x = Mo.MV(N.float32, np.array([1.7014117331926443e38, 3e9, 7.0]))
    r = Mo.unary("rsqrt", x, N.float32, sem)
    with np.errstate(all="ignore"):
        m = Mo.binary("mod", x, r, N.float32, sem)
    assert m.unk.tolist() == [True, True, False]
    assert m.lo[2] <= 7.0 % (1 / np.sqrt(7.0)) <= m.hi[2]


# -- the fuzzer finds what it should ----------------------------------------

def test_a_reproducer_runs_as_written():
    """The launch part of a report is Python that runs: inputs holding inf
    and nan included (seed 20261210's report named an undefined `inf`)."""
    values = np.array([[np.inf, -np.inf, np.nan, 1.5]], np.float32)
    x = Input("x0", N.float32, "full", None, values)
    prog = Program(1, 4, 1, 4, [x], [], G.Binary("add", G.Tile("X0", N.float32, (1, 4)),
                                                  G.Lit(0.5)), label="inf")
    text = reproducer(prog, {"status": "mismatch", "detail": ""})
    launched = {}
    env = {"fuzz_kernel": {prog.grid: lambda *a, **k: launched.update(args=a, consts=k)}}
    exec(text.split("--- launch:\n")[1], env)
    np.testing.assert_array_equal(launched["args"][0], values)
    assert launched["consts"] == {"R": 1, "C": 4}


def _tiny_program(op):
    x = Input("x0", N.float32, "full", None, np.arange(12.0).reshape(3, 4) - 5)
    X = G.Tile("X0", N.float32, (2, 4))
    return Program(2, 4, 3, 4, [x], [], G.Binary(op, X, G.Lit(0.5)), label="tiny")


@pytest.mark.numerics
def test_a_wrong_operator_is_a_mismatch_with_a_reproducer(monkeypatch):
    from tilehelp import Device
    dev, sem, workdir = Device(), Mo.Semantics(Device().backend), tempfile.mkdtemp()
    prog = _tiny_program("add")
    assert run(prog, dev, sem, workdir)["status"] == "ok"
    source = prog.source()
    monkeypatch.setattr(Program, "source", lambda self: source.replace(" + ", " - "))
    out = run(prog, dev, sem, workdir)
    assert out["status"] == "mismatch" and out["count"] == 12
    text = reproducer(prog, out)
    assert "fuzz_kernel[(2, 1)](x0, out, R=2, C=4)" in text and "expected" in text


def test_generation_is_deterministic():
    assert generate(5, 17).source() == generate(5, 17).source()
    assert generate(5, 17).source() != generate(5, 18).source()


# -- the campaigns ------------------------------------------------------------

@pytest.mark.numerics
@pytest.mark.fuzz
@pytest.mark.parametrize("which", ["fixed", "rotating"])
def test_random_kernels_match_numpy(which, request):
    if request.config.getoption("--tile-reference"):
        pytest.skip("the fuzzer's workers run tile._tile itself")
    seed = FIXED_SEED if which == "fixed" else rotating_seed()
    workers = int(os.environ.get("TILE_FUZZ_WORKERS", "0")) or None
    stats, failures, reports = campaign(seed, COUNT, workers)
    print(f"fuzz seed {seed}: {stats['ok']} of {COUNT} kernels match "
          f"({stats['seconds'] / COUNT:.2f} s each)")
    if failures:
        path = os.path.join(tempfile.mkdtemp(prefix="tile-fuzz-report-"), "report.txt")
        with open(path, "w") as f:
            f.write("\n\n".join(reports))
        pytest.fail(f"{len(failures)} of {COUNT} random kernels (seed {seed}) differ from "
                    f"the model; reproducers (also in {path}):\n\n"
                    + "\n\n".join(reports[:8]), pytrace=False)
