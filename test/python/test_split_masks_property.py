"""Property test of tile-split-uniform-masks (issue 19): random loops whose
`tile.where` condition is a conjunction of compares of index tiles (an iota
plus terms in the loop index, the block id and runtime ints, scaled by
constants; 1-d, 2-d through `[:, None]`, or scalar), sometimes with a part
the pass cannot read (`%`), over `tile.range(lo, hi, STEP)` with runtime
bounds that cross zero, run empty or backward.

Each kernel is compared with the same program run on NumPy int64 values
(the outputs NaN/sentinel-poisoned), and its host-stage IR (tilec) must
hold the loops the cut promises: one more for a masked head when some part
turns true as the index grows, one more for a masked tail when some part
turns false or does not depend on it, none cut when a part is unreadable or
nothing depends on the index.

CI runs a fixed, derandomized set; TILE_FUZZ_SEED=N runs another seed,
TILE_SPLIT_EXAMPLES the count."""

import os
import re
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, note, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from fuzz.runner import _load_kernel
from test_tilec import run_tilec
from tilehelp import Device

pytestmark = pytest.mark.numerics

EXAMPLES = int(os.environ.get("TILE_SPLIT_EXAMPLES", "30"))
ROTATING = os.environ.get("TILE_FUZZ_SEED")
BLOCKS = 2
ARG_SETS = 4
PREDICATES = ["<", "<=", ">", ">="]


@dataclass
class Index:
    """`kj*j + kp*p + ka*a + c` plus `AR * ke` (AR the iota) when ke != 0."""
    kj: int
    kp: int
    ka: int
    c: int
    ke: int

    def text(self):
        terms = [f"AR * {self.ke}"] if self.ke else []
        terms += [f"j * {self.kj}", f"p * {self.kp}", f"a * {self.ka}", str(self.c)]
        return "(" + " + ".join(terms) + ")"


@dataclass
class Program:
    n: int
    step: int
    two_d: bool
    parts: list = field(default_factory=list)  # (text, j coefficient or None)
    # A part that holds for every iteration or for none, known when it
    # compiles: where it holds for none, the unmasked loop runs from a value
    # to itself and the canonicalizer drops it.
    constant_part: bool = False

    def cond(self):
        return " & ".join(f"({text})" for text, _ in self.parts)

    def expected_loops(self):
        """1 + a masked head + a masked tail; 1 when the pass must not cut."""
        ks = [k for _, k in self.parts]
        if any(k is None for k in ks) or not any(ks):
            return 1
        return 1 + any(k > 0 for k in ks) + any(k <= 0 for k in ks)

    def body(self, ns):
        """The loop body with `AR` as `ns`'s arange."""
        n = self.n
        ar = f"{ns}.arange({n})"
        if self.two_d:
            v = f"({ar}[:, None] * {n} + {ar}[None, :] + j * 7)"
        else:
            v = f"({ar} + j * 7)"
        return self.cond().replace("AR", ar), v

    def kernel(self):
        cond, v = self.body("tile")
        shape = f"({self.n}, {self.n})" if self.two_d else f"({self.n},)"
        index = "(p, 0, 0)" if self.two_d else "(p, 0)"
        store = f"(1, {self.n}, {self.n})" if self.two_d else f"(1, {self.n})"
        return f"""import tile


@tile.kernel
def fuzz_kernel(out, cnt, lo, hi, a, b):
    p = tile.bid(0)
    acc = tile.zeros({shape}, tile.float32)
    hits = tile.zeros({shape}, tile.int32)
    for j in tile.range(lo, hi, {self.step}):
        v = {v}
        m = {cond}
        acc = tile.where(m, acc + v.astype(tile.float32), acc - 2.0 * v.astype(tile.float32))
        hits = tile.where(m, hits + 1, hits)
    tile.store(out, index={index}, tile=tile.reshape(acc, {store}))
    tile.store(cnt, index={index}, tile=tile.reshape(hits, {store}))
"""

    def model(self, lo, hi, a, b, p):
        cond, v = self.body("np")
        shape = (self.n, self.n) if self.two_d else (self.n,)
        acc = np.zeros(shape, np.float64)
        hits = np.zeros(shape, np.int64)
        for j in range(lo, hi, self.step):
            env = {"np": np, "j": np.int64(j), "p": np.int64(p), "a": np.int64(a),
                   "b": np.int64(b)}
            vv = np.broadcast_to(eval(v, env), shape)
            m = np.broadcast_to(eval(cond, env), shape)
            acc = np.where(m, acc + vv, acc - 2.0 * vv)
            hits = np.where(m, hits + 1, hits)
        return acc, hits


class HypothesisDraw:
    def __init__(self, data):
        self.data = data

    def choice(self, values):
        return self.data.draw(st.sampled_from(values))

    def integer(self, lo, hi):
        return self.data.draw(st.integers(lo, hi))


class SeededDraw:
    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def choice(self, values):
        return values[self.rng.integers(len(values))]

    def integer(self, lo, hi):
        return int(self.rng.integers(lo, hi + 1))


def _index(draw, element):
    return Index(kj=draw.choice([0, 1, 1, 2, -1, 3, -2]), kp=draw.choice([0, 1, 4, -2]),
                 ka=draw.choice([0, 0, 1, -1]), c=draw.integer(-5, 5),
                 ke=draw.choice([1, 1, 2, -1]) if element else 0)


def _part(draw, prog):
    kind = draw.choice(["tile", "tile", "tile", "scalar", "unreadable"])
    if kind == "unreadable":  # `%` is not affine: the pass must leave the loop alone
        return f"((AR * 3 + j * j + 1) % 4 > 0)" if not prog.two_d else \
            "((AR[:, None] + AR[None, :]) % 3 > 0)", None
    op = draw.choice(PREDICATES)
    if kind == "scalar":
        lhs, rhs = _index(draw, False), _index(draw, False)
        rhs.ka, rhs.c = 0, 0
        text = f"{lhs.text()} {op} ({rhs.text()} + b)"
    else:
        lhs, rhs = _index(draw, True), _index(draw, draw.choice([False, True]))
        if prog.two_d:
            cols = f"{rhs.text()}[None, :]" if rhs.ke else rhs.text()  # or a scalar
            text = f"{lhs.text()}[:, None] {op} {cols}"
        else:
            text = f"{lhs.text()} {op} {rhs.text()}"
    k = lhs.kj - rhs.kj  # lhs - rhs grows with j by k
    if k == 0 and kind == "tile" and not (lhs.kp or lhs.ka or rhs.kp or rhs.ka):
        prog.constant_part = True
    return text, (k if op in (">", ">=") else -k)


def generate(draw):
    prog = Program(n=draw.choice([4, 8]), step=draw.choice([1, 1, 2, 3]),
                   two_d=draw.choice([False, True]))
    for _ in range(draw.integer(1, 3)):
        prog.parts.append(_part(draw, prog))
    if all(k is None or k == 0 for _, k in prog.parts) and draw.choice([False, True]):
        prog.parts.append(_part(draw, prog))
    return prog


def _settings():
    phases = [Phase.explicit, Phase.reuse, Phase.generate]
    common = dict(max_examples=EXAMPLES, deadline=None, database=None, print_blob=True,
                  phases=phases, suppress_health_check=list(HealthCheck))
    if ROTATING:
        return lambda f: hypothesis_seed(int(ROTATING))(settings(**common)(f))
    return settings(derandomize=True, **common)


def _host_loops(tmp_path, path, n, two_d):
    """The host-stage loops that carry acc and hits (tilec, the CPU target)."""
    shape = f"[{BLOCKS},{n},{n}]" if two_d else f"[{BLOCKS},{n}]"
    ir = run_tilec([path + "::fuzz_kernel", "--args",
                    f"f32{shape}, i32{shape}, i32, i32, i32, i32",
                    "--target", "cpu", "--emit", "host"], tmp_path).stdout
    return len(re.findall(r"%\w+:2 = scf\.for ", ir)), ir


@_settings()
@given(data=st.data())
def test_random_masked_loops_match_numpy(data, tmp_path_factory):
    prog = generate(HypothesisDraw(data))
    source = prog.kernel()
    note(source)
    workdir = str(tmp_path_factory.mktemp("split"))
    kernel = _load_kernel(source, workdir)
    path = os.path.join(workdir, kernel.__module__ + ".py")
    loops, ir = _host_loops(tmp_path_factory.mktemp("tilec"), path, prog.n, prog.two_d)
    expected = prog.expected_loops()
    assert loops == expected or (prog.constant_part and loops == expected - 1 > 0), \
        f"{source}\n--- host IR ---\n{ir}"
    dev = Device()
    shape = (BLOCKS, prog.n, prog.n) if prog.two_d else (BLOCKS, prog.n)
    for _ in range(ARG_SETS):
        lo, hi = data.draw(st.integers(-6, 6)), data.draw(st.integers(-6, 14))
        a, b = data.draw(st.integers(-8, 8)), data.draw(st.integers(-8, 8))
        out, cnt = dev.poisoned(shape, np.float32), dev.poisoned(shape, np.int32)
        kernel[(BLOCKS,)](out, cnt, lo, hi, a, b)
        for p in range(BLOCKS):
            acc, hits = prog.model(lo, hi, a, b, p)
            where = f"{source}\nlo={lo} hi={hi} a={a} b={b} block {p}"
            np.testing.assert_array_equal(dev.get(cnt)[p], hits, err_msg=where)
            np.testing.assert_array_equal(dev.get(out)[p], acc, err_msg=where)


def test_generator_reaches_every_cut():
    """The generated programs include uncut loops, masked heads, masked
    tails and both, in 1-d and 2-d, and unreadable parts."""
    seen = set()
    for seed in range(400):
        prog = generate(SeededDraw(seed))
        compile(prog.kernel(), "<kernel>", "exec")
        prog.model(-2, 9, 3, -1, 1)
        seen.add((prog.expected_loops(), prog.two_d))
        if any(k is None for _, k in prog.parts):
            seen.add("unreadable")
    assert seen >= {(n, d) for n in (1, 2, 3) for d in (False, True)} | {"unreadable"}
