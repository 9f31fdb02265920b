"""`tile.range` device loops, and the runtime the rewritten source calls
(`__tile_rt.for_`, `__tile_rt.call`, see rewrite.py).

A device loop is traced once into `scf.for`. Which names are loop-carried,
and with which types, is found by probing: the body is traced into a scratch
block that is thrown away, with the names' values before the loop; every name
whose value the body replaces with a traced value (or a different number)
becomes an `iter_args` entry typed like the body's result. The probe repeats
with placeholders of those types until the types stop changing (normally
once), then the body is traced for real.
"""

import builtins
import re
import sys
import types

from . import dtypes as D
from .arith import to_i32_scalar
from . import global_watch, ir
from .errors import TileTypeError, user_location
from .language import Scalar, Tile, Value, broadcast_shapes, materialize
from .rewrite import UNDEF, grab, rewritten

# grab, kernel_return: for rewritten code
__all__ = ["range", "static_iter", "call", "for_", "while_", "if_", "ifexp", "and_", "or_",
           "not_", "unsupported", "raised", "grab", "kernel_return", "returned", "UNDEF", "RUNTIME"]

_MAX_PROBES = 6


class range:
    """`for k in tile.range(stop)` / `tile.range(start, stop, step=1)`: a device
    loop (`scf.for` over i32), traced once, not unrolled."""

    __slots__ = ("start", "stop", "step")

    def __init__(self, start, stop=None, step=1):
        if stop is None:
            start, stop = 0, start
        self.start, self.stop, self.step = start, stop, step

    def __iter__(self):
        if ir.current() is None and all(isinstance(x, int) for x in
                                        (self.start, self.stop, self.step)):
            return iter(builtins.range(self.start, self.stop, self.step))
        raise TileTypeError(
            "this tile.range loop could not be traced: device loops must be written "
            "in the kernel or in a plain (undecorated) helper function whose source "
            "Python can read, and cannot use break, continue, return or for-else",
            "restructure the loop body with tile.where / masks instead of break")

    def __repr__(self):
        return f"tile.range({self.start}, {self.stop}, {self.step})"


def call(f, *args, **kwargs):
    """Calls from rewritten code: plain helpers are rewritten too while tracing,
    and the builtins that meet runtime values (range, min, max) trace them."""
    if ir.current() is not None:
        hook = _BUILTIN_HOOKS.get(f) if _hashable(f) else None
        if hook is not None and any(
                isinstance(a, Value) or (f is builtins.print and isinstance(a, str)
                                         and _TRACED_TEXT in a) for a in _flat_args(args)):
            return hook(*args, **kwargs)
        if type(f) is _FunctionType:
            global_watch.record(f)
            g = rewritten(f, RUNTIME)
            if g is not None:
                return g(*args, **kwargs)
    return f(*args, **kwargs)


def _hashable(f):
    try:
        hash(f)
        return True
    except TypeError:
        return False


def _flat_args(args):
    if len(args) == 1 and type(args[0]) in (list, tuple):
        return args[0]
    return args


def _fold(op, args, kwargs, name):
    from . import ops
    items = list(_flat_args(args))
    if kwargs or not items:
        raise TileTypeError(f"{name}() of runtime values takes the values only "
                            "(no key= or default=)")
    fn = ops.minimum if op == "min" else ops.maximum
    out = items[0]
    for x in items[1:]:
        out = fn(out, x)
    return out


def _min(*args, **kwargs):
    return _fold("min", args, kwargs, "min")


def _max(*args, **kwargs):
    return _fold("max", args, kwargs, "max")


def _range(*args):
    return range(*args)


def _print(*args, **kwargs):
    from . import debug
    return debug.print(*args, **kwargs)


_BUILTIN_HOOKS = {builtins.min: _min, builtins.max: _max, builtins.range: _range,
                  builtins.print: _print}
# print prints on the device when it shows a traced value (f-strings too);
# otherwise it is Python's, at trace time.
_TRACED_TEXT = "\u27e6tile#"


_FunctionType = type(call)


def returned(value):
    """A function's value at its end (escapes.py): None if no return ran."""
    return None if value is UNDEF else value


def kernel_return(value):
    """Every `return value` of a kernel's body: notes where a value is
    returned (a kernel must not; an inlined kernel may), for the error."""
    if value is not None:
        b = ir.current()
        if b is not None:
            b.returned_at = user_location()
    return value


def for_(iterable, body, init, names, live, brk=None):
    """Every rewritten `for`: a Python loop, or a device loop for tile.range;
    `brk` is the index of the loop's break flag in `names` (escapes.py)."""
    if isinstance(iterable, static_iter):
        iterable = iterable.items
    elif isinstance(iterable, range) and ir.current() is not None:
        if brk is not None:
            return whiles.range_with_break(iterable, body, init, names, live, brk)
        return _device_loop(iterable, body, init, names, live)
    if brk is not None:
        return whiles.python_loop_with_break(iterable, body, init, names, live, brk)
    vals = init
    for item in iterable:
        vals = body(item, *vals)
    return vals


class static_iter:
    """`for x in tile.static_iter(iterable)`: unrolled while tracing (a
    tile.range over constants too), never a device loop."""

    __slots__ = ("items",)

    def __init__(self, iterable):
        if isinstance(iterable, range):
            bounds = (iterable.start, iterable.stop, iterable.step)
            if not all(isinstance(x, int) for x in bounds):
                raise TileTypeError("tile.static_iter needs constant bounds",
                                    "use tile.range(...) for a device loop")
            iterable = builtins.range(*bounds)
        self.items = iterable

    def __iter__(self):
        return iter(self.items)


# ---------------------------------------------------------------------------
# Values as trees of leaves (so tuples/lists of tiles can be carried too)
# ---------------------------------------------------------------------------

def _flatten(x, leaves):
    if type(x) in (tuple, list):
        return (type(x), [_flatten(e, leaves) for e in x])
    leaves.append(x)
    return None


def _unflatten(tree, it):
    if tree is None:
        return next(it)
    typ, kids = tree
    return typ(_unflatten(k, it) for k in kids)


def _is_number(x):
    return isinstance(x, (bool, int, float))


def _type_of(v):
    """(shape or None, dtype) of a traced value; Python numbers are weak."""
    if isinstance(v, Tile):
        return (v.shape, v.dtype)
    if isinstance(v, Scalar):
        return (None, v.dtype)
    return (None, D.default_of_kind(D.python_kind(v)))


def _join(init, out):
    """The carried type for a value that enters as `init` and leaves as `out`."""
    si, di = _type_of(init) if init is not UNDEF else (None, None)
    so, do = _type_of(out)
    shape = None if si is None and so is None else broadcast_shapes(si or (), so or ())
    if isinstance(init, Tile) and isinstance(out, Tile):
        dtype = D.promote(di, do)
    elif isinstance(init, Value) and not isinstance(out, Value):
        dtype = di
    else:
        dtype = do
    return (shape, dtype)


# Leaf decisions: SAME keeps the value before the loop, OUT takes the body's
# (trace-time Python values), a (shape, dtype) tuple is carried.
SAME, OUT, DROP = "same", "out", "drop"


def _decide(name, inp, out, init, live, prev):
    """The spec of one name after a probe: None (unchanged), DROP, OUT, or
    (tree, [leaf decisions])."""
    if out is inp:
        return prev
    out_leaves = []
    tree = _flatten(out, out_leaves)
    traced = any(isinstance(v, Value) for v in out_leaves)
    if init is UNDEF:
        if not traced:
            return OUT
        if not live:
            return DROP
        return (tree, [_type_of(v) if isinstance(v, Value) else OUT for v in out_leaves])
    in_leaves = []
    in_tree = _flatten(inp, in_leaves)
    prev_leaves = prev[1] if isinstance(prev, tuple) else [SAME] * len(in_leaves)
    if in_tree != tree:
        if traced:
            raise TileTypeError(f"loop-carried variable '{name}' changes its structure in "
                                "the tile.range loop body",
                                "keep tuples/lists of tiles the same length and nesting")
        return OUT
    leaves = []
    for i, o, p in zip(in_leaves, out_leaves, prev_leaves):
        if o is i:
            leaves.append(p)
        elif isinstance(o, Value) or (_is_number(o) and _is_number(i)
                                      and (o != i or type(o) is not type(i))) \
                or (_is_number(o) and isinstance(i, Value)):
            # (the last: a number assigned to a runtime value stays carried: the loop
            # may run no iteration)
            leaves.append(_join(i, o))  # `i` is the previous probe's placeholder
        elif _is_number(o) and _is_number(i):
            leaves.append(p)
        else:
            leaves.append(OUT)
    if all(lf == SAME for lf in leaves):
        return None
    return (tree, leaves)


def _placeholder(b, spec):
    shape, dtype = spec
    if shape is None:
        return Scalar(b.fresh(), dtype)
    return Tile(b.fresh(), shape, dtype)


def _inputs(b, specs, init, make_arg):
    """The values the body is called with: carried leaves get `make_arg(spec)`."""
    vals = []
    for spec, v in zip(specs, init):
        if not isinstance(spec, tuple):
            vals.append(v)
            continue
        tree, leaves = spec
        if v is UNDEF:
            it = iter([make_arg(lf) if isinstance(lf, tuple) else UNDEF for lf in leaves])
            vals.append(_unflatten(tree, it))
            continue
        in_leaves = []
        _flatten(v, in_leaves)
        it = iter([make_arg(lf) if isinstance(lf, tuple) else x
                   for lf, x in zip(leaves, in_leaves)])
        vals.append(_unflatten(tree, it))
    return vals


def _probe(b, body, iv, inputs, watched):
    b.push()
    try:
        outs = body(iv, *inputs)
    finally:
        b.pop()
        _restore(watched)  # a probe's trace is thrown away, and so are its changes
    return outs


# ---------------------------------------------------------------------------
# Lists and dicts the body changes in place: the probes' changes are undone,
# and a value traced in the body must not stay in one (it would be used
# outside the region that defines it)
# ---------------------------------------------------------------------------

_MAX_DEPTH = 4


def _watched_containers(body, names, init):
    """[(label, container, contents)] of the lists and dicts the body can
    reach by name: its free variables, the globals it names, and the values
    of the names it rebinds (nested ones too, a few levels deep)."""
    roots = list(zip(names, init))
    code = body.__code__
    for name, cell in zip(code.co_freevars, body.__closure__ or ()):
        try:
            roots.append((name, cell.cell_contents))
        except ValueError:  # not bound yet
            pass
    g = body.__globals__
    for name in _global_names(code):
        if type(g.get(name)) in (list, dict):
            roots.append((name, g[name]))
    out, seen = [], set()
    for name, value in roots:
        _watch(name, value, 0, out, seen)
    return out


def _global_names(code):
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _global_names(c)
    return names


def _watch(label, value, depth, out, seen):
    if type(value) not in (list, dict, tuple) or depth > _MAX_DEPTH or id(value) in seen:
        return
    seen.add(id(value))
    if type(value) is tuple:
        items = enumerate(value)
    else:
        items = list(value.items() if type(value) is dict else enumerate(value))
        out.append((label, value, items))
    for k, v in items:
        _watch(f"{label}[{k!r}]", v, depth + 1, out, seen)


def _restore(watched):
    for _, container, items in watched:
        now = container.items() if type(container) is dict else enumerate(container)
        if len(container) == len(items) and all(
                k is k0 and v is v0 for (k, v), (k0, v0) in zip(now, items)):
            continue  # (by identity: == on tiles would trace a comparison)
        if type(container) is dict:
            container.clear()
            container.update(items)
        else:
            container[:] = [v for _, v in items]


_SSA_NUMBER = re.compile(r"%(\d+)")


def _traced_after(x, start, depth=0):
    """A Value in `x` (nested lists, tuples, dicts) named after SSA number `start`."""
    if isinstance(x, Value):
        m = _SSA_NUMBER.match(x.name)
        return x if m and int(m.group(1)) > start else None
    if depth > _MAX_DEPTH or type(x) not in (list, tuple, dict):
        return None
    items = list(x.keys()) + list(x.values()) if type(x) is dict else x
    for v in items:
        hit = _traced_after(v, start, depth + 1)
        if hit is not None:
            return hit
    return None


def _check_no_escape(watched, start, loc, what="tile.range loop"):
    for label, container, _ in reversed(watched):  # the innermost one first
        hit = _traced_after(container, start)
        if hit is None:
            continue
        kind = type(container).__name__
        raise TileTypeError(
            f"the {kind} '{label}' was changed inside this {what} to hold "
            f"{_describe(hit)} computed in it: device control flow carries only the "
            "variables it rebinds, not what it puts into lists or dicts",
            "rebind variables instead (acc = acc + x, or a tuple: a, b = a + x, b + y) "
            f"and put them into the {kind} after the {what.split()[-1]}", location=loc)


def _carried_types_exact(specs, init):
    """True when every carried leaf enters with exactly its carried type, so a
    confirming probe would trace the same thing."""
    for spec, v in zip(specs, init):
        if not isinstance(spec, tuple):
            continue
        if v is UNDEF:
            return False
        leaves = []
        _flatten(v, leaves)
        for lf, x in zip(spec[1], leaves):
            if isinstance(lf, tuple) and (not isinstance(x, Value) or _type_of(x) != lf):
                return False
    return True


def _trip_count(b, lb, ub, st, loc):
    """The i32 number of iterations of Python's range(lb, ub, st): 0 for a zero
    step, counting down for a negative one; in i64 so that no span overflows."""
    def op(text):
        return b.emit(text, loc=loc)
    lo, hi, step = (op(f"arith.extsi {v.name} : i32 to i64") for v in (lb, ub, st))
    c0, c1 = op("arith.constant 0 : i64"), op("arith.constant 1 : i64")
    cmax = op("arith.constant 2147483647 : i64")
    down = op(f"arith.cmpi slt, {step}, {c0} : i64")
    still = op(f"arith.cmpi eq, {step}, {c0} : i64")
    up_span, down_span = op(f"arith.subi {hi}, {lo} : i64"), op(f"arith.subi {lo}, {hi} : i64")
    span = op(f"arith.select {down}, {down_span}, {up_span} : i64")
    neg = op(f"arith.subi {c0}, {step} : i64")
    mag = op(f"arith.select {down}, {neg}, {step} : i64")
    safe = op(f"arith.select {still}, {c1}, {mag} : i64")  # never divide by zero
    bias = op(f"arith.subi {safe}, {c1} : i64")
    num = op(f"arith.addi {span}, {bias} : i64")
    trips = op(f"arith.divsi {num}, {safe} : i64")
    trips = op(f"arith.select {still}, {c0}, {trips} : i64")
    trips = op(f"arith.maxsi {trips}, {c0} : i64")
    trips = op(f"arith.minsi {trips}, {cmax} : i64")
    return op(f"arith.trunci {trips} : i64 to i32")


def probe_specs(b, body, init, names, live, watched, what="tile.range loop"):
    """The spec of every name (see _decide): the body is probed until the
    carried types are stable. `body(iv, *values)`."""
    specs = [None] * len(names)
    inputs = list(init)
    for attempt in builtins.range(_MAX_PROBES):
        outs = _probe(b, body, Scalar(b.fresh(), D.int32), inputs, watched)
        new = [_decide(n, i, o, v, lv, p) for n, i, o, v, lv, p in
               zip(names, inputs, outs, init, live, specs)]
        if attempt and new == specs:
            return specs
        specs = new
        if attempt == 0 and _carried_types_exact(specs, init):
            return specs
        inputs = _inputs(b, specs, init, lambda spec: _placeholder(b, spec))
    raise TileTypeError(f"the types of the values carried by this {what} "
                        "do not settle", "give loop-carried tiles a fixed shape and "
                        "dtype before the loop (e.g. acc = tile.zeros(...))")


def carried_leaves(specs):
    """[(name index, leaf index, (shape, dtype))] of the carried values."""
    carried = []
    for k, spec in enumerate(specs):
        if isinstance(spec, tuple):
            carried += [(k, j, lf) for j, lf in enumerate(spec[1]) if isinstance(lf, tuple)]
    return carried


def initial_values(carried, init, names):
    """The initial values, converted to the carried types (before the loop)."""
    vals = []
    for k, j, (shape, dtype) in carried:
        leaves = []
        if init[k] is not UNDEF:
            _flatten(init[k], leaves)
        x = leaves[j] if leaves else 0
        vals.append(_convert(x, shape, dtype, names[k], "enters"))
    return vals


def yielded_values(carried, outs, names):
    """The body's values of the carried leaves, converted to their types."""
    yields = []
    for k, j, (shape, dtype) in carried:
        leaves = []
        _flatten(outs[k], leaves)
        if j >= len(leaves):
            raise TileTypeError(f"loop-carried variable '{names[k]}' changes its "
                                "structure in the tile.range loop body")
        yields.append(_convert(leaves[j], shape, dtype, names[k], "leaves"))
    return yields


def region_args(b, carried):
    return [_placeholder(b, spec) for _, _, spec in carried]


def body_inputs(b, specs, init, args):
    arg_iter = iter(args)
    return _inputs(b, specs, init, lambda spec: next(arg_iter))


def typed_results(args, res):
    """Values named `res` typed like the region arguments `args`."""
    if len(args) == 1:
        res = [res]
    return [type(a)(r, *((a.shape, a.dtype) if isinstance(a, Tile) else (a.dtype,)))
            for a, r in zip(args, res or [])]


def rebind(specs, init, outs, carried, results):
    """The value of every name after the loop."""
    by_leaf = {(k, j): r for (k, j, _), r in zip(carried, results)}
    final = []
    for k, spec in enumerate(specs):
        if spec is None:
            final.append(init[k])
        elif spec == OUT:
            final.append(outs[k])
        elif spec == DROP:
            final.append(UNDEF)
        else:
            tree, leaves = spec
            in_leaves, out_leaves = [], []
            if init[k] is not UNDEF:
                _flatten(init[k], in_leaves)
            _flatten(outs[k], out_leaves)
            vals = []
            for j, lf in enumerate(leaves):
                if isinstance(lf, tuple):
                    vals.append(by_leaf[(k, j)])
                elif lf == SAME:
                    vals.append(in_leaves[j])
                else:
                    vals.append(out_leaves[j])
            final.append(_unflatten(tree, iter(vals)))
    return tuple(final)


def loop_bounds(rng, loc):
    """(lb, ub, step, trip or None) i32 scalars of a device range loop: a
    negative or runtime step (which may be zero: no iteration) counts Python
    range's trip count instead, since scf.for needs a positive step."""
    b = ir.builder("tile.range")
    if isinstance(rng.step, int) and rng.step == 0:
        raise TileTypeError("tile.range step must not be zero (as in Python's range)")
    lb, ub, st = (to_i32_scalar(x, "tile.range bound")
                  for x in (rng.start, rng.stop, rng.step))
    runtime_step = not isinstance(rng.step, int) or rng.step < 0
    return lb, ub, st, (_trip_count(b, lb, ub, st, loc) if runtime_step else None)


def _device_loop(rng, body, init, names, live):
    b = ir.builder("tile.range")
    loc = user_location()
    lb, ub, st, trip = loop_bounds(rng, loc)
    watched = _watched_containers(body, names, init)
    specs = probe_specs(b, body, init, names, live, watched)
    carried = carried_leaves(specs)
    init_vals = initial_values(carried, init, names)

    # The real trace.
    start = b.counter
    b.push()
    try:
        iv = Scalar(b.fresh(), D.int32)
        args = region_args(b, carried)
        if trip is not None:  # the loop counts trips; the body sees start + k * step
            counter = iv
            scaled = b.emit(f"arith.muli {counter.name}, {st.name} : i32", loc=loc)
            iv = Scalar(b.emit(f"arith.addi {lb.name}, {scaled} : i32", loc=loc), D.int32)
        outs = body(iv, *body_inputs(b, specs, init, args))
        _check_no_escape(watched, start, loc)
        yields = yielded_values(carried, outs, names)
        if yields:
            b.emit(f"scf.yield {', '.join(y.name for y in yields)} : "
                   f"{', '.join(y.type for y in yields)}", nres=0, loc=loc)
    finally:
        lines = b.pop()

    if trip is not None:
        zero = b.emit("arith.constant 0 : i32", loc=loc)
        one = b.emit("arith.constant 1 : i32", loc=loc)
        head = f"scf.for {counter.name} = {zero} to {trip} step {one}"
    else:
        head = f"scf.for {iv.name} = {lb.name} to {ub.name} step {st.name}"
    if carried:
        pairs = ", ".join(f"{a.name} = {v.name}" for a, v in zip(args, init_vals))
        head += f" iter_args({pairs}) -> ({', '.join(a.type for a in args)})"
    head += " : i32"
    res = b.emit_region_op(head, lines, nres=len(carried), loc=loc)
    return rebind(specs, init, outs, carried, typed_results(args, res))


def _convert(x, shape, dtype, name, how):
    try:
        return materialize(x, dtype, shape)
    except TileTypeError:
        raise
    except Exception as e:  # shape mismatch
        where = "tile" if shape is not None else "scalar"
        raise TileTypeError(
            f"loop-carried variable '{name}' {how} the tile.range loop as "
            f"{_describe(x)} but is carried as a {dtype.name} {where}"
            + (f" of shape {shape}" if shape is not None else "") + f" ({e})",
            "give it its final shape and dtype before the loop") from None


def _describe(x):
    if isinstance(x, Tile):
        return f"a {x.dtype.name} tile of shape {x.shape}"
    if isinstance(x, Scalar):
        return f"a {x.dtype.name} scalar"
    return repr(x)


# The rest of the runtime the rewritten source calls (they use this module).
from . import whiles  # noqa: E402
from .branches import and_, if_, ifexp, not_, or_, raised, unsupported  # noqa: E402,F401
from .whiles import while_  # noqa: E402,F401

RUNTIME = sys.modules[__name__]
