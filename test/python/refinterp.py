"""A NumPy reference interpreter of the kernel IR the frontend emits, packaged
as a stand-in for `tile._tile` (`pytest --tile-reference`).

It checks what the frontend means, independent of any backend: run the
numerics suite with it to see whether a mismatch is the frontend's IR or a
backend's lowering. Blocks run one after another on host memory (NumPy
arrays), so atomics are trivially atomic. Slow; for small test sizes only.
"""

import ctypes
import math
import re

import numpy as np

_ELEM = {"f16": np.float16, "f32": np.float32, "f64": np.float64, "i1": np.bool_,
         "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64}
_UNSIGNED = {np.dtype(np.int8): np.uint8, np.dtype(np.int16): np.uint16,
             np.dtype(np.int32): np.uint32, np.dtype(np.int64): np.uint64,
             np.dtype(np.bool_): np.bool_}
_HEX_FLOAT = {"f16": np.uint16, "f32": np.uint32, "f64": np.uint64}
_LOC = re.compile(r"\s+loc\(.*\)$")


def _elem(t):
    if t not in _ELEM:
        raise NotImplementedError(f"reference interpreter: element type {t}")
    return np.dtype(_ELEM[t])


def parse_type(t):
    """(shape or None, numpy dtype) of `tensor<4x8xf32>` / `f32`."""
    t = t.strip()
    if t.startswith("tensor<"):
        parts = t[7:-1].split("x")
        return tuple(int(p) for p in parts[:-1]), _elem(parts[-1])
    return None, _elem(t)


class ArrayArg:
    def __init__(self, ptr, shape, strides, dtype):
        self.ptr, self.shape, self.strides, self.dtype = ptr, shape, strides, dtype
        lo = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides)) if all(shape) else 0
        hi = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides)) + 1 if all(shape) else 0
        self.base = lo
        size = max(hi - lo, 0) * dtype.itemsize
        buf = (ctypes.c_char * max(size, 1)).from_address(ptr + lo * dtype.itemsize) \
            if size else bytearray(dtype.itemsize)
        self.flat = np.frombuffer(buf, dtype=dtype, count=max(hi - lo, 0))

    def offsets(self, coords):
        """Element offsets into `flat` and the in-bounds mask."""
        ok = np.ones(np.broadcast(*coords).shape if coords else (), bool)
        off = np.zeros_like(ok, dtype=np.int64)
        for c, n, s in zip(coords, self.shape, self.strides):
            c = np.asarray(c, dtype=np.int64)
            ok = ok & (c >= 0) & (c < n)
            off = off + c * s
        return np.where(ok, off - self.base, 0), ok


class ArrayView:
    """tile.array_slice / tile.raw_view of an array: the parent's memory with
    an origin moved by `origin` elements, other extents and strides."""

    def __init__(self, parent, origin, shape, strides):
        self.flat, self.dtype = parent.flat, parent.dtype
        self.base = parent.base - origin
        self.shape, self.strides = shape, strides

    def offsets(self, coords):
        off, ok = ArrayArg.offsets(self, coords)
        ok = ok & (off >= 0) & (off < len(self.flat))  # a raw view has no extent
        return np.where(ok, off, 0), ok


# -- parsing ---------------------------------------------------------------------

class Op:
    __slots__ = ("results", "text", "regions")

    def __init__(self, results, text):
        self.results, self.text, self.regions = results, text, []


def _parse_block(lines, i):
    """Ops until a closing `}`; returns (args, ops, index after the `}`, tail)."""
    ops, args = [], []
    while i < len(lines):
        line = _LOC.sub("", lines[i].strip())
        i += 1
        if not line:
            continue
        if line.startswith("}"):
            return args, ops, i, line[1:].strip()
        if line.startswith("^bb0("):
            args = [a.split(":")[0].strip() for a in line[5:-2].split(",")]
            continue
        m = re.match(r"^(%[\w]+)(?::(\d+))? = (.*)$", line)
        if m:
            name, n, text = m.group(1), m.group(2), m.group(3)
            results = [f"{name}#{k}" for k in range(int(n))] if n else [name]
        else:
            results, text = [], line
        op = Op(results, text)
        if text.endswith("{"):
            op.text = text[:-1].strip()
            tail = "{"
            while tail.endswith("{"):  # `} else {`, `} do {`: one more region
                rargs, rops, i, tail = _parse_block(lines, i)
                op.regions.append((rargs, rops))
            op.text += " " + tail if tail else ""
        ops.append(op)
    return args, ops, i, ""


def parse_module(ir):
    lines = ir.splitlines()
    for k, line in enumerate(lines):
        if "func.func" in line:
            head = line
            body_start = k + 1
            break
    m = re.match(r"\s*func\.func @\"?([\w.$-]+)\"?\((.*)\) attributes", head)
    name, params = m.group(1), m.group(2)
    args = []
    for p in re.finditer(r"(%[\w.]+): (!tile\.array<[^>]*>|\w+)", params):
        args.append((p.group(1), p.group(2)))
    _, ops, _, _ = _parse_block(lines, body_start)
    return name, args, ops


# -- evaluation -------------------------------------------------------------------

def _float_const(lit, et):
    if lit.startswith("0x"):
        bits = np.array([int(lit, 16)], dtype=_HEX_FLOAT[et])
        return bits.view(_elem(et))[0]
    return _elem(et).type(float(lit))


def _const(lit, et):
    if lit in ("true", "false"):
        return np.bool_(lit == "true")
    if et.startswith("f"):
        return _float_const(lit, et)
    return np.array(int(lit)).astype(_elem(et))[()]


def _as_unsigned(v):
    v = np.asarray(v)
    return v.view(_UNSIGNED[v.dtype]) if v.dtype in _UNSIGNED else v


def _like(v, ref):
    return np.asarray(v).astype(np.asarray(ref).dtype)


def _floordiv(a, b):
    return np.floor_divide(a, b)


def _ceildiv(a, b):
    return -np.floor_divide(-a, b)


def _trunc_rem(a, b):
    return np.fmod(a, b)


def _trunc_div(a, b):
    """arith.divsi rounds toward zero (C), floor_divide toward -inf."""
    return np.floor_divide(a - np.fmod(a, b), b)


_BIN = {
    "arith.addf": np.add, "arith.subf": np.subtract, "arith.mulf": np.multiply,
    "arith.divf": np.divide, "arith.remf": np.fmod, "arith.addi": np.add,
    "arith.subi": np.subtract, "arith.muli": np.multiply,
    "arith.floordivsi": _floordiv, "arith.ceildivsi": _ceildiv, "arith.remsi": _trunc_rem,
    "arith.divsi": _trunc_div,
    "arith.andi": np.bitwise_and, "arith.ori": np.bitwise_or, "arith.xori": np.bitwise_xor,
    "arith.shli": np.left_shift, "arith.shrsi": np.right_shift,
    "arith.maximumf": np.maximum, "arith.minimumf": np.minimum,
    "arith.maxsi": np.maximum, "arith.minsi": np.minimum,
    "math.powf": np.power, "math.ipowi": np.power, "math.copysign": np.copysign,
    "arith.maxnumf": np.fmax, "arith.minnumf": np.fmin, "math.atan2": np.arctan2,
}
_UBIN = {"arith.divui": np.floor_divide, "arith.remui": np.remainder,
         "arith.shrui": np.right_shift, "arith.maxui": np.maximum,
         "arith.minui": np.minimum, "arith.ceildivui": _ceildiv}
_UN = {"math.exp": np.exp, "math.exp2": np.exp2, "math.log": np.log, "math.log2": np.log2,
       "math.sqrt": np.sqrt, "math.rsqrt": lambda v: 1 / np.sqrt(v), "math.sin": np.sin,
       "math.cos": np.cos, "math.tan": np.tan, "math.tanh": np.tanh, "math.sinh": np.sinh,
       "math.cosh": np.cosh, "math.absf": np.abs, "math.absi": np.abs,
       "math.floor": np.floor, "math.ceil": np.ceil, "arith.negf": np.negative,
       "math.erf": np.vectorize(math.erf, otypes=[np.float64])}
_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
        "gt": np.greater, "ge": np.greater_equal}  # by the predicate's last two letters


def _cmpf(pred, a, b):
    """o* predicates are false on a NaN operand, u* true; uno/ord test NaN alone."""
    with np.errstate(all="ignore"):
        nan = np.isnan(a) | np.isnan(b)
        if pred in ("uno", "ord"):
            return nan if pred == "uno" else ~nan
        r = _CMP[pred[1:]](a, b)
        return r | nan if pred[0] == "u" else r & ~nan


class Interp:
    def __init__(self, ir):
        self.name, self.params, self.ops = parse_module(ir)

    def run(self, grid, args):
        env0, it = {}, iter(args)
        for name, t in self.params:
            if t.startswith("!tile.array"):
                m = re.match(r"!tile\.array<((?:\?x)*)(\w+)", t)
                rank, et = m.group(1).count("?"), m.group(2)
                ptr = next(it)
                shape = tuple(next(it) for _ in range(rank))
                strides = tuple(next(it) for _ in range(rank))
                env0[name] = ArrayArg(ptr, shape, strides, _elem(et))
            else:
                env0[name] = _elem(t).type(next(it))
        for z in range(grid[2]):
            for y in range(grid[1]):
                for x in range(grid[0]):
                    self.bids, self.grid = (x, y, z), grid
                    self.block(self.ops, dict(env0))

    def block(self, ops, env):
        for op in ops:
            out = self.op(op, env)
            if out is _YIELD:
                return env["__yield"]
            if op.results:
                vals = out if len(op.results) > 1 else [out]
                for r, v in zip(op.results, vals):
                    env[r] = v
        return None

    def op(self, op, env):
        text = op.text
        name = text.split(" ", 1)[0].split("(", 1)[0]
        rest = text[len(name):].strip()
        v = lambda tok: env[tok.strip()]  # noqa: E731
        if name == "arith.constant":
            m = re.match(r"(?:dense<(.*?)>|(\S+))\s*(?::\s*(.*))?$", rest)
            lit = m.group(1) or m.group(2)
            ty = m.group(3) or "i1"
            shape, dt = parse_type(ty)
            et = ty[7:-1].split("x")[-1] if shape is not None else ty
            if lit.startswith("["):  # dense<[[1.0, 2.0], [0x7C00, -0.0]]>
                items = re.findall(r"[^\s,\[\]]+", lit)
                return np.array([_const(t, et) for t in items], dt).reshape(shape)
            c = _const(lit, et)
            return np.full(shape, c, dtype=dt) if shape is not None else c
        if name in _BIN or name in _UBIN:
            a, b = [s.strip() for s in rest.split(":")[0].split(",")]
            A, B = v(a), v(b)
            if name in _UBIN:
                r = _UBIN[name](_as_unsigned(A), _as_unsigned(B))
                return _like(r, A) if np.asarray(A).dtype != np.bool_ else r
            with np.errstate(all="ignore"):
                return _like(_BIN[name](A, B), A)
        if name in _UN:
            with np.errstate(all="ignore"):
                a = v(rest.split(":")[0])
                return _like(_UN[name](a), a)
        if name == "math.fma":
            a, b, c = [v(s) for s in rest.split(":")[0].split(",")]
            return _like(np.asarray(a, np.float64) * b + c, a)
        if name in ("arith.cmpf", "arith.cmpi"):
            pred, a, b = [s.strip() for s in rest.split(":")[0].split(",")]
            A, B = v(a), v(b)
            if name == "arith.cmpf":
                return _cmpf(pred, A, B)
            if pred.startswith("u"):
                A, B = _as_unsigned(A), _as_unsigned(B)
            return _CMP[pred[-2:]](A, B)
        if name == "arith.select":
            c, a, b = [v(s) for s in rest.split(":")[0].split(",")]
            return np.where(c, a, b).astype(np.asarray(a).dtype)
        if name in ("arith.extf", "arith.truncf", "arith.extsi", "arith.trunci",
                    "arith.sitofp", "arith.fptosi", "arith.extui", "arith.uitofp",
                    "arith.fptoui"):
            src, _, dst = rest.partition(" to ")
            a = v(src.split(":")[0])
            _, dt = parse_type(dst)
            if name in ("arith.extui", "arith.uitofp"):
                a = _as_unsigned(a)
            if name == "arith.fptoui":
                return np.asarray(a).astype(np.uint64).astype(dt)
            with np.errstate(all="ignore"):
                return np.asarray(a).astype(dt)
        if name == "arith.bitcast":
            src, _, dst = rest.partition(" to ")
            r = np.asarray(v(src.split(":")[0])).view(parse_type(dst)[1])
            return r if r.ndim else r[()]
        if name == "tile.bid":
            return np.int32(self.bids[int(rest)])
        if name == "tile.num_blocks":
            return np.int32(self.grid[int(rest)])
        if name in ("tile.dim", "tile.stride"):
            a, d = rest.split(":")[0].split(",")
            arr = v(a)
            return np.int32((arr.shape if name == "tile.dim" else arr.strides)[int(d)])
        if name == "tile.array_select":  # the index clamped into the list
            index, *arrays = [x.strip() for x in rest.split(":")[0].split(",")]
            return v(arrays[min(max(int(v(index)), 0), len(arrays) - 1)])
        if name == "tile.array_slice":
            m = re.match(r"(%[\w.]+)\[(\d+)\] (%\w+), (%\w+)", rest)
            arr, axis = v(m.group(1)), int(m.group(2))
            n = arr.shape[axis]
            lo = min(max(int(v(m.group(3))), 0), n)
            hi = min(max(int(v(m.group(4))), lo), n)
            shape = list(arr.shape)
            shape[axis] = hi - lo
            return ArrayView(arr, lo * arr.strides[axis], tuple(shape), arr.strides)
        if name == "tile.raw_view":
            return ArrayView(v(rest.split(":")[0].strip()), 0, (1 << 62,), (1,))
        if name == "tensor.extract":
            return v(rest.split("[")[0])[()]
        if name == "tile.splat":
            s, ty = rest.split(":", 1)
            shape, dt = parse_type(ty)
            return np.full(shape, v(s), dtype=dt)
        if name == "tile.iota":
            shape, dt = parse_type(rest.split(":", 1)[1])
            return np.arange(shape[0], dtype=dt)
        if name in ("tile.broadcast", "tile.reshape", "tile.expand_dims", "tile.permute"):
            operand, ty = rest.split(":", 1)
            shape, _ = parse_type(ty.split("->")[1])
            a = v(operand.split(",")[0])
            if name == "tile.broadcast":
                return np.broadcast_to(a, shape).copy()
            if name == "tile.permute":
                perm = [int(p) for p in re.search(r"\[(.*)\]", operand).group(1).split(",")]
                return np.transpose(a, perm).copy()
            return np.reshape(a, shape).copy()
        if name == "tile.load":
            return self.load(rest, env)
        if name == "tile.store":
            return self.store(rest, env)
        if name in ("tile.gather", "tile.scatter", "tile.atomic_rmw", "tile.atomic_cas"):
            return self.element(name, rest, env)
        if name == "tile.mma":
            a, b, c = [v(s) for s in rest.split(":")[0].replace("{allow_tf32}", "").split(",")]
            r = np.matmul(np.asarray(a, np.float64), np.asarray(b, np.float64)) + c
            return r.astype(np.asarray(c).dtype)
        if name in ("tile.reduce", "tile.scan"):
            return self.region_op(name, rest, op, env)
        if name == "scf.for":
            return self.loop(rest, op, env)
        if name == "scf.if":
            return self.if_(rest, op, env)
        if name == "scf.while":
            return self.while_(rest, op, env)
        if name in ("scf.yield", "tile.yield", "scf.condition"):
            if name == "scf.condition":  # `(%c) %a, %b : types`: [c, a, b]
                cond, _, rest = rest[1:].partition(")")
                rest = cond + ("," + rest if rest.split(":")[0].strip() else "")
            vals = rest.split(":")[0]
            env["__yield"] = [v(s) for s in vals.split(",")] if vals.strip() else []
            return _YIELD
        if name in ("return", "tile.print", "tile.assert", "tile.grid_dependency_control"):
            return None
        raise NotImplementedError(f"reference interpreter: {name}")

    def _indices(self, rest, env):
        arr = env[rest.split("[")[0].strip()]
        idx = [env[s.strip()] for s in rest.split("[")[1].split("]")[0].split(",") if s.strip()]
        return arr, idx

    def load(self, rest, env):
        arr, idx = self._indices(rest, env)
        shape, dt = parse_type(rest.rsplit("->", 1)[1])
        order = re.search(r"order = array<i64: ([\d, ]+)>", rest)
        order = [int(o) for o in order.group(1).split(",")] if order else list(range(len(shape)))
        block = [0] * len(shape)
        for i, p in enumerate(order):
            block[p] = shape[i]
        pad = re.search(r"padding = (\S+) : (\w+)", rest)
        padv = _const(pad.group(1), pad.group(2)) if pad else 0
        coords = np.meshgrid(*[int(i) * b + np.arange(b) for i, b in zip(idx, block)],
                             indexing="ij")
        off, ok = arr.offsets(coords)
        t = np.where(ok, arr.flat[off], padv).astype(dt)
        return np.transpose(t, order).copy()

    def store(self, rest, env):
        arr, idx = self._indices(rest, env)
        val = env[re.sub(r"\{.*\}", "", rest.split("],", 1)[1].split(" : ")[0]).strip()]
        shape = np.shape(val)
        coords = np.meshgrid(*[int(i) * b + np.arange(b) for i, b in zip(idx, shape)],
                             indexing="ij")
        off, ok = arr.offsets(coords)
        arr.flat[off[ok]] = np.asarray(val)[ok]

    def element(self, name, rest, env):
        kind = None
        if name == "tile.atomic_rmw":
            kind, rest = rest.split(" ", 1)
        arr, idx = self._indices(rest, env)
        after = re.sub(r"\{.*\}", "", rest.split("]", 1)[1].split(" : ")[0])
        toks = dict(re.findall(r"(mask|other) (%\w+)", after))
        vals = [s.strip() for s in re.sub(r"(mask|other) %\w+", "", after).split(",")
                if s.strip()]
        off, ok = arr.offsets(idx)
        if "mask" in toks:
            ok = ok & env[toks["mask"]]
        if name == "tile.gather":
            other = env[toks["other"]] if "other" in toks else 0
            shape, dt = parse_type(rest.rsplit("->", 1)[1])
            return np.where(ok, arr.flat[off], other).astype(dt)
        value = np.broadcast_to(env[vals[-1]], off.shape)
        if name == "tile.scatter":
            arr.flat[off[ok]] = value[ok]
            return None
        old = np.zeros(off.shape, arr.dtype)
        cmp = np.broadcast_to(env[vals[0]], off.shape) if name == "tile.atomic_cas" else None
        for k in zip(*np.nonzero(ok)) if off.ndim else ([()] if ok else []):
            o = off[k]
            cur = arr.flat[o]
            old[k] = cur
            new = value[k]
            if name == "tile.atomic_cas":
                arr.flat[o] = new if cur == cmp[k] else cur
            elif kind == "add":
                arr.flat[o] = cur + new
            elif kind == "max":
                arr.flat[o] = max(cur, new)
            elif kind == "min":
                arr.flat[o] = min(cur, new)
            elif kind in ("umax", "umin"):  # signless bits compared as unsigned
                bits = (1 << (8 * arr.dtype.itemsize)) - 1
                pick = max if kind == "umax" else min
                arr.flat[o] = cur if pick(int(cur) & bits, int(new) & bits) == (int(cur) & bits) \
                    else new
            elif kind == "xchg":
                arr.flat[o] = new
            elif kind == "and":
                arr.flat[o] = cur & new
            elif kind == "or":
                arr.flat[o] = cur | new
            elif kind == "xor":
                arr.flat[o] = cur ^ new
        return old

    def region_op(self, name, rest, op, env):
        srcs = [env[s.strip()] for s in rest[rest.index("(") + 1:rest.index(")")].split(",")]
        axis = int(re.search(r"axis = (\d+)", rest).group(1))
        args, ops = op.regions[0]
        n = len(srcs)

        def combine(acc, new):
            e = dict(env)
            for a, val in zip(args, list(acc) + list(new)):
                e[a] = val
            return self.block(ops, e)

        moved = [np.moveaxis(np.asarray(s), axis, 0) for s in srcs]
        length = moved[0].shape[0]
        order = range(length - 1, -1, -1) if "reverse" in rest else range(length)
        acc, outs = None, [np.empty_like(m) for m in moved]
        for k in order:
            cur = [m[k] for m in moved]
            acc = cur if acc is None else combine(acc, cur)
            acc = [np.asarray(a).astype(m.dtype) for a, m in zip(acc, moved)]
            for o, a in zip(outs, acc):
                o[k] = a
        if name == "tile.reduce":
            res = [np.asarray(a) for a in acc]
        else:
            res = [np.moveaxis(o, 0, axis) for o in outs]
        return res if n > 1 else res[0]

    def loop(self, rest, op, env):
        m = re.match(r"(%\w+) = (%[\w#]+) to (%[\w#]+) step (%[\w#]+)"
                     r"(?: iter_args\((.*)\) -> \(.*\))?", rest)
        iv, lb, ub, st = m.group(1), *(int(env[g]) for g in m.group(2, 3, 4))
        pairs = [p.split("=") for p in m.group(5).split(", ")] if m.group(5) else []
        names = [a.strip() for a, _ in pairs]
        vals = [env[b.strip()] for _, b in pairs]
        _, ops = op.regions[0]
        for i in range(lb, ub, st):
            e = dict(env)
            e[iv] = np.int32(i)
            e.update(zip(names, vals))
            out = self.block(ops, e)
            if names:
                vals = out
        return self._results(vals)

    @staticmethod
    def _results(vals):
        return vals if len(vals) != 1 else vals[0]

    def if_(self, rest, op, env):
        cond = env[rest.split()[0]]
        if bool(cond):
            region = op.regions[0]
        elif len(op.regions) > 1:
            region = op.regions[1]
        else:
            return []  # no else region: the op has no results
        out = self.block(region[1], dict(env))
        return self._results(out or [])

    def while_(self, rest, op, env):
        init = re.match(r"(?:\((.*?)\))?\s*:", rest).group(1) or ""  # `scf.while : () -> ()`
        pairs = [p.split("=") for p in init.split(",")] if init.strip() else []
        names = [a.strip() for a, _ in pairs]
        vals = [env[b.strip()] for _, b in pairs]
        (bargs, before), (aargs, after) = op.regions
        while True:
            e = dict(env)
            e.update(zip(bargs or names, vals))
            cond, *fwd = self.block(before, e)
            if not bool(cond):
                return self._results(fwd)
            e = dict(env)
            e.update(zip(aargs, fwd))
            vals = self.block(after, e) or []


_YIELD = object()
_MAX_GRID = (2**31 - 1, 65535, 65535)  # CUDA's, applied by every backend


class RefKernel:
    def __init__(self, ir, target, options):
        self.interp = Interp(ir)
        self.name = self.interp.name
        self.target = target
        self.num_warps = options.get("num_warps", 0)
        self.shared_mem = 0
        self.asm = {"tile": ir}

    def launch(self, grid, args, stream=0):
        # _tile's own check (Kernel.h gridError): without it a grid that
        # reaches the binary unchecked would be interpreted block by block.
        for axis, n, limit in zip("xyz", grid, _MAX_GRID):
            if n < 0 or n > limit:
                why = "below 0" if n < 0 else f"above its limit of {limit} blocks"
                raise RuntimeError(f"grid dimension {axis} is {n}, {why}")
        self.interp.run(grid, args)


class RefTile:
    """A `_tile` that interprets: CPU only."""

    class CompileError(Exception):
        pass

    def compile(self, ir, target, options):
        return RefKernel(ir, target, options)

    def cuda_device_count(self):
        return 0
