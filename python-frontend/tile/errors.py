"""The errors of the spec, and how they find the user's line.

Every message reads `kernel 'name' at file:line: what went wrong. what to do`.
The line is the innermost frame outside this package: the kernel body, a
helper it calls, or the launch site.
"""

import os
import re
import sys
import threading

__all__ = ["TileError", "TileTypeError", "TileShapeError", "TileCompileError",
           "TileLaunchError", "TileValueError", "TileSyntaxError", "TileStaticAssertionError",
           "TileStaticEvalError", "TileUnsupportedFeatureError", "TileRecursionError",
           "TileInternalError", "TileCompilerExecutionError", "TileCompilerTimeoutError",
           "user_frame", "user_location"]

_PKG_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep

# The kernel being traced or launched, for messages (thread-local).
_state = threading.local()


def current_kernel_name():
    return getattr(_state, "kernel", None)


class kernel_scope:
    """Names the kernel that errors raised inside the `with` belong to."""

    __slots__ = ("name", "prev")

    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.prev = getattr(_state, "kernel", None)
        _state.kernel = self.name

    def __exit__(self, *exc):
        _state.kernel = self.prev


_internal = {}


def is_internal(filename):
    """True for code of this package (and tile's generated launchers)."""
    # Code objects keep the path they were imported by, which may be
    # unnormalized (a sys.path entry like "bench/../python-frontend").
    known = _internal.get(filename)
    if known is None:
        known = _internal[filename] = (
            filename.startswith("<tile launcher")
            or os.path.normpath(os.path.abspath(filename)).startswith(_PKG_DIR))
    return known


def user_frame(depth=1):
    """The innermost frame whose code is not this package's."""
    f = sys._getframe(depth)
    while f is not None and is_internal(f.f_code.co_filename):
        f = f.f_back
    return f


_positions = {}


def frame_location(f):
    """(filename, line, column) of the instruction a frame is executing;
    the column is 1-based as in MLIR diagnostics."""
    code = f.f_code
    pos = _positions.get(code)
    if pos is None:
        pos = _positions[code] = list(code.co_positions())
    line, col = f.f_lineno, 0
    i = f.f_lasti // 2
    if 0 <= i < len(pos):
        p = pos[i]
        if p[0] is not None:
            line = p[0]
        if p[2] is not None:
            col = p[2]
    return code.co_filename, line or 0, col + 1


def user_location():
    f = user_frame(2)
    if f is None:
        return ("<unknown>", 0, 0)
    return frame_location(f)


class TileError(Exception):
    """Base of every tile error. `kernel`, `filename` and `lineno` say where."""

    def __init__(self, message, hint=None, *, kernel=None, location=None):
        if kernel is None:
            kernel = current_kernel_name()
        if location is None:
            location = user_location()
        self.kernel = kernel
        self.filename, self.lineno = location[0], location[1]
        self.hint = hint
        self.detail = message
        where = f"{self.filename}:{self.lineno}"
        head = f"kernel '{kernel}' at {where}: " if kernel else f"{where}: "
        text = head + message
        if hint:
            text += "\n  hint: " + hint
        super().__init__(text)


class TileTypeError(TileError, TypeError):
    """A value of the wrong kind or dtype (also: wrong arguments)."""


class TileShapeError(TileError, ValueError):
    """Shapes that do not fit: non-power-of-two, broadcasting, mma."""


class TileLaunchError(TileError, RuntimeError):
    """The kernel could not be launched: arguments, device, driver."""


class TileCompileError(TileError, RuntimeError):
    """The C++ compiler rejected the kernel. `stage` is the failing stage,
    `reproducer` the path of a .mlir file that reproduces it."""

    def __init__(self, message, hint=None, *, stage="", reproducer="",
                 diagnostics="", kernel=None, location=None):
        self.stage = stage
        self.reproducer = reproducer
        self.diagnostics = diagnostics
        super().__init__(message, hint, kernel=kernel, location=location)


# cuTile's error classes (cuda.tile._exception), placed under tile's own so
# that `except tile.TileTypeError` / `tile.TileCompileError` still catch them.

class TileValueError(TileError, ValueError):
    """A value tile cannot take: a hint out of range, a bad enum member."""


class TileSyntaxError(TileTypeError):
    """Python syntax a kernel cannot use (try/with, yield, ...)."""


class TileStaticAssertionError(TileError, AssertionError):
    """`static_assert` (or `ensure_constant`) failed while tracing."""


class TileStaticEvalError(TileTypeError):
    """A `static_eval` / `static_assert` expression could not be evaluated."""


class TileUnsupportedFeatureError(TileTypeError):
    """A feature tile's targets lack (Blackwell-only types: sm_100)."""


class TileRecursionError(TileTypeError):
    """A kernel or helper that calls itself (tracing inlines every call)."""


class TileInternalError(TileCompileError):
    """The compiler failed on a kernel the frontend accepted."""


class TileCompilerExecutionError(TileInternalError):
    """A compiler stage reported an error (`stage`, `reproducer` say which)."""


class TileCompilerTimeoutError(TileInternalError):
    """Compilation took longer than allowed."""


_DIAG = re.compile(r"^(?:loc\()?\"?(?P<file>[^\":\n]+\.py)\"?:(?P<line>\d+):(?P<col>\d+)\)?:?\s*error:\s*(?P<msg>.*)$",
                   re.MULTILINE)


def first_python_diagnostic(text):
    """(file, line, message) of the first `file.py:line:col: error:` in MLIR
    diagnostics, or None."""
    m = _DIAG.search(text or "")
    if not m:
        return None
    return m.group("file"), int(m.group("line")), m.group("msg")


def replay_command(reproducer, stage, target=None):
    """The tilec command that replays a compile failure from its reproducer:
    the reproducer's own `// Replay: tilec ...` line (it has every option
    that matters), else one built from the stage and target."""
    try:
        with open(reproducer) as f:
            for _, line in zip(range(4), f):
                if line.startswith("// Replay: tilec "):
                    return line[len("// Replay: "):].strip()
    except OSError:
        pass
    cmd = f"tilec {reproducer} --emit {'tile' if stage == 'parse' else stage}"
    return cmd + (f" --target {target}" if target else "")
