"""A whole random kernel: inputs, runtime scalars, an optional `tile.range`
loop carrying a tile, the stored expression; its source text, and its
expected output from the model, block by block as the kernel runs."""

import math
from dataclasses import dataclass, field

import numpy as np

from . import kernelgen as G
from . import model as Mo
from . import numeric as N
from .numeric import BOOL, FLOAT

PRELUDE = '''import tile


def _expect(t, name):
    if t.dtype.name != name:
        raise AssertionError(f"the expression's dtype is {t.dtype.name}; the spec gives "
                             f"{name}")
    return t


'''


@dataclass
class Input:
    name: str            # the array parameter; its tile is name.upper()
    dt: N.DT             # the tile's dtype (bfloat16: loaded from float32)
    form: str            # "full" (N, M), "row" (M,) as (1, C), "col" (N,) as (R, 1)
    padding: object      # None (the default 0) or a Python number
    data: np.ndarray = None

    @property
    def array_dt(self):
        return N.float32 if self.dt is N.bfloat16 else self.dt

    @property
    def tile_shape(self):
        return {"full": ("R", "C"), "row": (1, "C"), "col": ("R", 1)}[self.form]


@dataclass
class Loop:
    acc_dt: N.DT
    init: object
    bounds: tuple        # (start, stop, step): ints or scalar parameter names
    body: object = None  # a Node; ACC and k are its leaves


@dataclass
class Branch:
    """`if <scalar> <op> <literal>: BR = then else: BR = other` on a runtime
    scalar (spec v2: Python control flow on runtime values)."""
    scalar: str
    op: str              # one of kernelgen.CMPS
    literal: object
    dt: N.DT             # BR's dtype on both paths
    then: object = None
    other: object = None


@dataclass
class Program:
    R: int
    C: int
    n: int
    m: int
    inputs: list
    scalars: list        # (name, DT, Python value)
    final: object
    loop: Loop = None
    label: str = ""
    notes: list = field(default_factory=list)
    branch: Branch = None

    # -- source -----------------------------------------------------------
    def params(self):
        return [i.name for i in self.inputs] + [s[0] for s in self.scalars] + ["out"]

    def source(self):
        lines = [PRELUDE + "@tile.kernel",
                 f"def fuzz_kernel({', '.join(self.params())}, R: tile.Constant[int], "
                 f"C: tile.Constant[int]):",
                 "    i = tile.bid(0)", "    j = tile.bid(1)"]
        for inp in self.inputs:
            pad = "" if inp.padding is None else f", padding={_pad_src(inp.padding)}"
            if inp.form == "full":
                load = f"tile.load({inp.name}, index=(i, j), shape=(R, C){pad})"
            elif inp.form == "row":
                load = f"tile.load({inp.name}, index=(j,), shape=(C,){pad})[None, :]"
            else:
                load = f"tile.load({inp.name}, index=(i,), shape=(R,){pad})[:, None]"
            if inp.dt is N.bfloat16:
                load += ".astype(tile.bfloat16)"
            lines.append(f"    {inp.name.upper()} = {load}")
        if self.loop:
            lp = self.loop
            lines.append(f"    ACC = tile.full((R, C), {_pad_src(lp.init)}, "
                         f"tile.{lp.acc_dt.name})")
            b = [str(x) for x in lp.bounds]
            rng = b[1] if b[0] == "0" and b[2] == "1" else ", ".join(b)
            lines.append(f"    for k in tile.range({rng}):")
            body = lp.body.src()
            if lp.body.dt is not lp.acc_dt:
                body = f"({body}).astype(tile.{lp.acc_dt.name})"
            if lp.body.shape != (self.R, self.C):
                body = f"tile.broadcast_to({body}, (R, C))"
            lines.append(f"        ACC = {body}")
        if self.branch:
            br = self.branch
            lines.append(f"    if {br.scalar} {G.BINOPS[br.op]} {br.literal!r}:")
            lines.append(f"        BR = {self._as_tile(br.then, br.dt)}")
            lines.append("    else:")
            lines.append(f"        BR = {self._as_tile(br.other, br.dt)}")
        res = f'_expect({self.final.src()}, "{self.final.dt.name}")'
        if self.final.dt is N.bfloat16:
            res += ".astype(tile.float32)"
        lines.append(f"    tile.store(out, index=(i, j), tile=tile.broadcast_to({res}, "
                     f"(R, C)))")
        return "\n".join(lines) + "\n"

    def _as_tile(self, node, dt):
        s = node.src()
        if node.dt is not dt:
            s = f"({s}).astype(tile.{dt.name})"
        if node.shape != (self.R, self.C):
            s = f"tile.broadcast_to({s}, (R, C))"
        return s

    @property
    def out_np(self):
        dt = self.final.dt
        return np.dtype(np.float32) if dt is N.bfloat16 else dt.np

    @property
    def grid(self):
        return (-(-self.n // self.R), -(-self.m // self.C))

    # -- the model --------------------------------------------------------
    def expected(self, sem):
        """The expected output as an MV of shape (n, m)."""
        dt = self.final.dt
        shape = (self.n, self.m)
        nom = np.zeros(shape, dt.np)
        lo = np.zeros(shape) if dt.kind == FLOAT else None
        hi = np.zeros(shape) if dt.kind == FLOAT else None
        unk = np.zeros(shape, bool)
        for bi in range(self.grid[0]):
            for bj in range(self.grid[1]):
                r = self._block(bi, bj, sem).broadcast((self.R, self.C))
                rs = slice(bi * self.R, min((bi + 1) * self.R, self.n))
                cs = slice(bj * self.C, min((bj + 1) * self.C, self.m))
                h, w = rs.stop - rs.start, cs.stop - cs.start
                nom[rs, cs] = r.nom[:h, :w]
                unk[rs, cs] = r.unk[:h, :w]
                if lo is not None:
                    lo[rs, cs] = r.lo[:h, :w]
                    hi[rs, cs] = r.hi[:h, :w]
        return Mo.MV(dt, nom, lo, hi, unk)

    def _block(self, bi, bj, sem):
        env = {"__sem": sem}
        for inp in self.inputs:
            env[inp.name.upper()] = self._load(inp, bi, bj)
        for name, dt, value in self.scalars:
            env[name] = _scalar_mv(dt, value)
        if self.loop:
            lp = self.loop
            acc = Mo.literal(lp.init, lp.acc_dt).broadcast((self.R, self.C))
            acc = Mo.MV(lp.acc_dt, np.array(acc.nom), unk=np.array(acc.unk))
            start, stop, step = (v if isinstance(v, int) else dict(
                (s[0], s[2]) for s in self.scalars)[v] for v in lp.bounds)
            its = range(start, stop, step) if step else ()
            for k in its:
                env["ACC"] = acc
                env["k"] = Mo.MV(N.int32, np.int32(k))
                acc = Mo.cast(lp.body.eval(env), lp.acc_dt).broadcast((self.R, self.C))
            env["ACC"] = acc
        if self.branch:
            br = self.branch
            value = dict((s[0], s[2]) for s in self.scalars)[br.scalar]
            dt = dict((s[0], s[1]) for s in self.scalars)[br.scalar]
            with np.errstate(all="ignore"):
                x, y = (np.asarray(v).astype(dt.np) for v in (value, br.literal))
                taken = {"lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y,
                         "eq": x == y, "ne": x != y}[br.op]
            node = br.then if taken else br.other
            env["BR"] = Mo.cast(node.eval(env), br.dt).broadcast((self.R, self.C))
        return self.final.eval(env)

    def _load(self, inp, bi, bj):
        adt = inp.array_dt
        rows, cols = {"full": (self.R, self.C), "row": (1, self.C),
                      "col": (self.R, 1)}[inp.form]
        pad = Mo.literal(0 if inp.padding is None else inp.padding, adt).nom
        tile = np.full((rows, cols), pad, dtype=np.float64 if adt.kind == FLOAT else adt.np)
        data = inp.data
        if inp.form == "row":
            data = data[None, :]
            r0, c0 = 0, bj * self.C
        elif inp.form == "col":
            data = data[:, None]
            r0, c0 = bi * self.R, 0
        else:
            r0, c0 = bi * self.R, bj * self.C
        part = data[r0:r0 + rows, c0:c0 + cols]
        tile[:part.shape[0], :part.shape[1]] = part
        v = Mo.MV(adt, tile)
        return Mo.cast(v, inp.dt)


def _pad_src(p):
    if isinstance(p, float):
        if math.isnan(p):
            return "tile.nan"
        if math.isinf(p):
            return "tile.inf" if p > 0 else "-tile.inf"
    return repr(p)


def _scalar_mv(dt, value):
    """A runtime scalar argument: ints are i32 (i64 when they need it), floats
    f32, bools bool."""
    if dt.kind == FLOAT:
        return Mo.MV(dt, N.round_to(np.float64(value), dt))
    if dt.kind == BOOL:
        return Mo.MV(dt, np.bool_(value))
    return Mo.MV(dt, np.asarray(value).astype(dt.np))


def arrays_for(prog):
    """The kernel's array arguments as NumPy arrays, in parameter order."""
    out = []
    for inp in prog.inputs:
        a = inp.data
        out.append(np.ascontiguousarray(a.astype(inp.array_dt.np)))
    return out
