"""Random kernel programs: expression trees typed by the spec's rules, the
kernel source they print as, and their evaluation by the NumPy model.

A program loads 1-3 arrays of shape (N, M) in (R, C) blocks (shapes not
multiples of the tile, each load with its own padding), optionally a row
vector and a column vector, takes runtime scalars, may run a `tile.range`
loop carrying a tile, and stores one expression into `out`. The kernel
checks at trace time that the expression's dtype is the one the spec gives
(`_expect`), so a promotion bug is a mismatch even where the store's cast
would hide it."""

import math

import numpy as np

from . import model as Mo
from . import numeric as N
from . import reductions as Re
from .numeric import BOOL, FLOAT, INT


class Invalid(Exception):
    """The expression is not a valid kernel under the spec."""


# ---------------------------------------------------------------------------
# Expression nodes
# ---------------------------------------------------------------------------

class Node:
    weak = False  # scalars (runtime or literal) are weak operands
    children = ()

    def with_children(self, kids):
        return self


class Tile(Node):
    """A named tile: a loaded input, the loop-carried ACC."""

    def __init__(self, name, dt, shape):
        self.name, self.dt, self.shape = name, dt, shape

    def src(self):
        return self.name

    def eval(self, env):
        return env[self.name]


class Arange(Node):
    """`tile.arange(C)`: the int32 row 0..C-1 (its shape broadcasts as a row)."""

    def __init__(self, c):
        self.c, self.dt, self.shape = c, N.int32, (c,)

    def src(self):
        return "tile.arange(C)"

    def eval(self, env):
        return Mo.MV(N.int32, np.arange(self.c, dtype=np.int32))


class Scalar(Node):
    """A runtime scalar argument or the loop index."""
    weak = True

    def __init__(self, name, dt):
        self.name, self.dt, self.shape = name, dt, ()

    def src(self):
        return self.name

    def eval(self, env):
        return env[self.name]


class Lit(Node):
    weak = True

    def __init__(self, value):
        self.value = value
        self.dt = N.default_of_kind(_pykind(value))
        self.shape = ()

    def src(self):
        v = self.value
        if isinstance(v, float):
            if math.isnan(v):
                return "tile.nan"
            if math.isinf(v):
                return "tile.inf" if v > 0 else "(-tile.inf)"
        return f"({v!r})" if v < 0 or (isinstance(v, float) and math.copysign(1, v) < 0) \
            else repr(v)

    def eval(self, env):
        return Mo.literal(self.value, self.dt)


def _pykind(v):
    return BOOL if isinstance(v, bool) else INT if isinstance(v, int) else FLOAT


def _common(nodes):
    """The spec's promotion: tiles as in PyTorch, scalars weak."""
    tiles = [n.dt for n in nodes if not n.weak]
    if not tiles:
        raise Invalid("no tile operand")
    dt = tiles[0]
    for t in tiles[1:]:
        dt = N.promote(dt, t)
    for n in nodes:
        if n.weak:
            dt = N.weak(n.dt.kind, dt)
    return dt


def _bshape(*shapes):
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise Invalid("shapes do not broadcast") from None


def _fits_literals(nodes, dt):
    for n in nodes:
        if isinstance(n, Lit) and dt.kind == INT and not dt.lo <= int(n.value) <= dt.hi:
            raise Invalid("literal out of range")
        if isinstance(n, Lit) and dt.kind == INT and isinstance(n.value, float) and \
                not float(n.value).is_integer():
            raise Invalid("fractional literal for an integer dtype")


BINOPS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//",
          "mod": "%", "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>",
          "lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
CMPS = ("lt", "le", "gt", "ge", "eq", "ne")


class Binary(Node):
    def __init__(self, op, a, b):
        self.op, self.children = op, (a, b)
        self.cdt = _common([a, b])  # the dtype the operation runs in
        _fits_literals([a, b], self.cdt)
        op_kind = self.cdt.kind
        if op in ("and", "or", "xor", "lshift", "rshift") and op_kind == FLOAT:
            raise Invalid("bitwise op on floats")
        if op_kind == BOOL and op not in ("and", "or", "xor") + CMPS:
            raise Invalid("the spec does not define arithmetic on bools")
        if op in ("max", "min") and op_kind == BOOL:
            raise Invalid("max of bools")
        if op == "truediv" and op_kind != FLOAT:
            self.cdt = N.float32  # `/` on integers gives float32
        self.dt = N.bool_ if op in CMPS else self.cdt
        self.shape = _bshape(a.shape, b.shape)

    def with_children(self, kids):
        return Binary(self.op, *kids)

    def src(self):
        a, b = (c.src() for c in self.children)
        if self.op in ("max", "min"):
            return f"tile.{self.op}imum({a}, {b})"
        return f"({a} {BINOPS[self.op]} {b})"

    def eval(self, env):
        a, b = (c.eval(env) for c in self.children)
        out = Mo.binary(self.op, a, b, self.cdt, env["__sem"])
        # tile-fuse contracts `a * b + c` on both backends; only NVPTX also
        # contracts a product into a subtraction (docs/numerics.md).
        fusing = ("add", "sub") if env["__sem"].backend == "cuda" else ("add",)
        if self.op in fusing and self.cdt.kind == FLOAT:
            for k, c in enumerate(self.children):
                factors = None
                if isinstance(c, Binary) and c.op == "mul" and c.cdt.kind == FLOAT:
                    factors = [Mo.cast(f.eval(env), c.cdt) for f in c.children]
                elif isinstance(c, Pow):  # `x ** n` is a chain of products
                    factors = c.last_factors(env)
                if factors:
                    out = Mo.hull(out, self._fused(env, k, factors, self.children[1 - k]))
        return out

    def _fused(self, env, k, factors, other):
        """`x * y + z` contracted into one fma (docs/numerics.md: tile-fuse
        does so on both backends; NVPTX may contract any mul and add)."""
        x, y = factors
        z = other.eval(env)
        sign = 1.0 if self.op == "add" or k == 0 else -1.0
        zsign = -1.0 if self.op == "sub" and k == 0 else 1.0
        x, y, z = Mo.same_shape([Mo.cast(x, self.cdt), Mo.cast(y, self.cdt),
                                 Mo.cast(z, self.cdt)])
        return Mo.fmap(lambda p, q, r: Mo.exact_fma(p, q, r, sign, zsign), [x, y, z], self.cdt,
                       env["__sem"].fn_slack("fma", self.cdt))


FLOAT_FNS = ("exp", "exp2", "log", "log2", "sqrt", "rsqrt", "sin", "cos", "tanh",
             "erf", "sigmoid")


class Unary(Node):
    def __init__(self, op, a, to=None):
        self.op, self.children, self.to = op, (a,), to
        if a.weak:
            raise Invalid("unary op of a scalar")
        dt = a.dt
        if op == "astype":
            dt = to
        elif op in FLOAT_FNS:
            dt = dt if dt.kind == FLOAT else N.float32
        elif op == "invert":
            if dt.kind == FLOAT:
                raise Invalid("~ on floats")
        elif dt.kind == BOOL:
            raise Invalid(f"{op} on bools")
        self.dt, self.shape = dt, a.shape

    def with_children(self, kids):
        return Unary(self.op, kids[0], self.to)

    def src(self):
        a = self.children[0].src()
        if self.op == "neg":
            return f"(-{a})"
        if self.op == "invert":
            return f"(~{a})"
        if self.op == "astype":
            return f"{a}.astype(tile.{self.to.name})"
        return f"tile.{self.op}({a})"

    def eval(self, env):
        return Mo.unary(self.op, self.children[0].eval(env), self.dt, env["__sem"])


class Pow(Node):
    """`a ** n` with a small constant int n, or `a ** b` of floats."""

    def __init__(self, a, b):
        self.children = (a, b)
        self.dt = _common([a, b])
        if self.dt.kind == BOOL:
            raise Invalid("bool ** ")
        if isinstance(b, Lit) and isinstance(b.value, int) and not isinstance(b.value, bool):
            if self.dt.kind == INT and b.value < 0:
                raise Invalid("negative power of an integer")
            _fits_literals([b], self.dt)  # int8 ** 2147483647 is an error, as in NumPy 2
        elif self.dt.kind != FLOAT:
            raise Invalid("integer ** a runtime exponent")
        self.shape = _bshape(a.shape, b.shape)

    def with_children(self, kids):
        return Pow(*kids)

    def src(self):
        return f"({self.children[0].src()} ** {self.children[1].src()})"

    def _small_exponent(self):
        """n of `x ** n` the frontend multiplies out (|n| <= 64), or None."""
        a, b = self.children
        if not isinstance(b, Lit) or isinstance(b.value, bool):
            return None
        if type(b.value) is int:
            return b.value if abs(b.value) <= 64 else None
        if a.dt.kind == FLOAT and float(b.value).is_integer() and abs(b.value) <= 64:
            return int(b.value)
        return None

    def last_factors(self, env):
        """The factors of the last product of a float `x ** n` (n >= 2), as
        the frontend squares (tile/arith.py `power`): what an add after it
        contracts into an fma with; None for other powers."""
        n = self._small_exponent()
        if n is None or n < 2 or self.dt.kind != FLOAT:
            return None
        sem = env["__sem"]
        base = Mo.cast(self.children[0].eval(env), self.dt)
        result = factors = base_factors = None
        while n:
            if n & 1:
                if result is None:
                    result, factors = base, base_factors
                else:
                    result, factors = Mo.binary("mul", result, base, self.dt, sem), \
                        [result, base]
            n >>= 1
            if n:
                base, base_factors = Mo.binary("mul", base, base, self.dt, sem), [base, base]
        return factors

    def eval(self, env):
        a, b = self.children
        # An int exponent the frontend does not multiply out (a float base
        # and |n| > 64) becomes the tile's dtype first, as in NumPy 2:
        # float32 ** 2147483647 raises to 2147483648.0, an even power
        # (seed 20270150).
        n = self._small_exponent()
        if n is not None and self.dt.kind == FLOAT:
            exp = n
        elif isinstance(b, Lit) and type(b.value) is int and self.dt.kind != FLOAT:
            exp = b.value
        else:
            exp = b.eval(env)
        return Mo.power(a.eval(env), exp, self.dt, env["__sem"])


class Where(Node):
    def __init__(self, c, a, b):
        self.children = (c, a, b)
        if c.dt is not N.bool_ or c.weak:
            raise Invalid("where needs a bool tile condition")
        if a.weak and b.weak:
            raise Invalid("where of two scalars")
        self.dt = _common([a, b])
        _fits_literals([a, b], self.dt)
        self.shape = _bshape(c.shape, a.shape, b.shape)

    def with_children(self, kids):
        return Where(*kids)

    def src(self):
        return "tile.where({}, {}, {})".format(*(c.src() for c in self.children))

    def eval(self, env):
        c, a, b = (k.eval(env) for k in self.children)
        return Mo.where(c, a, b, self.dt)


class Fma(Node):
    def __init__(self, a, b, c):
        self.children = (a, b, c)
        self.dt = _common([a, b, c])
        if self.dt.kind != FLOAT:
            raise Invalid("fma of integers")
        self.shape = _bshape(a.shape, b.shape, c.shape)

    def with_children(self, kids):
        return Fma(*kids)

    def src(self):
        return "tile.fma({}, {}, {})".format(*(c.src() for c in self.children))

    def eval(self, env):
        return Mo.fma(*(k.eval(env) for k in self.children), self.dt, env["__sem"])


class Reduce(Node):
    """tile.<op>(a, axis, keepdims); an axis-1 reduction without keepdims of a
    2-d tile is given its axis back with [:, None] so that it broadcasts."""

    def __init__(self, op, a, axis, keepdims):
        self.op, self.children, self.axis, self.keepdims = op, (a,), axis, keepdims
        if a.weak or len(a.shape) == 0:
            raise Invalid("reduce of a scalar")
        if axis is not None and axis >= len(a.shape):
            raise Invalid("axis out of range")
        if op in ("max", "min", "argmax", "argmin", "prod") and a.dt.kind == BOOL:
            raise Invalid(f"{op} of bools")
        if op in ("argmax", "argmin"):
            self.dt = N.int32
        elif op in ("sum", "prod"):
            self.dt = Re.acc_dtypes(a.dt)[1]
        else:
            self.dt = a.dt
        shape = a.shape
        axes = range(len(shape)) if axis is None else [axis]
        if keepdims:
            self.shape = tuple(1 if i in axes else s for i, s in enumerate(shape))
        else:
            self.shape = tuple(s for i, s in enumerate(shape) if i not in axes)
        self.regrow = not keepdims and axis == 1 and len(shape) == 2
        if self.regrow:
            self.shape = self.shape + (1,)

    def with_children(self, kids):
        return Reduce(self.op, kids[0], self.axis, self.keepdims)

    def src(self):
        args = [self.children[0].src()]
        if self.axis is not None:
            args.append(f"axis={self.axis}")
        if self.keepdims:
            args.append("keepdims=True")
        s = f"tile.{self.op}({', '.join(args)})"
        return s + "[:, None]" if self.regrow else s

    def eval(self, env):
        r = Re.reduce(self.op, self.children[0].eval(env), self.axis, self.keepdims)
        if self.regrow:
            r = _reshape(r, r.shape + (1,))
        return r


class Scan(Node):
    def __init__(self, op, a, axis):
        self.op, self.children, self.axis = op, (a,), axis
        if a.weak or axis >= len(a.shape):
            raise Invalid("scan axis")
        if op == "cumprod" and a.dt.kind == BOOL:
            raise Invalid("cumprod of bools")
        self.dt = Re.acc_dtypes(a.dt)[1]
        self.shape = a.shape

    def with_children(self, kids):
        return Scan(self.op, kids[0], self.axis)

    def src(self):
        return f"tile.{self.op}({self.children[0].src()}, axis={self.axis})"

    def eval(self, env):
        return Re.scan(self.op, self.children[0].eval(env), self.axis)


def _reshape(v, shape):
    r = lambda a: None if a is None else np.reshape(a, shape)  # noqa: E731
    return Mo.MV(v.dt, r(v.nom), r(v.lo), r(v.hi), r(v.unk))


def walk(node):
    yield node
    for c in node.children:
        yield from walk(c)


def size(node):
    return sum(1 for _ in walk(node))
