"""cuTile's kernel hints and launch-side names (issue 16, docs/cutile.md):
`ByTarget`, the checks of `@tile.kernel(num_ctas=, occupancy=, opt_level=,
num_worker_warps=)`, `tile.function`, `compiler_timeout` and the
programmatic-dependent-launch controls.

What acts: `opt_level` (the compiler's level, per target), `occupancy` on
CUDA targets (the kernel's `nvvm.minctasm`: blocks per SM the register
allocation must leave room for; none where that many blocks' shared memory
cannot fit an SM, or where a warp-specialized kernel's consumers would be
left fewer registers than their accumulators need) and `num_ctas` on sm_90 (2 or more:
neighbouring blocks run as clusters of two and share the TMA copies of
blocks they both read, tile-cluster-multicast; the grid still counts
blocks, a persistent kernel pairs the k-th tiles of the two blocks, and
a kernel the pass cannot pair runs as before).
`num_worker_warps` (warp specialization) is checked and ignored: tile picks
its warps itself (`num_warps`).
"""

import contextlib
import re
import threading

from . import backend as _backend
from . import ir
from .errors import TileTypeError, TileValueError, user_location

__all__ = ["ByTarget", "function", "compiler_timeout", "grid_dependency_control_wait",
           "grid_dependency_control_launch_dependents", "check_hints", "for_target",
           "HINT_DEFAULTS"]

_UNSET = object()
_TARGET_KEY = re.compile(r"^(sm_\d+a?|cpu)$")

# cuTile's kernel hints and their defaults.
HINT_DEFAULTS = {"num_ctas": None, "occupancy": None, "opt_level": 3, "num_worker_warps": None}


class ByTarget:
    """A value that depends on the compilation target: `ByTarget(sm_90=2,
    sm_80=1, default=1)`. Keys are `sm_<major><minor>` (as cuTile's) or
    `cpu` (tile's CPU backend); a target not listed takes `default`, and
    without one the hint's own default."""

    __slots__ = ("_default", "_by_target")

    def __init__(self, *, default=_UNSET, **value_by_target):
        for name in value_by_target:
            if not _TARGET_KEY.match(name):
                raise TileValueError(f"ByTarget: {name!r} is not a target name",
                                     "use sm_<major><minor> (sm_90, sm_80) or cpu")
        self._default = default
        self._by_target = dict(value_by_target)

    def values(self):
        """Every value it holds (the default included, when given)."""
        vals = list(self._by_target.values())
        return vals + ([self._default] if self._default is not _UNSET else [])

    def resolve(self, target, fallback):
        """The value for `target` ("sm_90", "sm_90a", "cpu")."""
        for name in (target, target.rstrip("a")):
            if name in self._by_target:
                return self._by_target[name]
        return fallback if self._default is _UNSET else self._default

    def __eq__(self, other):
        return isinstance(other, ByTarget) and (self._default, self._by_target) == \
            (other._default, other._by_target)

    def __hash__(self):
        return hash((ByTarget, tuple(sorted(self._by_target.items(), key=repr))))

    def __repr__(self):
        parts = [f"{k}={v!r}" for k, v in self._by_target.items()]
        if self._default is not _UNSET:
            parts.append(f"default={self._default!r}")
        return f"ByTarget({', '.join(parts)})"


def for_target(value, target, fallback):
    """A hint's value for `target` (a plain value is every target's)."""
    return value.resolve(target, fallback) if isinstance(value, ByTarget) else value


def _int_in(name, v, ok, what):
    if v.__class__ is bool or not isinstance(v, int) or not ok(v):
        raise TileValueError(f"@tile.kernel: {name}={v!r}, expected {what}")


_CHECKS = {
    "num_ctas": lambda v: v is None or _int_in(
        "num_ctas", v, lambda n: 1 <= n <= 16 and n & (n - 1) == 0,
        "None or a power of two from 1 to 16"),
    "occupancy": lambda v: v is None or _int_in(
        "occupancy", v, lambda n: 1 <= n <= 32, "None or an int from 1 to 32"),
    "opt_level": lambda v: _int_in("opt_level", v, lambda n: 0 <= n <= 3,
                                   "an int from 0 to 3"),
    "num_worker_warps": lambda v: v is None or _int_in(
        "num_worker_warps", v, lambda n: n in (4, 8), "None, 4 or 8"),
}


def check_hints(hints):
    """Raises TileValueError for a hint value cuTile refuses (each value of a
    ByTarget is checked); TileTypeError for an unknown hint."""
    for name, value in hints.items():
        check = _CHECKS.get(name)
        if check is None:
            raise TileTypeError(f"unknown kernel hint {name!r}",
                                f"the hints are {', '.join(HINT_DEFAULTS)}")
        for v in value.values() if isinstance(value, ByTarget) else (value,):
            check(v)


def function(func=None, /, *, host=False, tile=True):
    """cuTile's `@ct.function`: marks a device helper. A plain helper is
    already traced (inlined) where a kernel calls it, so this returns the
    function itself, marked so that the tracer rewrites it like an
    undecorated helper. `host=True` lets it be called outside kernels too
    (it always can be: Python runs it); `tile=False` is refused, since a
    function a kernel cannot call has no meaning here."""
    for name, v in (("host", host), ("tile", tile)):
        if v.__class__ is not bool:
            raise TileValueError(f"@tile.function: {name}={v!r}, expected True or False")
    if not tile:
        raise TileValueError("@tile.function(tile=False): tile only has kernel-callable "
                             "functions", "drop the decorator from host-only functions")

    def mark(f):
        if not callable(f):
            raise TileTypeError(f"@tile.function decorates a function, got {f!r}")
        try:
            f.__tile_function__ = True
        except (AttributeError, TypeError):
            pass  # a builtin: called as it is
        return f
    return mark if func is None else mark(func)


_timeout = threading.local()


def current_compiler_timeout():
    """Seconds the compiler may take (None: no limit), from compiler_timeout."""
    return getattr(_timeout, "seconds", None)


@contextlib.contextmanager
def compiler_timeout(timeout_sec):
    """`with tile.compiler_timeout(10): ...`: compilations started inside
    (in this thread) that take longer raise TileCompilerTimeoutError once
    they finish (the native compiler cannot be interrupted)."""
    if timeout_sec.__class__ is bool or not isinstance(timeout_sec, (int, float)) \
            or not timeout_sec > 0:
        raise TileValueError(f"compiler_timeout: {timeout_sec!r}, expected a positive "
                             "number of seconds")
    old = current_compiler_timeout()
    _timeout.seconds = float(timeout_sec)
    try:
        yield
    finally:
        _timeout.seconds = old


def _in_kernel(name):
    if ir.current() is None:
        raise TileTypeError(f"tile.{name}() is only meaningful inside a kernel",
                            location=user_location())


def _grid_dependency_control(name, action):
    _in_kernel(name)
    ir.builder(f"tile.{name}").emit(f"tile.grid_dependency_control {action}", nres=0)


def grid_dependency_control_wait():
    """Waits until the kernel this one was launched after, as a programmatic
    dependent launch (`tile.launch(..., programmatic_dependent_launch=True)`),
    has finished and its writes are visible; at once after a plain launch.
    PTX griddepcontrol.wait on sm_90; nothing where launches run in order
    (the CPU, sm_80)."""
    _grid_dependency_control("grid_dependency_control_wait", "wait")


def grid_dependency_control_launch_dependents():
    """Lets the next programmatic dependent launch on the stream start
    before this kernel ends (its prologue overlaps this kernel's tail); the
    dependent kernel's wait still sees all of this kernel's writes. PTX
    griddepcontrol.launch_dependents on sm_90; nothing elsewhere."""
    _grid_dependency_control("grid_dependency_control_launch_dependents",
                             "launch_dependents")


def run_with_timeout(compile_fn, seconds):
    """compile_fn() in a thread (the native compiler releases the GIL);
    returns its result, or raises TimeoutError once `seconds` pass (the
    compilation then finishes in the background and is dropped)."""
    if seconds is None:
        return compile_fn()
    box = {}

    def work():
        try:
            box["value"] = compile_fn()
        except BaseException as e:  # noqa: BLE001 - re-raised in the caller
            box["error"] = e
    t = threading.Thread(target=work, name="tile-compile", daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        raise TimeoutError(seconds)
    if "error" in box:
        raise box["error"]
    return box["value"]


# The kernel's attribute dictionary in traced IR, where hints join it.
_KERNEL_ATTRS = re.compile(r"attributes \{tile\.kernel(?=[,}])")


def with_occupancy(ir_text, occupancy):
    """The traced module with `tile.occupancy = N` on its kernel, which the
    CUDA lowering turns into nvvm.minctasm (convert-tile-to-gpu)."""
    return _with_kernel_attr(ir_text, "tile.occupancy", occupancy)


def with_target_hints(ir_text, hints, target):
    """The traced module with the kernel's hints for a CUDA `target` as
    attributes of its kernel: `occupancy` (tile.occupancy) and `num_ctas`
    (tile.num_ctas: thread-block clusters, tile-cluster-multicast)."""
    if not target.startswith("sm_"):
        return ir_text
    ir_text = with_occupancy(ir_text, for_target(hints["occupancy"], target, None))
    ctas = for_target(hints["num_ctas"], target, None)
    return _with_kernel_attr(ir_text, "tile.num_ctas", ctas if ctas and ctas > 1 else None)


def _with_kernel_attr(ir_text, name, value):
    if value is None:
        return ir_text
    return _KERNEL_ATTRS.sub(lambda m: f"{m.group(0)}, {name} = {int(value)} : i32",
                             ir_text, count=1)


# -- tile's own code generation hints (num_stages, ws_registers,
# defer_mma_waits, tied_wgmma_fence, ping_pong): checked here, acted on by the
# compiler's options.

MAX_NUM_STAGES = 16  # the compiler's limit (CompileOptions.numStages)


MAX_NUM_WARPS = 32  # 1024 threads, CUDA's most a block can have


def check_num_warps(num_warps):
    """None or 0 (the compiler chooses), or a power of two from 1 to
    MAX_NUM_WARPS (the layouts split tiles over warps in powers of two:
    num_warps=3 reached the compiler and failed there as a compiler bug)."""
    if num_warps is None or (num_warps.__class__ is int and num_warps == 0):
        return
    if (num_warps.__class__ is not int or not 1 <= num_warps <= MAX_NUM_WARPS
            or num_warps & (num_warps - 1)):
        raise TileValueError(f"num_warps must be None, 0 (the compiler chooses) or a power "
                             f"of two from 1 to {MAX_NUM_WARPS}, got {num_warps!r}",
                             location=user_location())


def check_num_stages(num_stages):
    """None, or an int 0..MAX_NUM_STAGES (0: the compiler chooses)."""
    if num_stages is None:
        return
    if num_stages.__class__ is not int or not 0 <= num_stages <= MAX_NUM_STAGES:
        raise TileValueError(f"num_stages must be None or an int from 0 (the compiler "
                             f"chooses) to {MAX_NUM_STAGES}, got {num_stages!r}",
                             location=user_location())


def check_ws_registers(split):
    """None, or (P, C): two multiples of 8 from 24 to 256 (setmaxnreg's
    range), returned as a tuple."""
    if split is None:
        return None
    if _backend.is_register_split(split):
        return tuple(split)
    raise TileValueError(f"ws_registers must be None or (producer, consumer) registers per "
                         f"thread, two multiples of 8 from 24 to 256, got {split!r}",
                         location=user_location())


def check_defer_mma_waits(value):
    """None, False, True or "in-place"."""
    if not (value is None or value is False or value is True
            or (isinstance(value, str) and value == "in-place")):
        raise TileValueError(f"defer_mma_waits must be None, False, True or 'in-place', "
                             f"got {value!r}", location=user_location())


def _check_optional_bool(name, value):
    if not (value is None or value is False or value is True):
        raise TileValueError(f"{name} must be None, False or True, got {value!r}",
                             location=user_location())


def check_tied_wgmma_fence(value):
    """None, False or True."""
    _check_optional_bool("tied_wgmma_fence", value)


def check_ping_pong(value):
    """None, False or True."""
    _check_optional_bool("ping_pong", value)


def defer_mma_waits_options(value):
    """The compile options of a defer_mma_waits hint (None: none)."""
    if value is None:
        return {}
    return {"defer_mma_waits": value is not False, "move_deferred_mmas": value is True}
