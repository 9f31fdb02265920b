"""cuTile's compile-time helpers: `static_eval`, `static_assert` and
`ensure_constant`.

A kernel body is plain Python run while tracing, so an expression handed to
these has already been evaluated with Python's semantics by the time they
are called: compile-time values (constants, shapes, dtypes) are Python
objects, and traced values (tiles, scalars, arrays) are tile's own objects,
whose attributes (`.shape`, `.dtype`, `.ndim`) are compile-time facts.
"""

from .errors import TileStaticAssertionError, TileStaticEvalError
from .language import Array, Value

__all__ = ["static_eval", "static_assert", "ensure_constant"]


def static_eval(expr, /):
    """The value of `expr`, evaluated while tracing (Python semantics): a
    Python object, or a traced value that the expression selected."""
    return expr


def _is_runtime(v):
    return isinstance(v, (Value, Array))


def static_assert(condition, message=None, /):
    """Fails tracing with TileStaticAssertionError at this line when
    `condition` (a compile-time value) is false."""
    if _is_runtime(condition):
        raise TileStaticEvalError(
            "static_assert needs a compile-time condition, got a runtime value",
            "compare compile-time facts (shapes, dtypes, constants); check runtime values "
            "with tile.assert_")
    try:
        ok = bool(condition)
    except Exception as e:  # noqa: BLE001 - any failure of the user's __bool__
        raise TileStaticEvalError(f"static_assert condition {condition!r} has no truth "
                                  f"value: {type(e).__name__}: {e}") from None
    if not ok:
        text = "Static assertion failed"
        if message is not None and str(message):
            text += ": " + str(message)
        raise TileStaticAssertionError(text)


def ensure_constant(value, /):
    """`value`, when it is a compile-time constant; else
    TileStaticAssertionError at this line."""
    if _is_runtime(value):
        raise TileStaticAssertionError(
            "Argument of ensure_constant() is not a compile-time constant: "
            f"{value!r} is computed at run time",
            "make it a tile.Constant parameter or compute it from constants")
    return value
