"""Random programs: `generate(seed, index)` is deterministic, so a run is
reproduced from (seed, index) alone."""

import numpy as np

from . import kernelgen as G
from . import numeric as N
from .numeric import BOOL, FLOAT, INT
from .program import Branch, Input, Loop, Program

# Tile dtypes of inputs, with weights: the list first, the cheap rest after.
INPUT_DTYPES = [(N.float32, 6), (N.float16, 4), (N.bfloat16, 3), (N.int32, 4),
                (N.int8, 3), (N.bool_, 2), (N.int64, 1), (N.uint8, 1), (N.int16, 1),
                (N.float64, 1)]
INT_DTYPES = [(d, w) for d, w in INPUT_DTYPES if d.kind != FLOAT]
CAST_DTYPES = [N.float32, N.float16, N.bfloat16, N.int32, N.int8, N.bool_, N.int64,
               N.uint8, N.int16, N.float64]
FLOAT_LITS = [0.5, 2.0, -1.5, 3.0, 0.0, -0.0, 0.1, 100.0, 1e30, 1e-3, 65504.0,
              float("inf"), float("-inf"), float("nan"), 1e-40, -7.25]
INT_LITS = [0, 1, 2, 3, -1, -7, 5, 100, 127, -128, 255, 2 ** 31 - 1, -2 ** 31, 40]
FLOAT_PADS = [float("nan"), float("-inf"), float("inf"), 1.0, -2.5, 0.0, -0.0, 3e38]
INT_PADS = [1, -1, 7, 127]

BINARY_OPS = [("add", 6), ("sub", 5), ("mul", 5), ("truediv", 3), ("floordiv", 3),
              ("mod", 3), ("and", 3), ("or", 3), ("xor", 3), ("lshift", 3),
              ("rshift", 3), ("max", 3), ("min", 3)] + [(c, 1) for c in G.CMPS]
UNARY_OPS = [("neg", 3), ("invert", 2), ("abs", 2), ("floor", 1), ("ceil", 1),
             ("astype", 6)] + [(f, 1) for f in G.FLOAT_FNS]
RUNTIME_STEPS_BELOW_ONE = True
REDUCE_OPS = ["sum", "max", "min", "prod", "argmax", "argmin"]


def _pick(rng, weighted):
    items, w = zip(*weighted)
    w = np.asarray(w, float)
    return items[rng.choice(len(items), p=w / w.sum())]


class Gen:
    def __init__(self, rng, tiles, scalars):
        self.rng = rng
        self.tiles = tiles      # Tile leaves available
        self.scalars = scalars  # Scalar leaves available

    def leaf(self, tile_only=False):
        r = self.rng.random()
        if tile_only or r < 0.6:
            return self.tiles[self.rng.integers(len(self.tiles))]
        if r < 0.75 and self.scalars:
            return self.scalars[self.rng.integers(len(self.scalars))]
        kind = self.rng.random()
        if kind < 0.45:
            return G.Lit(FLOAT_LITS[self.rng.integers(len(FLOAT_LITS))])
        if kind < 0.9:
            return G.Lit(INT_LITS[self.rng.integers(len(INT_LITS))])
        return G.Lit(bool(self.rng.integers(2)))

    def expr(self, depth):
        for _ in range(30):
            try:
                return self._expr(depth)
            except G.Invalid:
                continue
        return self.leaf(tile_only=True)

    def _expr(self, depth):
        rng = self.rng
        if depth <= 0 or rng.random() < 0.2:
            return self.leaf()
        kind = _pick(rng, [("binary", 8), ("unary", 5), ("reduce", 2), ("scan", 1),
                           ("where", 1), ("fma", 1), ("pow", 1)])
        sub = lambda: self.expr(depth - 1)  # noqa: E731
        if kind == "binary":
            op = _pick(rng, BINARY_OPS)
            a, b = sub(), sub()
            if op in ("lshift", "rshift") and rng.random() < 0.6:
                b = G.Lit(int(rng.integers(-1, 70)))
            if rng.random() < 0.5:
                a, b = b, a
            return G.Binary(op, a, b)
        if kind == "unary":
            op = _pick(rng, UNARY_OPS)
            to = CAST_DTYPES[rng.integers(len(CAST_DTYPES))] if op == "astype" else None
            return G.Unary(op, sub(), to)
        if kind == "reduce":
            op = REDUCE_OPS[rng.integers(len(REDUCE_OPS))]
            a = sub()
            axis = [None, 0, 1][rng.integers(3)]
            return G.Reduce(op, a, axis, bool(rng.integers(2)))
        if kind == "scan":
            a = sub()
            return G.Scan(["cumsum", "cumprod"][rng.integers(2)], a,
                          int(rng.integers(max(1, len(a.shape)))))
        if kind == "where":
            c = G.Binary(G.CMPS[rng.integers(6)], sub(), sub())
            return G.Where(c, sub(), sub())
        if kind == "fma":
            return G.Fma(sub(), sub(), sub())
        a = sub()
        e = [G.Lit(int(x)) for x in (0, 1, 2, 3, 4, -1, -2)] + \
            [G.Lit(x) for x in (0.5, 2.0, -1.0)] + [sub()]
        return G.Pow(a, e[rng.integers(len(e))])


def _values(rng, dt, shape):
    """Input data with special values: float64 of dtype-exact floats, or ints."""
    n = int(np.prod(shape))
    if dt.kind == FLOAT:
        v = rng.uniform(-4, 4, n)
        small = rng.random(n) < 0.15
        v[small] = rng.integers(-4, 5, small.sum())
        specials = [0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1.0, N.max_finite(dt),
                    -N.max_finite(dt) / 2, dt.tiny, dt.tiny / 4, 1e30, -1e-30]
        sp = rng.random(n) < 0.12
        v[sp] = np.asarray(specials)[rng.integers(len(specials), size=sp.sum())]
        v = N.round_to(v, N.float32 if dt is N.bfloat16 else dt)
        if dt is N.bfloat16 and rng.random() < 0.7:  # mostly exact bf16 values
            v = N.round_to(v, dt)
        return v.reshape(shape)
    if dt.kind == BOOL:
        return rng.random(shape) < 0.5
    lo, hi = dt.lo, dt.hi
    v = rng.integers(max(lo, -20), min(hi, 20) + 1, n).astype(np.int64)
    wide = rng.random(n) < 0.15
    v[wide] = rng.integers(lo, hi, wide.sum(), endpoint=True, dtype=np.int64)
    sp = rng.random(n) < 0.1
    v[sp] = np.asarray([lo, hi, max(lo, -1), 0, 1])[rng.integers(5, size=sp.sum())]
    return v.astype(dt.np).reshape(shape)


def _padding(rng, dt):
    if rng.random() < 0.35:
        return None
    if dt.kind == FLOAT:
        return FLOAT_PADS[rng.integers(len(FLOAT_PADS))]
    if dt.kind == BOOL:
        return bool(rng.integers(2))
    p = INT_PADS[rng.integers(len(INT_PADS))]
    return p if dt.lo <= p <= dt.hi else 1


def generate(seed, index, features=()):
    """Program `index` of `seed`; features: "if" for runtime `if`/`else`."""
    rng = np.random.default_rng([seed, index])
    shapes = [(r, c) for r in (1, 2, 4, 8, 16) for c in (1, 2, 4, 8, 16) if r * c <= 128]
    R, C = shapes[rng.integers(len(shapes))]
    n = int(rng.integers(1, 3 * R + 1))
    m = int(rng.integers(1, 3 * C + 1))
    inputs = []
    # A quarter of the programs are integer-only: bitwise ops, shifts and
    # integer `//` and `%` get their share.
    dtypes = INPUT_DTYPES if rng.random() < 0.75 else INT_DTYPES
    for k in range(int(rng.integers(1, 4))):
        dt = _pick(rng, dtypes)
        inputs.append(Input(f"x{k}", dt, "full", _padding(rng, dt)))
    for form, name, length in (("row", "v", m), ("col", "u", n)):
        if rng.random() < 0.25:
            dt = _pick(rng, dtypes)
            inputs.append(Input(name, dt, form, _padding(rng, dt)))
    for inp in inputs:
        shape = {"full": (n, m), "row": (m,), "col": (n,)}[inp.form]
        inp.data = _values(rng, inp.dt, shape)
    scalars = []
    for k in range(int(rng.integers(0, 3))):
        kind = rng.random()
        if kind < 0.45:
            value = int([0, 1, 2, 3, -1, 5, 7, 2 ** 31 - 1, -2 ** 31, 2 ** 40][
                rng.integers(10)])
            dt = N.int32 if -2 ** 31 <= value < 2 ** 31 else N.int64
        elif kind < 0.9:
            value = float(N.round_to(np.float64([0.5, -2.0, 1.25, 0.0, -0.0, 3.5, 1e30,
                                                  np.inf, np.nan, 1e-3][rng.integers(10)]),
                                     N.float32))
            dt = N.float32
        else:
            value, dt = bool(rng.integers(2)), N.bool_
        scalars.append((f"s{k}", dt, value))
    tiles = [G.Tile(i.name.upper(), i.dt, {"full": (R, C), "row": (1, C),
                                           "col": (R, 1)}[i.form]) for i in inputs]
    leaves = [G.Scalar(s[0], s[1]) for s in scalars]
    if rng.random() < 0.2:
        tiles.append(G.Arange(C))
    loop = None
    if rng.random() < 0.3:
        acc_dt = [N.float32, N.float16, N.int32, N.bfloat16, N.int8,
                  N.float64][rng.integers(6)]
        init = [0, 1, 2][rng.integers(3)] if acc_dt.kind == INT else \
            [0.0, 0.5, -1.0][rng.integers(3)]
        bounds = []
        # Zero and negative steps are runtime values only: a constant zero is
        # refused at trace time ("tile.range step must not be zero"), while
        # at run time a zero step runs nothing and a negative one counts down
        # as Python's range does (both hung before dfdf018).
        for lo, hi, name in ((-3, 3, "lb0"), (-2, 6, "lb1"), (-2, 3, "lb2")):
            v = int(rng.integers(lo, hi + 1))
            if name == "lb2" and v <= 0 and not RUNTIME_STEPS_BELOW_ONE:
                v = 1
            if rng.random() < 0.4 or (name == "lb2" and v <= 0):  # a runtime bound
                scalars.append((name, N.int32, v))
                bounds.append(name)
            else:
                bounds.append(v)
        loop = Loop(acc_dt, init, tuple(bounds))
        acc = G.Tile("ACC", acc_dt, (R, C))
        body_gen = Gen(rng, tiles + [acc, acc], leaves + [G.Scalar("k", N.int32)])
        loop.body = body_gen.expr(int(rng.integers(1, 4)))
        if loop.body.weak:  # a bare scalar: `.astype` needs a tile
            loop.body = acc
        tiles = tiles + [acc]
    branch = None
    conds = [s for s in scalars if s[1].kind != BOOL]
    if "if" in features and conds and rng.random() < 0.3:
        name, dt, _ = conds[rng.integers(len(conds))]
        lit = int(rng.integers(-1, 4)) if dt.kind == INT else [0.0, 1.0, 0.5][rng.integers(3)]
        branch = Branch(name, G.CMPS[rng.integers(6)], lit,
                        [N.float32, N.float16, N.int32, N.int8][rng.integers(4)])
        g = Gen(rng, tiles, leaves)
        branch.then, branch.other = g.expr(2), g.expr(2)
        if branch.then.weak or branch.other.weak:
            branch = None
        else:
            tiles = tiles + [G.Tile("BR", branch.dt, (R, C))] * 2
    final = Gen(rng, tiles, leaves).expr(int(rng.integers(1, 5)))
    if final.weak:
        final = tiles[0]
    return Program(R, C, n, m, inputs, scalars, final, loop, branch=branch,
                   label=f"seed={seed} index={index}" + "".join(f" +{f}" for f in features))


PROBE = """
import tile


@tile.kernel
def probe(x, s, B: tile.Constant[int]):
    t = tile.load(x, index=(0,), shape=(B,))
    if s > 0:
        t = t + 1.0
    else:
        t = t - 1.0
    tile.store(x, index=(0,), tile=t)
"""


def available_features():
    """The generator's optional features the frontend supports today:
    runtime `if` turns on by itself once it traces."""
    import importlib.util
    import os
    import tempfile
    path = os.path.join(tempfile.mkdtemp(prefix="tile-fuzz-probe-"), "fuzz_probe.py")
    with open(path, "w") as f:
        f.write(PROBE)
    spec = importlib.util.spec_from_file_location("fuzz_probe", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        module.probe.trace(np.zeros(4, np.float32), 3, B=4)
    except Exception:  # noqa: BLE001 - any refusal means "not yet"
        return ()
    return ("if",)
