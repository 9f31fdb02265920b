"""Random branchy kernels (issue 15): one program tree rendered twice, as a
`tile` kernel and as a plain Python function over NumPy float64 values.

Programs work on 1-D f32 tiles (t*), int scalars (s*, the i32 arguments n*,
the block id `pid`, loop indices i*) and float scalars (g*, the f32
arguments f*), with if/elif/else, conditional expressions, while loops with
a counter bound, `range`/`tile.range` with runtime bounds and steps (zero
and negative included), trace-time `range(k)`, break/continue and an early
store-and-return under runtime conditions, and/or/not, min/max/abs. Every name has one kind (tile, int or
float) for its whole life, and a name first bound in a branch is bound on
every path, so the program is well-typed for the tracer.

Values cannot blow up: tile and float operations do not expand magnitudes
(averages, min/max, where, tanh(a) * b) except by adding literals, and int
assignments are wrapped (`% 7`, a clamp), so loops grow values linearly at
most. The model's float comparisons go through `cmp`, which raises
`Ambiguous` when the operands are so close that float32 rounding could
decide the other way; such an argument set is not used.

`draw` is anything with `integer(lo, hi)`: hypothesis data (shrinks toward
0: every choice lists its simplest option first) or `SeededDraw`."""

import random

import numpy as np

INT, FLOAT, TILE, BOOL = "i", "f", "t", "b"
N_INTS, N_FLOATS, N_TILES = 3, 2, 2  # arguments n0.., f0.., x0..
MAX_DEPTH = 3
MAX_LINES = 40
# A name bound in every branch may be bound after a nested break/continue/
# return (the tracer refused that until 082cda2); False binds it before.
BIND_AFTER_ESCAPE = True


class SeededDraw:
    def __init__(self, seed):
        self.rng = random.Random(seed)

    def integer(self, lo, hi):
        return self.rng.randint(lo, hi)


# -- expressions: (text in the kernel, text in the model, kind) -----------------

class E:
    def __init__(self, k, np_, kind):
        self.k, self.np, self.kind = k, np_, kind


def _lit(v):
    return E(repr(v), repr(v), FLOAT if isinstance(v, float) else INT)


def _call(fn, args, kind):
    """tile.fn(...) in the kernel, T.fn(...) in the model."""
    return E(f"tile.{fn}({', '.join(a.k for a in args)})",
             f"T.{fn}({', '.join(a.np for a in args)})", kind)


def _builtin(fn, args, kind):
    return E(f"{fn}({', '.join(a.k for a in args)})",
             f"{fn}({', '.join(a.np for a in args)})", kind)


def _bin(a, op, b, kind):
    return E(f"({a.k} {op} {b.k})", f"({a.np} {op} {b.np})", kind)


def _scaled(e, factor):
    return E(f"({e.k}) * {factor!r}", f"({e.np}) * {factor!r}", e.kind)


def _cmp(a, op, b):
    if a.kind == INT and b.kind == INT:
        return _bin(a, op, b, BOOL)
    return E(f"({a.k} {op} {b.k})", f"cmp({a.np!s}, {op!r}, {b.np!s})", BOOL)


def _ifexp(c, a, b):
    return E(f"({a.k} if {c.k} else {b.k})", f"({a.np} if {c.np} else {b.np})", a.kind)


class Env:
    """The names readable at a point: kind -> list; `mutable` the ones a
    statement may assign (not arguments, pid, loop indices, counters)."""

    def __init__(self, names, mutable):
        self.names, self.mutable = names, mutable

    def child(self):
        return Env({k: list(v) for k, v in self.names.items()}, set(self.mutable))

    def add(self, name, kind, mutable=True):
        self.names[kind].append(name)
        if mutable:
            self.mutable.add(name)

    def of(self, kind, mutable_only=False):
        return [n for n in self.names[kind] if not mutable_only or n in self.mutable]


class Gen:
    def __init__(self, draw):
        self.d = draw
        self.fresh = 0
        self.size = 0  # lines made so far (of finished statements)
        self.features = set()

    def pick(self, seq):
        return seq[self.d.integer(0, len(seq) - 1)]

    def chance(self, percent):
        return self.d.integer(0, 99) >= 100 - percent

    def name(self, prefix):
        self.fresh += 1
        return f"{prefix}{self.fresh}"

    # -- scalar and tile expressions ------------------------------------------

    def int_leaf(self, env):
        opts = env.of(INT)
        if self.chance(25):
            return _lit(self.pick([2, 0, 1, 3, -1, 5, -2]))
        n = self.pick(opts)
        return E(n, n, INT)

    def int_expr(self, env, depth=2):
        if depth == 0 or not self.chance(55):
            return self.int_leaf(env)
        form = self.d.integer(0, 8)
        a = self.int_expr(env, depth - 1)
        if form <= 1:
            return _bin(a, self.pick(["+", "-"]), self.int_expr(env, depth - 1), INT)
        if form == 2:
            return _bin(_lit(self.pick([2, 3, -1])), "*", a, INT)
        if form == 3:
            self.features.add("int // %")
            return _bin(a, self.pick(["//", "%"]), _lit(self.pick([2, 3, -3])), INT)
        if form == 4:
            self.features.add("min/max")
            return _builtin(self.pick(["min", "max"]), [a, self.int_expr(env, depth - 1)], INT)
        if form == 5:
            self.features.add("abs")
            return _builtin("abs", [a], INT)
        if form == 6:
            self.features.add("ifexp")
            return _ifexp(self.cond(env, 1), a, self.int_expr(env, depth - 1))
        if form == 7:
            self.features.add("min/max")
            return _builtin(self.pick(["min", "max"]),
                            [a, self.int_leaf(env), self.int_leaf(env)], INT)
        return _bin(a, "+", _lit(self.pick([1, 2, -1])), INT)

    def float_leaf(self, env, float_only=False):
        r = self.d.integer(0, 9)
        if r == 0:
            return _lit(self.pick([0.5, 1.5, -0.25, 2.0]))
        if r == 1 and not float_only:
            return self.int_leaf(env)
        n = self.pick(env.of(FLOAT))
        return E(n, n, FLOAT)

    def float_expr(self, env, depth=2):
        """A float-kind scalar: the first operand is always float."""
        if depth == 0 or not self.chance(55):
            return self.float_leaf(env, float_only=True)
        form = self.d.integer(0, 6)
        a = self.float_expr(env, depth - 1)
        other = self.float_expr(env, depth - 1) if self.chance(60) else self.int_expr(env, 1)
        if form <= 1:
            return _scaled(_bin(a, self.pick(["+", "-"]), other, FLOAT), 0.5)
        if form == 2:
            self.features.add("min/max")
            return _builtin(self.pick(["min", "max"]), [a, other], FLOAT)
        if form == 3:
            self.features.add("abs")
            return _builtin("abs", [a], FLOAT) if self.chance(50) else \
                E(f"(-{a.k})", f"(-{a.np})", FLOAT)
        if form == 4:
            self.features.add("ifexp")
            return _ifexp(self.cond(env, 1), a, self.float_expr(env, depth - 1))
        if form == 5:
            return _bin(a, self.pick(["+", "-"]), _lit(self.pick([0.5, 1.0, 0.25])), FLOAT)
        return _bin(a, "*", _lit(self.pick([0.5, -0.75, 0.25])), FLOAT)

    def reduction(self, env, depth):
        self.features.add("reduction")
        t = self.tile_expr(env, depth)
        fn = self.pick(["sum", "max", "min"])
        r = _call(fn, [t], FLOAT)
        return _scaled(r, 0.0625) if fn == "sum" else r

    def tile_leaf(self, env):
        n = self.pick(env.of(TILE))
        return E(n, n, TILE)

    def operand(self, env, depth):
        """What may join a tile: a tile, a scalar or a reduction."""
        r = self.d.integer(0, 9)
        if r <= 4:
            return self.tile_expr(env, depth)
        if r <= 6:
            return self.float_expr(env, 1)
        if r == 7:
            return self.int_leaf(env)
        return self.reduction(env, 0)

    def tile_expr(self, env, depth=2):
        if depth == 0 or not self.chance(60):
            return self.tile_leaf(env)
        form = self.d.integer(0, 8)
        a = self.tile_expr(env, depth - 1)
        if form <= 1:
            return _scaled(_bin(a, self.pick(["+", "-"]), self.operand(env, depth - 1), TILE),
                           0.5)
        if form == 2:
            return _call(self.pick(["maximum", "minimum"]), [a, self.operand(env, depth - 1)],
                         TILE)
        if form == 3:
            return _call("abs", [a], TILE) if self.chance(50) else \
                E(f"(-{a.k})", f"(-{a.np})", TILE)
        if form == 4:
            self.features.add("tile.where")
            c = _cmp(a, self.pick(["<", ">", ">="]), self.operand(env, depth - 1))
            return _call("where", [c, a, self.operand(env, depth - 1)], TILE)
        if form == 5:
            return _bin(_call("tanh", [a], TILE), "*", self.operand(env, depth - 1), TILE)
        if form == 6:
            self.features.add("ifexp")
            return _ifexp(self.cond(env, 1), a, self.tile_expr(env, depth - 1))
        if form == 7:
            return _bin(a, "+", _lit(self.pick([0.5, 1.0, -0.25])), TILE)
        return _bin(a, "*", _lit(self.pick([0.5, -0.75])), TILE)

    def expr(self, env, kind, depth=2):
        return {INT: self.int_expr, FLOAT: self.float_expr, TILE: self.tile_expr}[kind](
            env, depth)

    # -- conditions ---------------------------------------------------------

    def cond(self, env, depth=2):
        form = self.d.integer(0, 9) if depth > 0 else self.d.integer(0, 5)
        op = self.pick(["<", ">", "<=", ">=", "==", "!="])
        if form <= 2:
            return _cmp(self.int_expr(env, 1), op, self.int_expr(env, 1))
        if form <= 4:
            return _cmp(self.float_expr(env, 1), self.pick(["<", ">", "<=", ">="]),
                        self.float_expr(env, 1) if self.chance(70) else self.int_leaf(env))
        if form == 5:
            return _cmp(self.reduction(env, 1), self.pick(["<", ">"]),
                        self.float_leaf(env))
        self.features.add("and/or/not")
        if form == 6:
            c = self.cond(env, depth - 1)
            return E(f"(not {c.k})", f"(not {c.np})", BOOL)
        a, b = self.cond(env, depth - 1), self.cond(env, depth - 1)
        op = self.pick(["and", "or"])
        return E(f"({a.k} {op} {b.k})", f"({a.np} {op} {b.np})", BOOL)

    # -- statements: lists of (kernel line, model line) at an indent ----------

    def assign(self, env, kind, name=None):
        name = name or self.pick(env.of(kind, mutable_only=True))
        e = self.expr(env, kind)
        if kind == INT:
            # ints are wrapped so that loops cannot overflow them
            form = self.d.integer(0, 2)
            if form == 0:
                e = _bin(E(f"({e.k})", f"({e.np})", INT), "%", _lit(7), INT)
            elif form == 1:
                e = _builtin("min", [_builtin("max", [e, _lit(-9)], INT), _lit(9)], INT)
            else:
                e = _builtin("abs", [e], INT)
                e = _bin(e, "%", _lit(11), INT)
        return [(f"{name} = {e.k}", f"{name} = {e.np}")]

    def block(self, env, depth, loops, count):
        lines = []
        for _ in range(count):
            made = self.statement(env, depth, loops)
            self.size += len(made)
            lines += made
        return lines

    def statement(self, env, depth, loops):
        r = self.d.integer(0, 11)
        # compile time grows with the program: fewer compound statements deeper
        # down, none past MAX_LINES
        if depth >= MAX_DEPTH or r <= 3 + depth or self.size >= MAX_LINES:
            if loops and r == 3:
                return self.escape(env, loops)
            if r == 1 and self.chance(25):
                return self.early_return(env)
            if r == 2 and self.chance(40):  # a block-local temporary
                kind = self.pick([TILE, FLOAT, INT])
                v = self.name("v")
                out = self.assign(env, kind, v)
                env.add(v, kind)
                return out
            return self.assign(env, self.pick([TILE, TILE, FLOAT, INT]))
        if r <= 6:
            return self.if_stmt(env, depth, loops)
        if r <= 8:
            return self.for_stmt(env, depth)
        return self.while_stmt(env, depth)

    def escape(self, env, loops):
        kw = self.pick(["break", "continue"])
        self.features.add(kw)
        c = self.cond(env, 1)
        return [(f"if {c.k}:", f"if {c.np}:"), ("    " + kw, "    " + kw)]

    def early_return(self, env):
        """A store of the values so far and a return, under a runtime condition
        (escapes.py lowers it to a flag that also leaves every loop)."""
        self.features.add("return")
        c = self.cond(env, 1)
        final = final_value(env)
        return [(f"if {c.k}:", f"if {c.np}:"),
                (f"    tile.store(out, index=(pid,), tile={final})",
                 f"    return T.broadcast_to({final}, (B,))"),
                ("    return", "    pass")]

    def body(self, env, depth, loops, lo=1, hi=3):
        inner = env.child()
        lines = self.block(inner, depth + 1, loops, self.d.integer(lo, hi))
        return inner, _indent(lines)

    def if_stmt(self, env, depth, loops):
        self.features.add("if")
        n_elif = self.pick([0, 0, 1, 2])
        has_else = self.chance(60) or n_elif > 0
        # a name first bound here, on every path, used after the if
        fresh = None
        if has_else and self.chance(40):
            fresh = (self.name("v"), self.pick([TILE, FLOAT, INT]))
            self.features.add("bound in every branch")
        lines = []
        for k in range(1 + n_elif + has_else):
            if k < 1 + n_elif:
                c = self.cond(env)
                kw = "if" if k == 0 else "elif"
                lines.append((f"{kw} {c.k}:", f"{kw} {c.np}:"))
                if kw == "elif":
                    self.features.add("elif")
            else:
                lines.append(("else:", "else:"))
            inner, body = self.body(env, depth, loops, hi=2)
            if fresh:
                escapes = any(k.strip() in ("break", "continue", "return") for k, _ in body)
                if escapes and not BIND_AFTER_ESCAPE:  # from the names before the body
                    body = _indent(self.assign(env, fresh[1], fresh[0])) + body
                else:
                    body += _indent(self.assign(inner, fresh[1], fresh[0]))
            lines += body
        if fresh:
            env.add(fresh[0], fresh[1])
        return lines

    def loop_bound(self, env, which):
        # a step is never a Constant zero (refused, as in Python): not the
        # index of an unrolled range(k)
        ints = [n for n in env.of(INT) if n.startswith(("n", "pid", "i"))]
        if which == "step":
            ints = [n for n in ints if not n.startswith("i")]
        name = self.pick(ints)
        r = self.d.integer(0, 3)
        if which == "step":
            if r <= 1:
                return _lit(self.pick([1, 2, -1, -2, 3]))
            self.features.add("runtime step")
            return E(name, name, INT) if r == 2 else E(f"(-{name})", f"(-{name})", INT)
        if r == 0:
            return _lit(self.pick([0, 4, -2, 2, 5]) if which == "stop" else
                        self.pick([0, 1, -1, 3]))
        if r == 1:
            return E(name, name, INT)
        if r == 2:
            return _builtin("min", [E(name, name, INT), _lit(4)], INT)
        return _bin(E(name, name, INT), "+", _lit(self.pick([1, 2, -2])), INT)

    def for_stmt(self, env, depth):
        i = self.name("i")
        kind = self.pick(["range", "tile.range", "static"])
        self.features.add(kind)
        if kind == "static":
            head = (f"for {i} in range({self.d.integer(0, 3)}):",) * 2
        else:
            args = [self.loop_bound(env, "start"), self.loop_bound(env, "stop")]
            if self.chance(60):
                args.append(self.loop_bound(env, "step"))
            if kind == "range" and len(args) == 2 and self.chance(50):
                args = args[1:]
            fn = "range" if kind == "range" else "tile.range"
            head = (f"for {i} in {fn}({', '.join(a.k for a in args)}):",
                    f"for {i} in rng({', '.join(a.np for a in args)}):")
        inner = env.child()
        inner.add(i, INT, mutable=False)
        lines = self.block(inner, depth + 1, True, self.d.integer(1, 3))
        return [head] + _indent(lines)

    def while_stmt(self, env, depth):
        self.features.add("while")
        w = self.name("w")
        lim = self.loop_bound(env, "stop")
        lim = _builtin("min", [lim, _lit(4)], INT)
        test = (f"{w} < {lim.k}", f"{w} < {lim.np}")
        if self.chance(60):
            c = self.cond(env, 1)
            test = (f"{test[0]} and {c.k}", f"{test[1]} and {c.np}")
        inner = env.child()
        inner.add(w, INT, mutable=False)
        lines = [(f"{w} = {w} + 1",) * 2]
        lines += self.block(inner, depth + 1, True, self.d.integer(1, 3))
        return [(f"{w} = 0",) * 2, (f"while {test[0]}:", f"while {test[1]}:")] + _indent(lines)


def final_value(env):
    """What a program stores: every tile and (a quarter of) every scalar variable."""
    return " + ".join(env.of(TILE) + [f"{n} * 0.25" for n in env.of(INT) + env.of(FLOAT)
                                      if n in env.mutable])


def _indent(lines):
    return [("    " + k, "    " + m) for k, m in lines]


# -- whole programs ---------------------------------------------------------------

KERNEL = """import tile


@tile.kernel
def fuzz_kernel({tiles}, out, {ints}, {floats}, B: tile.Constant[int]):
    pid = tile.bid(0)
{body}
    tile.store(out, index=(pid,), tile={final})
"""

MODEL = """def fuzz_model(T, rng, cmp, {tiles}, {ints}, {floats}, pid, B):
{body}
    return T.broadcast_to({final}, (B,))
"""


class Program:
    def __init__(self, kernel, model, features):
        self.kernel, self.model, self.features = kernel, model, features

    def model_fn(self):
        scope = {}
        exec(compile(self.model, "<fuzz_model>", "exec"), scope)  # noqa: S102 - our text
        return scope["fuzz_model"]


def generate(draw):
    g = Gen(draw)
    tiles = [f"x{k}" for k in range(N_TILES)]
    ints = [f"n{k}" for k in range(N_INTS)]
    floats = [f"f{k}" for k in range(N_FLOATS)]
    env = Env({INT: ints + ["pid"], FLOAT: list(floats), TILE: []}, set())
    pre = []
    for k in range(N_TILES):
        pre.append((f"t{k} = tile.load(x{k}, index=(pid,), shape=(B,))",
                    f"t{k} = x{k}[pid * B:(pid + 1) * B]"))
        env.add(f"t{k}", TILE)
    pre.append(("t9 = tile.zeros((B,), tile.float32)", "t9 = T.zeros(B)"))
    env.add("t9", TILE)
    # Python numbers and runtime scalars as initial values
    for name, kind, k_init in (("s0", INT, "0"), ("s1", INT, "n0"),
                               ("g0", FLOAT, "0.0"), ("g1", FLOAT, "f0")):
        pre.append((f"{name} = {k_init}",) * 2)
        env.add(name, kind)
    body = g.block(env, 0, False, g.d.integer(1, 5))
    lines = pre + body
    final_k = final_value(env)
    kernel = KERNEL.format(tiles=", ".join(tiles), ints=", ".join(ints),
                           floats=", ".join(floats), final=final_k,
                           body="\n".join("    " + k for k, _ in lines))
    model = MODEL.format(tiles=", ".join(tiles), ints=", ".join(ints),
                         floats=", ".join(floats), final=final_k,
                         body="\n".join("    " + m for _, m in lines))
    return Program(kernel, model, g.features)


# -- the model's runtime -------------------------------------------------------------

class Ambiguous(Exception):
    """float32 rounding could turn this comparison the other way."""


def rng(*args):
    """`range`/`tile.range` as the spec says: a zero step runs no iteration."""
    if len(args) == 3 and args[2] == 0:
        return range(0)
    return range(*args)


def cmp(a, op, b, tol=1e-4):
    """A float comparison of the model. Operands closer than `tol` are a
    tie float32 could break either way, unless they are equal and short
    (a multiple of 2^-16 below 2^7: the arguments f*, literals and what
    averages, min/max and small loops make of them are exact in float32 too)."""
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    scale = 1.0 + np.abs(a64) + np.abs(b64)
    close = np.abs(a64 - b64) <= tol * scale
    with np.errstate(all="ignore"):
        short = (a64 * 65536 == np.round(a64 * 65536)) & (np.abs(a64) < 128)
    if np.any(close & ~((a64 == b64) & short)):
        raise Ambiguous(f"{a!r} {op} {b!r}")
    return {"<": np.less, ">": np.greater, "<=": np.less_equal, ">=": np.greater_equal,
            "==": np.equal, "!=": np.not_equal}[op](a64, b64)


class T:
    """What `tile.` names in the model."""
    # tile.maximum/minimum and the max/min reductions ignore NaNs (cuTile's default)
    maximum, minimum, abs, where, tanh = np.fmax, np.fmin, np.abs, np.where, np.tanh
    sum, max, min = np.sum, np.nanmax, np.nanmin

    @staticmethod
    def zeros(n):
        return np.zeros(n)

    @staticmethod
    def broadcast_to(x, shape):
        return np.broadcast_to(np.asarray(x, np.float64), shape)
