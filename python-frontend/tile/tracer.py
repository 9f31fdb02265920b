"""Traces a kernel for one specialization key into a textual MLIR module
(docs/internals.md section 1)."""

import dis
import inspect
import os
import re

from . import dtypes as D
from . import global_watch, ir
from .errors import (TileError, TileRecursionError, TileSyntaxError, TileTypeError,
                     frame_location, is_internal, kernel_scope)
from .array_lists import ArrayList
from .interop import TMA, list_length
from .language import Array, Scalar

_SSA_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def array_type(dtype, ndim, unit_mask, aligned16, div16):
    """`!tile.array<?x?xf16, strides = [?, 1], align = 16, div = 16>`."""
    text = "!tile.array<" + "?x" * ndim + dtype.mem_mlir
    if unit_mask:
        text += ", strides = [" + ", ".join(
            "1" if unit_mask >> i & 1 else "?" for i in range(ndim)) + "]"
    align = 16 if aligned16 else dtype.itemsize
    if align != 1:
        text += f", align = {align}"
    if div16:
        text += ", div = 16"
    return text + ">"


def _symbol(name):
    return "@" + name if _SSA_NAME.match(name) else "@" + ir.mlir_string(name)


def trace(name, fn, params, key, def_loc, watch=None):
    """The module text of `fn` traced with `key` (one part per parameter).

    params: [(python name, is_constant)]; constants' key parts are
    (type, value). def_loc: (file, line, col) of the `def`. A `watch` list
    gets the watch of the globals the trace read (global_watch.py)."""
    b = ir.Builder(name)
    sig, values, entry = [], [], []
    with b, kernel_scope(name):
        for i, ((pname, is_const), part) in enumerate(zip(params, key)):
            if is_const:
                values.append(part[1])
                continue
            ssa = f"%{pname}" if _SSA_NAME.match(pname) else f"%arg{i}"
            if isinstance(part, tuple):  # an array, or a list of arrays
                _, dt, ndim, mask, a16, d16 = part[:6]
                t = array_type(dt, ndim, mask, a16, d16)
                unit = frozenset(k for k in range(ndim) if mask >> k & 1)
                n = list_length(part)
                if n is None:
                    # TMA can describe it (interop.TMA): tile-pipeline-mma may
                    # read it through a tensor map.
                    sig.append(f"{ssa}: {t}" + (" {tile.tma_ok}" if a16 == TMA else ""))
                    values.append(Array(ssa, dt, ndim, t, unit, pname))
                    continue
                names = [f"{ssa}.{k}" for k in range(n)]  # no Python name has a dot
                sig.extend(f"{e}: {t}" for e in names)
                values.append(ArrayList([Array(e, dt, ndim, t, unit, f"{pname}[{k}]")
                                         for k, e in enumerate(names)], pname))
            elif part == "one":  # an int equal to 1 is a constant
                entry.append(f"{ssa} = arith.constant 1 : i32 {ir.loc_text(def_loc)}")
                values.append(Scalar(ssa, D.int32))
            elif part in ("i32", "i32d16", "i64", "i64d16"):
                ty = part[:3]
                attr = " {tile.divisibility = 16 : i32}" if part.endswith("d16") else ""
                sig.append(f"{ssa}: {ty}{attr}")
                values.append(Scalar(ssa, D.int32 if ty == "i32" else D.int64))
            elif part == "f32":
                sig.append(f"{ssa}: f32")
                values.append(Scalar(ssa, D.float32))
            elif part == "bool":  # i32 argument, an i1 in the body
                raw = f"{ssa}_i32"
                sig.append(f"{raw}: i32")
                zero = b.fresh()
                entry.append(f"{zero} = arith.constant 0 : i32 {ir.loc_text(def_loc)}")
                entry.append(f"{ssa} = arith.cmpi ne, {raw}, {zero} : i32 "
                             f"{ir.loc_text(def_loc)}")
                values.append(Scalar(ssa, D.bool_))
            else:
                raise AssertionError(f"unknown key part {part!r}")
        b.block.lines.extend(entry)
        _check_not_suspending(fn, def_loc)
        global_watch.record(fn)
        # Keyword-only parameters (`def k(x, *, B)`) are passed by name.
        kw_only = {n for n, p in inspect.signature(fn).parameters.items()
                   if p.kind is p.KEYWORD_ONLY}
        named = {n: v for (n, _), v in zip(params, values) if n in kw_only}
        try:
            result = fn(*(v for (n, _), v in zip(params, values) if n not in kw_only),
                        **named)
        except RecursionError as e:
            raise _recursion_error(e) from None
        except Exception as e:  # noqa: BLE001 - annotated, then re-raised as is
            if not isinstance(e, TileError):
                _note_kernel_line(e, name)
            raise
        if result is not None:
            raise TileTypeError("a kernel cannot return a value",
                                "write results to an output array with tile.store",
                                location=getattr(b, "returned_at", None) or def_loc)
        b.emit("return", nres=0, loc=def_loc)
    if watch is not None:
        watch.append(global_watch.snapshot(b.global_reads))
    body = "\n".join("    " + line for line in b.block.lines)
    head = f"  func.func {_symbol(name)}({', '.join(sig)}) attributes {{tile.kernel}} {{"
    return f"module {{\n{head}\n{body}\n  }} {ir.loc_text(def_loc)}\n}}\n"



_SUSPENDING = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_SUSPEND_OPS = {"YIELD_VALUE", "GET_AWAITABLE", "GET_AITER", "GET_ANEXT", "SEND"}


def _check_not_suspending(fn, def_loc):
    """A generator or coroutine kernel would not run its body when called."""
    code = getattr(fn, "__code__", None)
    if code is None or not code.co_flags & _SUSPENDING:
        return
    loc = def_loc
    for ins in dis.get_instructions(code):
        if ins.opname in _SUSPEND_OPS and ins.positions and ins.positions.lineno:
            loc = (code.co_filename, ins.positions.lineno, (ins.positions.col_offset or 0) + 1)
            break
    what = "be async (await)" if code.co_flags & inspect.CO_COROUTINE else "yield"
    raise TileSyntaxError(f"a kernel cannot {what}: its body is traced once and returns "
                        "nothing", "write results to an output array with tile.store; to "
                        "generate trace-time values, yield from a helper and loop over it "
                        "with a Python for", location=loc)


_STDLIB = os.path.dirname(os.__file__) + os.sep


def _note_kernel_line(e, name):
    """Adds to an exception that is not tile's (a NumPy function given a
    tile, the user's own raise) the kernel and the innermost line of the
    user's code it came from; the exception itself is left as it was."""
    where = None
    tb = e.__traceback__
    while tb is not None:
        path = tb.tb_frame.f_code.co_filename
        if not (is_internal(path) or path.startswith(_STDLIB)
                or "-packages" + os.sep in path):  # NumPy's own frames, say
            where = (path, tb.tb_lineno)
        tb = tb.tb_next
    if where is not None:
        e.add_note(f"(raised while tracing kernel '{name}' at {where[0]}:{where[1]})")


def _recursion_error(e):
    """The TileRecursionError for a RecursionError out of tracing: at the call of
    the first user function that recursed (tracing inlines every call)."""
    frames = []  # (code, frame) of the user's frames, outermost first
    tb = e.__traceback__
    while tb is not None:
        if not is_internal(tb.tb_frame.f_code.co_filename):
            frames.append((tb.tb_frame.f_code, tb.tb_frame))
        tb = tb.tb_next
    seen = {}  # by identity: equal code objects can be different functions
    for code, frame in frames:
        first = seen.get(id(code))
        if first is not None:
            return TileRecursionError(
                f"recursion is not supported in kernels: '{code.co_name}' calls itself "
                "(directly or through other functions) until Python's recursion limit",
                "kernels and their helpers are traced inline: unroll a fixed depth with "
                "a Python for over a tile.Constant, or iterate with tile.range",
                location=frame_location(first))
        seen[id(code)] = frame
    where = frame_location(frames[-1][1]) if frames else None
    return TileRecursionError("tracing the kernel nested calls deeper than Python's recursion "
                         "limit", "split deeply nested expressions or helpers",
                         location=where)
