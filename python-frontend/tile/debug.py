"""cuTile's device printing and assertions, on tile.print / tile.assert:
`printf(format, *args)`, `print(*args, sep=" ", end="\\n")` (f-strings of
tiles included) and `assert_(cond, message=None)`.

tile.print writes one line per block (per element on the GPU): a text, then
the values. A format whose conversions all come after its text prints as
`text v1 v2`; otherwise the whole text is kept with its conversions (`%d`,
or `{}` for print) marking where each value belongs, and the values follow.
"""

import builtins
import re

from . import ir
from .errors import TileTypeError, TileValueError
from .language import Array, Value, as_operand
from .ops import device_assert, device_print

# %[flags][width][.precision][length]specifier, as C's printf (cuTile accepts
# integer and float conversions only)
_CONVERSION = re.compile(r"%(?P<body>[-+ #0]*(?:\d+|\*)?(?:\.(?:\d+|\*))?"
                         r"(?:hh|h|ll|l|j|z|t|L)?)(?P<spec>[diuoxXeEfFgGaA%]?)")
_TOKEN = re.compile("\u27e6tile#(\\d+)\u27e7")


def format_token(value, spec):
    """What `f"{value}"` gives for a traced value: a token that print()
    turns back into the value (outside tracing, its repr)."""
    b = ir.current()
    if b is None:
        return format(repr(value), spec)
    table = getattr(b, "formatted_values", None)
    if table is None:
        table = b.formatted_values = []
    table.append(value)
    return f"\u27e6tile#{len(table) - 1}\u27e7"


def _emit(pieces, marker):
    """tile.print of pieces (str or Value), text first as described above."""
    values = [p for p in pieces if not isinstance(p, str)]
    first = next((i for i, p in enumerate(pieces) if not isinstance(p, str)), len(pieces))
    later_text = "".join(p for p in pieces[first:] if isinstance(p, str))
    if not later_text.strip(" ,;\t\n"):
        text = "".join(pieces[:first]).rstrip()
    else:
        text = "".join(p if isinstance(p, str) else marker for p in pieces).rstrip("\n")
    device_print(text, *values)


def _value(x, what):
    if isinstance(x, Array):
        raise TileTypeError(f"{what} cannot print an array", "load a tile from it first")
    return as_operand(x, f"{what} argument")


def printf(format, *args):
    """Prints `args` (tiles or scalars) from the device with a C-style format
    (conversions [diuoxXeEfFgGaA]); tile.print does the formatting."""
    if not isinstance(format, str):
        raise TileTypeError(f"printf needs a format string, got {type(format).__name__}")
    pieces, pos, n = [], 0, 0
    for m in _CONVERSION.finditer(format):
        spec = m.group("spec")
        if not spec:
            raise TileValueError(f"printf format {format!r}: incomplete conversion at "
                                 f"offset {m.start()}",
                                 "conversions are %d %i %u %o %x %X %e %f %g %a (and %%)")
        if spec == "%":
            pieces.append(format[pos:m.start()] + "%")
            pos = m.end()
            continue
        if "*" in m.group("body"):
            raise TileValueError(f"printf format {format!r}: `*` widths are not supported")
        if n >= len(args):
            raise TileValueError(f"printf format {format!r} has more conversions than the "
                                 f"{len(args)} value(s) given")
        pieces.append(format[pos:m.start()])
        pieces.append(_value(args[n], "printf"))
        n += 1
        pos = m.end()
    pieces.append(format[pos:])
    if n != len(args):
        raise TileValueError(f"printf format {format!r} has {n} conversion(s) for "
                             f"{len(args)} value(s)")
    _emit(_merge(pieces), "%d")


def _merge(pieces):
    out = []
    for p in pieces:
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] += p
        elif not (isinstance(p, str) and not p):
            out.append(p)
    return out


def print(*args, sep=" ", end="\n"):
    """Python's print on the device: strings (f-strings of tiles included),
    tiles and scalars. `end` other than a newline is accepted and ignored:
    each call prints whole lines."""
    if not isinstance(sep, str) or not isinstance(end, str):
        raise TileValueError("print: sep and end must be strings")
    b = ir.builder("tile.print")
    table = getattr(b, "formatted_values", [])
    pieces = []
    for i, a in enumerate(args):
        if i:
            pieces.append(sep)
        if isinstance(a, str):
            pos = 0
            for m in _TOKEN.finditer(a):
                pieces.append(a[pos:m.start()])
                k = int(m.group(1))
                if k >= len(table):
                    raise TileValueError("print: a formatted tile from another kernel")
                pieces.append(table[k])
                pos = m.end()
            pieces.append(a[pos:])
        elif isinstance(a, Value):
            pieces.append(a)
        else:
            v = _value(a, "print")
            pieces.append(builtins.str(v))
    _emit(_merge(pieces), "{}")


def assert_(cond, /, message=None):
    """Aborts the kernel when any element of `cond` is false."""
    if message is not None and not isinstance(message, str):
        message = builtins.str(message)
    device_assert(cond, message or "")
