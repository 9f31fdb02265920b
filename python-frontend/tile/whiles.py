"""`while` loops and loops left by `break` (what the rewritten source calls:
`__tile_rt.while_`, and `for_` with a break flag; see rewrite.py and
escapes.py).

A `while` runs as a Python loop while its condition is a Python value; the
first runtime condition turns the rest of it into one `scf.while` whose
values are found by probing the body, as for tile.range (loops.py). A device
`for` with a `break` is an `scf.while` too: its condition also tests the
break flag, so the loop stops at the iteration that set it.
"""

from . import dtypes as D
from . import ir
from .branches import ifexp, not_, truth
from .errors import user_location
from .language import Scalar, Value
from . import loops as L


def while_(cond_fn, body_fn, init, names, live, brk=None):
    """Every rewritten `while`; `brk` is the index of its break flag in `names`."""
    vals = tuple(init)
    b = ir.current()
    while True:
        if brk is not None:
            flag = vals[brk]
            if isinstance(flag, Value):
                return _device_while(cond_fn, body_fn, vals, names, live, brk)
            if flag:
                return vals
        if b is None:
            c = cond_fn(*vals)
        else:
            # Traced into a scratch block: a runtime condition is traced
            # again inside the scf.while (its ops, atomics included, must run
            # there and only there).
            scratch = b.push()
            try:
                c = cond_fn(*vals)
            finally:
                b.pop()
            if isinstance(c, Value):
                return _device_while(cond_fn, body_fn, vals, names, live, brk)
            b.block.lines.extend(scratch.lines)
        if not c:
            return vals
        vals = tuple(body_fn(*vals))


def _condition(value):
    """An i1 SSA name for a loop condition (a Python bool folds to a constant)."""
    if isinstance(value, Value):
        return truth(value, "a while condition").name
    return ir.builder().constant("true" if value else "false", "i1")


def _device_while(cond_fn, body_fn, init, names, live, brk):
    b = ir.builder("a runtime while loop")
    loc = user_location()

    def body(_iv, *vals):
        return body_fn(*vals)

    watched = L._watched_containers(body_fn, names, init)
    specs = L.probe_specs(b, body, init, names, live, watched, "while loop")
    carried = L.carried_leaves(specs)
    init_vals = L.initial_values(carried, init, names)
    start = b.counter

    # before: the condition (false once the break flag is set)
    b.push()
    try:
        before_args = L.region_args(b, carried)
        vals = L.body_inputs(b, specs, init, before_args)
        if brk is not None and isinstance(vals[brk], Value):
            flag = vals[brk]
            c = ifexp(not_(flag), lambda: cond_fn(*vals), lambda: False)
        else:
            c = cond_fn(*vals)
        c = _condition(c)
        forwarded = ", ".join(a.name for a in before_args)
        types = ", ".join(a.type for a in before_args)
        b.emit(f"scf.condition({c})" + (f" {forwarded} : {types}" if before_args else ""),
               nres=0, loc=loc)
    finally:
        before = b.pop()

    # after: the body
    b.push()
    try:
        after_args = L.region_args(b, carried)
        outs = body_fn(*L.body_inputs(b, specs, init, after_args))
        L._check_no_escape(watched, start, loc, "while loop")
        yields = L.yielded_values(carried, outs, names)
        b.emit("scf.yield" + (f" {', '.join(y.name for y in yields)} : "
                              f"{', '.join(y.type for y in yields)}" if yields else ""),
               nres=0, loc=loc)
    finally:
        after = b.pop()

    types = ", ".join(a.type for a in before_args)
    pairs = ", ".join(f"{a.name} = {v.name}" for a, v in zip(before_args, init_vals))
    head = f"scf.while ({pairs}) : ({types}) -> ({types})"
    block_args = ", ".join(f"{a.name}: {a.type}" for a in after_args)
    body_text = before + ["} do {", f"^bb0({block_args}):"] + after
    res = b.emit_region_op(head, body_text, nres=len(carried), loc=loc)
    return L.rebind(specs, init, outs, carried, L.typed_results(before_args, res))


_INDEX = "loop index"


def range_with_break(rng, body, init, names, live, brk):
    """A device `for ... in tile.range/range` that contains `break`."""
    loc = user_location()
    lb, ub, st, trip = L.loop_bounds(rng, loc)
    if trip is not None:  # loop_bounds gives the trip count's SSA name
        trip = Scalar(trip, D.int32)
    first = Scalar(ir.builder().constant("0", "i32"), D.int32) if trip is not None else lb

    def cond(k, *vals):
        return k < (trip if trip is not None else ub)

    def step(k, *vals):
        iv = k if trip is None else lb + k * st
        outs = body(iv, *vals)
        return (k + (st if trip is None else 1),) + tuple(outs)

    out = while_(cond, step, (first,) + tuple(init), (_INDEX,) + tuple(names),
                 (True,) + tuple(live), brk + 1)
    return out[1:]


def python_loop_with_break(iterable, body, init, names, live, brk):
    """A trace-time `for` with `break`: it stops once the flag is True; after a
    runtime `break` the remaining iterations run under `if not flag`."""
    from .branches import if_

    vals = tuple(init)
    no_lines = ((0, 0),) * len(names)
    for item in iterable:
        flag = vals[brk]
        if isinstance(flag, Value):
            vals = if_(not_(flag), lambda *v, item=item: body(item, *v), None, vals,
                       names, live, no_lines)
        elif flag:
            break
        else:
            vals = tuple(body(item, *vals))
    return vals
