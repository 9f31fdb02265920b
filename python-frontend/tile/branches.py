"""Runtime `if`/`elif`/`else`, conditional expressions and `and`/`or`/`not`
(what the rewritten source calls: `__tile_rt.if_`, `ifexp`, `and_`, `or_`,
`not_`; see rewrite.py).

On a Python (trace-time) condition these are plain Python. On a runtime
scalar both branches are traced into the regions of one `scf.if`, and every
name a branch rebinds that is used afterwards becomes a result: its two
values must have one dtype and shape (Python numbers take the other side's
type; two different Python numbers become a runtime scalar).
"""

import math
import threading

from . import dtypes as D
from . import ir
from .errors import TileSyntaxError, TileTypeError, user_location
from .language import Scalar, Tile, Value, materialize
from .escapes import RET, RV
from .rewrite import UNDEF
# (loops.py imports this module last, so its tree helpers exist by then)
from .loops import _describe, _flatten, _is_number, _unflatten

_SAME, _DROP = "same", "drop"


def truth(c, what):
    """The i1 Scalar of a runtime condition (Python's truth of a number:
    nonzero, NaN included). A one-element tile counts; a larger one does not."""
    if isinstance(c, Tile):
        if math.prod(c.shape) != 1:
            raise TileTypeError(
                f"a tile of shape {c.shape} cannot be {what}: only a scalar (or a "
                "one-element tile) has one truth value",
                "choose elementwise with tile.where(cond, a, b), or reduce the tile "
                "to one value first (e.g. tile.max(mask) > 0 or tile.sum(x) > 0)")
        t = c.reshape(()) if c.shape else c
        c = Scalar(ir.builder().emit(f"tensor.extract {t.name}[] : {t.type}"), c.dtype)
    if c.dtype is D.bool_:
        return c
    return c != 0


def _number_dtype(x):
    return D.default_of_kind(D.python_kind(x))


class _Paths:
    """Reports a disagreement between the two paths of one `if`."""

    def __init__(self, name, lines, loc):
        self.name, self.lines, self.loc = name, lines, loc

    def where(self):
        then_line, else_line = self.lines
        parts = []
        if then_line:
            parts.append(f"line {then_line} (the if branch)")
        if else_line:
            parts.append(f"line {else_line} (the else branch)")
        if not parts:
            return ""
        return " assigned at " + " and ".join(parts) + f"; the if is at line {self.loc[1]}"

    def fail(self, what, hint):
        raise TileTypeError(f"'{self.name}' {what}{self.where()}", hint, location=self.loc)


def _leaf_type(a, e, paths):
    """The (shape or None, dtype) a leaf is carried as out of the `if`, given
    its value `a` on the if path and `e` on the else path."""
    if isinstance(a, Value) and isinstance(e, Value):
        if a.shape == e.shape == () and a.dtype is e.dtype and \
                isinstance(a, Tile) != isinstance(e, Tile):
            return (None, a.dtype)  # a 0-d tile beside a scalar: a scalar
        if isinstance(a, Tile) != isinstance(e, Tile) or a.shape != e.shape \
                or a.dtype is not e.dtype:
            paths.fail(f"is {_describe(a)} on one path of this runtime if and "
                       f"{_describe(e)} on the other",
                       "give it one dtype and shape on every path (e.g. .astype(...) "
                       "or tile.broadcast_to(...))")
        return (a.shape if isinstance(a, Tile) else None, a.dtype)
    if isinstance(a, Value) or isinstance(e, Value):
        v, n = (a, e) if isinstance(a, Value) else (e, a)
        if n is UNDEF:  # no value yet (a helper's return value): the other's type
            return (v.shape if isinstance(v, Tile) else None, v.dtype)
        if not _is_number(n):
            paths.fail(f"is {_describe(v)} on one path of this runtime if and "
                       f"{_describe(n)} on the other", "give it a value of one type on "
                       "every path")
        # A Python number is weak: it only raises the kind (int32 beside 0.5
        # is a float32, as n + 0.5 would be), never the width.
        dtype = v.dtype
        if D.python_kind(n) > dtype.kind:
            dtype = _number_dtype(n)
        return (v.shape if isinstance(v, Tile) else None, dtype)
    if _is_number(a) and _is_number(e):
        return (None, D.promote(_number_dtype(a), _number_dtype(e)))
    paths.fail(f"holds different Python values on the two paths of this runtime if "
               f"({a!r} and {e!r})", "only tiles, scalars and numbers can differ "
               "between the paths of a runtime if: choose the Python value on a "
               "tile.Constant condition (decided while tracing), or compute both "
               "results and pick one with `a if cond else b`")


def _decide(name, init, out_then, out_else, live, paths, guard=False,
            returned=(False, False)):
    """SAME, DROP, or (tree, [leaf spec]) with a leaf spec of SAME (equal on
    both paths: the if path's value) or a carried (shape, dtype).
    `returned`: per path, whether it returned from the kernel whatever
    happens at run time (nothing after the if reads its values)."""
    if out_then is init and out_else is init:
        return _SAME
    if (out_then is UNDEF) != (out_else is UNDEF) and live and (
            name == RV or (guard and out_else is UNDEF)
            or (returned[0] and out_then is UNDEF) or (returned[1] and out_else is UNDEF)):
        # A return value set on one path only: the other path has not
        # returned, so its value is never read (escapes.py); likewise a name
        # the other path never binds because it returned first. It takes the
        # bound value's structure, with zeros for its leaves.
        tree = _flatten(out_else if out_then is UNDEF else out_then, [])
        leaves_t, leaves_e = [], []
        _flatten(out_then, leaves_t)
        _flatten(out_else, leaves_e)
        n = max(len(leaves_t), len(leaves_e))
        leaves_t, leaves_e = leaves_t * (n if out_then is UNDEF else 1), \
            leaves_e * (n if out_else is UNDEF else 1)
        return (tree, [_SAME if a is e or not isinstance(a if e is UNDEF else e, Value)
                       else _leaf_type(a, e, paths) for a, e in zip(leaves_t, leaves_e)])
    if out_then is UNDEF or out_else is UNDEF:
        if not live:
            return _DROP
        missing = "else" if out_else is UNDEF else "if"
        paths.fail(f"is assigned on only one path of this runtime if (not on the "
                   f"{missing} path) and used after it",
                   "assign it before the if, or on every path")
    leaves_t, leaves_e = [], []
    tree_t = _flatten(out_then, leaves_t)
    tree_e = _flatten(out_else, leaves_e)
    if tree_t != tree_e:
        if not live:
            return _DROP
        paths.fail("has a different structure (tuple/list nesting) on the two paths "
                   "of this runtime if", "keep tuples of tiles the same length on every path")
    specs = []
    for a, e in zip(leaves_t, leaves_e):
        if a is e or (not isinstance(a, Value) and not isinstance(e, Value)
                      and type(a) is type(e) and _same_python(a, e)):
            specs.append(_SAME)
            continue
        if not live and not (isinstance(a, Value) or isinstance(e, Value)
                             or (_is_number(a) and _is_number(e))):
            return _DROP
        specs.append(_leaf_type(a, e, paths))
    return (tree_t, specs)


def _same_python(a, e):
    try:
        same = a == e
        return same is True or (type(same) is bool and same)
    except Exception:
        return False


def if_(cond, then_fn, else_fn, init, names, live, lines, guard=False):
    """Every rewritten `if` statement; `guard`: one escapes.py made to skip
    the statements after a break/continue/return."""
    if not isinstance(cond, Value):
        fn = then_fn if cond else else_fn
        outs = fn(*init) if fn is not None else tuple(init)
        for name, before, after, used in zip(names, init, outs, live):
            if after is UNDEF and before is not UNDEF and used:
                raise TileTypeError(f"'{name}' is deleted (`del`) in this if and used after it",
                                    "delete it after its last use, or assign it again")
        return outs
    return _runtime_if(cond, then_fn, else_fn, init, names, live, lines, guard)


# Runtime ifs being traced (per thread): a `raise` inside one would stop
# every trace, whichever way the condition goes at run time.
_tracing = threading.local()


def _trace_branch(b, fn, init):
    block = b.push()
    _tracing.runtime_ifs = getattr(_tracing, "runtime_ifs", 0) + 1
    try:
        outs = fn(*init) if fn is not None else tuple(init)
    finally:
        _tracing.runtime_ifs -= 1
        b.pop()
    return block, outs


def _runtime_if(cond, then_fn, else_fn, init, names, live, lines, guard=False):
    from .loops import _check_no_escape, _watched_containers

    b = ir.builder("a runtime if")
    loc = user_location()
    c = truth(cond, "an if condition")
    watched = []
    for fn in (then_fn, else_fn):
        if fn is not None:
            watched += _watched_containers(fn, names, init)
    start = b.counter
    then_block, outs_t = _trace_branch(b, then_fn, init)
    else_block, outs_e = _trace_branch(b, else_fn, init)
    _check_no_escape(watched, start, loc, "runtime if")
    # A path whose return flag is Python True returned on every run.
    returned = tuple(RET in names and outs[names.index(RET)] is True
                     for outs in (outs_t, outs_e))
    specs = [_decide(n, i, t, e, lv, _Paths(n, ln, loc), guard, returned)
             for n, i, t, e, lv, ln in zip(names, init, outs_t, outs_e, live, lines)]

    carried = []  # (shape, dtype) per result
    for spec in specs:
        if isinstance(spec, tuple):
            carried += [ls for ls in spec[1] if isinstance(ls, tuple)]
    branch_lines = []
    for block, outs in ((then_block, outs_t), (else_block, outs_e)):
        b.resume(block)
        try:
            values = []
            for out, spec in zip(outs, specs):
                if not isinstance(spec, tuple):
                    continue
                leaves = []
                _flatten(out, leaves)
                if out is UNDEF:  # a return value this path does not set
                    leaves = [0] * len(spec[1])
                for leaf, ls in zip(leaves, spec[1]):
                    if isinstance(ls, tuple):
                        values.append(materialize(leaf, ls[1], ls[0]))
            if values:
                b.emit(f"scf.yield {', '.join(v.name for v in values)} : "
                       f"{', '.join(v.type for v in values)}", nres=0, loc=loc)
        finally:
            branch_lines.append(b.pop())
    types = [_carried_type(s) for s in carried]
    head = f"scf.if {c.name}"
    if types:
        head += f" -> ({', '.join(types)})"
    body = branch_lines[0] + ["} else {"] + branch_lines[1]
    res = b.emit_region_op(head, body, nres=len(carried), loc=loc)
    if len(carried) == 1:
        res = [res]
    results = iter(_value(r, s) for r, s in zip(res or [], carried))

    final = []
    for k, spec in enumerate(specs):
        if spec == _SAME:
            final.append(init[k])
        elif spec == _DROP:
            final.append(UNDEF)
        else:
            tree, leaf_specs = spec
            leaves = []
            _flatten(outs_e[k] if outs_t[k] is UNDEF else outs_t[k], leaves)
            vals = [next(results) if isinstance(ls, tuple) else leaf
                    for leaf, ls in zip(leaves, leaf_specs)]
            final.append(_unflatten(tree, iter(vals)))
    return tuple(final)


def _carried_type(spec):
    shape, dtype = spec
    return dtype.mlir if shape is None else ir.tensor_type(shape, dtype.mlir)


def _value(name, spec):
    shape, dtype = spec
    return Scalar(name, dtype) if shape is None else Tile(name, shape, dtype)


_VALUE = ("value of the conditional expression",)


def ifexp(cond, then_thunk, else_thunk):
    """`a if cond else b`: only the chosen side is evaluated on a trace-time
    condition; on a runtime one both are traced into an scf.if."""
    if not isinstance(cond, Value):
        return then_thunk() if cond else else_thunk()
    (value,) = _runtime_if(cond, lambda _: (then_thunk(),), lambda _: (else_thunk(),),
                           (UNDEF,), _VALUE, (True,), ((0, 0),))
    return value


def _logical(op, a, b):
    """`a and b` / `a or b` with a runtime `a`: Python's operand (`b if a else
    a` / `a if a else b`) as a select, both sides evaluated; on two bools
    that is andi / ori."""
    from .ops import where
    c = truth(a, f"an operand of `{op}`")
    if isinstance(b, Value):
        d = truth(b, f"an operand of `{op}`")  # (a multi-element tile is an error)
        if isinstance(a, Scalar) and isinstance(b, Scalar) and a.dtype is b.dtype is D.bool_:
            mlir = "arith.andi" if op == "and" else "arith.ori"
            return Scalar(ir.builder().emit(f"{mlir} {c.name}, {d.name} : i1"), D.bool_)
    if op == "and":
        return where(c, b, a)
    return where(c, a, b)


def and_(first, *thunks):
    """`a and b and ...` (each later operand a thunk): Python semantics on
    Python values."""
    v = first
    for i, t in enumerate(thunks):
        if isinstance(v, Value):
            return _logical("and", v, and_(t(), *thunks[i + 1:]))
        if not v:
            return v
        v = t()
    return v


def or_(first, *thunks):
    v = first
    for i, t in enumerate(thunks):
        if isinstance(v, Value):
            return _logical("or", v, or_(t(), *thunks[i + 1:]))
        if v:
            return v
        v = t()
    return v


def not_(x):
    if not isinstance(x, Value):
        return not x
    t = truth(x, "the operand of `not`")
    b = ir.builder()
    true = b.constant("true", "i1")
    return Scalar(b.emit(f"arith.xori {t.name}, {true} : i1"), D.bool_)


def raised(exc):
    """What a kernel's `raise exc` raises: `exc` under Python and Constant
    conditions (`if BLOCK > 1024: raise ...`, decided while tracing), an
    error naming it under a runtime if, which tracing reaches on every
    launch whichever way the condition goes at run time."""
    if not getattr(_tracing, "runtime_ifs", 0):
        return exc
    what = exc.__name__ if isinstance(exc, type) else repr(exc)
    return TileSyntaxError(
        f"`raise {what}` under a runtime condition: a kernel cannot raise while it runs, "
        "and tracing reaches both paths of a runtime if",
        "check at run time with tile.assert_(cond, message); a raise under a "
        "tile.Constant or Python condition is fine")


def unsupported(what, hint):
    """Statements no kernel can compile (`try`, `with`), at their line."""
    raise TileSyntaxError(f"`{what}` cannot be used in a kernel or a helper it calls", hint)
