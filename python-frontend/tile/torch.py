"""tile kernels inside PyTorch programs (docs/torch.md).

`import tile` never imports torch; `import tile.torch` does, and then:

- `tile.torch.custom_op(name, mutates_args=...)` registers a Python function
  that allocates its outputs with torch and launches tile kernels as a
  PyTorch custom op (`torch.library.custom_op` underneath). Its fake (meta)
  implementation is derived by running the function on fake tensors with
  the kernel launches skipped (so outputs allocated from the inputs' shapes
  need no extra code), or given with `fake=`. Autograd is torch's own
  `op.register_autograd(backward, setup_context=...)`; a backward may launch
  tile kernels directly or call other tile custom ops.
- a plain `kernel[grid](*args)` is traceable: under `torch.compile` (Dynamo,
  fullgraph too) and under AOT/make_fx tracing (a custom op's backward, a
  `torch.export`) it becomes one call of the opaque custom op `tile::launch`
  that names the kernel and the tensors it writes (found from the traced
  IR), so functionalization, Inductor and CUDA graphs order it like any op.

How a traced launch works: kernel.py hands a launch whose arguments include
fake or functional tensors to `traced_launch` (no real data exists while
tracing); it records the call's layout (which parameter is which tensor,
SymInt, float or constant) under a string id and calls `tile::launch(id,
grid, written, read, ints, floats)`. At run time that op's real kernel
rebuilds the arguments and launches `kernel[grid](...)` through the usual
launch path. The ids carry a per-process token, so a graph compiled in one
process never matches another's on-disk cache entry.
"""

import functools
import importlib
import itertools
import sys
import threading
import uuid

import torch

from . import interop
from .errors import TileLaunchError, TileTypeError, user_location

# The module (`tile.kernel` the attribute is the decorator).
_kernel = importlib.import_module(".kernel", __package__)

__all__ = ["custom_op", "traced_launch", "launches_skipped", "install_dynamo_hooks"]

_state = threading.local()  # .skip: a derived fake implementation is running


def launches_skipped():
    """True while a derived fake implementation runs (launches do nothing)."""
    return getattr(_state, "skip", 0) > 0


class _SkippingLaunches:
    def __enter__(self):
        _state.skip = getattr(_state, "skip", 0) + 1

    def __exit__(self, *exc):
        _state.skip -= 1


# -- tile.torch.custom_op ------------------------------------------------------

def custom_op(name, fn=None, /, *, mutates_args, device_types=None, schema=None, fake=None):
    """`@tile.torch.custom_op("mylib::op", mutates_args=())` over a function
    that launches tile kernels: a `torch.library.custom_op` whose fake
    implementation is `fake`, or else the function itself run with its tile
    launches skipped (it must then allocate its outputs with torch from the
    inputs' shapes, and read no tensor data). Returns torch's CustomOpDef:
    call it, `register_autograd` on it, `torch.library.opcheck` it."""
    def wrap(f):
        op = torch.library.custom_op(name, f, mutates_args=mutates_args,
                                     device_types=device_types, schema=schema)
        op.register_fake(fake if fake is not None else _derived_fake(f))
        return op
    return wrap if fn is None else wrap(fn)


def _derived_fake(f):
    @functools.wraps(f)
    def fake_impl(*args, **kwargs):
        with _SkippingLaunches():
            return f(*args, **kwargs)
    return fake_impl


# -- traced launches: the tile::launch op ----------------------------------------

_TOKEN = uuid.uuid4().hex[:12]
_ids = itertools.count()
_specs = {}        # spec id -> (kernel, layout)
_spec_ids = {}     # (kernel index, layout) -> spec id
_spec_lock = threading.Lock()


@torch.library.custom_op("tile::launch", mutates_args=("written",))
def _launch_op(spec: str, grid: list[int], written: list[torch.Tensor],
               read: list[torch.Tensor], ints: list[int], floats: list[float]) -> None:
    entry = _specs.get(spec) or _resolve(spec)
    kern, layout = entry
    args = _rebuild(layout, written, read, ints, floats)
    kern[tuple(grid)](*args)


@_launch_op.register_fake
def _launch_fake(spec, grid, written, read, ints, floats):
    return None


def _rebuild(layout, written, read, ints, floats):
    pools = {"w": written, "r": read, "i": ints, "f": floats}
    return [value if kind == "c" else pools[kind][value] for kind, value in layout]


def _is_symbolic(v):
    return isinstance(v, (torch.SymInt, torch.SymFloat, torch.SymBool))


def traced_launch(kern, grid, values, stream):
    """kernel[grid](*values) where some value is a fake or functional tensor:
    records a `tile::launch` call (or nothing, inside a derived fake)."""
    if launches_skipped():
        return
    if stream is not None:
        raise TileLaunchError("a launch with stream= cannot be traced by torch.compile",
                              "launch on the current stream: `with torch.cuda.stream(s):` "
                              "around the call", kernel=kern.__name__,
                              location=user_location())
    if callable(grid) and not isinstance(grid, (tuple, list, int)):
        grid = grid(dict(_constants(kern, values)))
    grid = list(grid) if isinstance(grid, (tuple, list)) else [grid]
    grid = [g if isinstance(g, torch.SymInt) else int(g) for g in grid]
    writes = _written_params(kern, values)
    layout, written, read, ints, floats = [], [], [], [], []
    slots = {}  # id(tensor) -> layout entry: a tensor passed twice is one op input
    for (name, const), v in zip(kern.params, values):
        if const:
            layout.append(("c", int(v) if isinstance(v, torch.SymInt) else v))
        elif isinstance(v, torch.Tensor):
            hit = slots.get(id(v))
            if hit is None:
                pool = written if writes is None or name in writes else read
                hit = ("w" if pool is written else "r", len(pool))
                pool.append(v)
                slots[id(v)] = hit
            elif hit[0] == "r" and (writes is None or name in writes):
                raise TileTypeError(f"argument '{name}': a tensor the kernel writes is also "
                                    "passed to a parameter it reads, which torch.compile "
                                    "cannot order", "pass a separate output tensor",
                                    kernel=kern.__name__, location=user_location())
            layout.append(hit)
        elif isinstance(v, torch.SymInt):
            layout.append(("i", len(ints)))
            ints.append(v)
        elif isinstance(v, torch.SymFloat):
            layout.append(("f", len(floats)))
            floats.append(v)
        elif isinstance(v, (bool, int, float)) or v is None:
            layout.append(("c", v))
        else:
            raise TileTypeError(f"argument '{name}': a {type(v).__name__} cannot be passed "
                                "to a kernel traced by torch", "pass tensors, ints, floats "
                                "and bools", kernel=kern.__name__, location=user_location())
    spec = _spec_id(kern, tuple(layout))
    torch.ops.tile.launch(spec, grid, written, read, ints, floats)


def _constants(kern, values):
    return [(name, int(v) if isinstance(v, torch.SymInt) else v)
            for (name, const), v in zip(kern.params, values) if const]


def _spec_id(kern, layout):
    """The launch's name in the graph: "module:qualname|layout" for a kernel
    reachable by name (a graph that torch cached on disk finds it again in
    another process), else "qualname#n@token", valid in this process only."""
    key = (kern._index, layout)
    with _spec_lock:
        spec = _spec_ids.get(key)
        if spec is None:
            spec = _portable_name(kern, layout) or f"{kern.__qualname__}#{next(_ids)}@{_TOKEN}"
            _spec_ids[key] = spec
            _specs[spec] = (kern, layout)
    return spec


def _encode(v):
    if isinstance(v, float):
        return ("float", v.hex())
    if v is None or isinstance(v, (bool, int, str)):
        return v
    raise TypeError


def _decode(v):
    return float.fromhex(v[1]) if isinstance(v, tuple) else v


def _portable_name(kern, layout):
    mod, qual = getattr(kern, "__module__", None), kern.__qualname__
    if not mod or "<" in qual or _lookup(mod, qual) is not kern:
        return None
    try:
        text = repr(tuple((k, _encode(v)) for k, v in layout))
    except TypeError:
        return None
    return f"{mod}:{qual}|{text}"


def _lookup(mod, qual):
    obj = sys.modules.get(mod)
    for part in qual.split("."):
        obj = getattr(obj, part, None)
    return obj


def _resolve(spec):
    """(kernel, layout) of a portable launch name recorded by another process."""
    import ast
    head, _, text = spec.partition("|")
    mod, _, qual = head.partition(":")
    kern = None
    if text and mod:
        try:
            kern = _lookup(mod, qual) or _lookup(importlib.import_module(mod).__name__, qual)
        except ImportError:
            kern = None
    if not isinstance(kern, _kernel.Kernel):
        raise TileLaunchError(f"tile::launch: unknown launch '{spec}' (a graph traced in "
                              "another process, of a kernel not reachable by name)",
                              "define the kernel at module level, or clear torch's "
                              "compile caches", kernel=None)
    layout = tuple((k, _decode(v)) for k, v in ast.literal_eval(text))
    with _spec_lock:
        _specs[spec] = (kern, layout)
    return kern, layout


def _written_params(kern, values):
    """Names of the array parameters the kernel may write, from its traced
    IR (a key with the general alignment facts: which parameters are
    written does not depend on them); None (all) when tracing fails."""
    key = []
    for (name, const), v in zip(kern.params, values):
        if const:
            key.append(_kernel._constant_key(int(v) if isinstance(v, torch.SymInt) else v))
        elif isinstance(v, torch.Tensor):
            dt = interop._torch_dtype(v.dtype)
            key.append(("torch", dt, v.dim(), 0, False, False))
        elif isinstance(v, bool):
            key.append("bool")
        elif isinstance(v, (int, torch.SymInt)):
            key.append("i64")
        else:
            key.append("f32")
    try:
        ir_text = kern._trace(tuple(key))
    except Exception:  # noqa: BLE001 - the real launch reports it
        return None
    return set(_kernel.array_writes(ir_text, kern.params, tuple(key)))


# -- Dynamo: kernel[grid] inside torch.compile ----------------------------------

def _make_nonstrict_launch():
    from torch._dynamo import nonstrict_trace

    @nonstrict_trace
    def launch(index, grid, args, kwargs):
        # Runs under AOT tracing with functional tensors: kernel.py routes
        # the launch to traced_launch.
        _kernel.kernel_by_index(int(index.partition("@")[0]))[grid](*args, **kwargs)
        return 0  # (nonstrict_trace functions cannot return None)
    return launch


_nonstrict_launch = None  # set by install_dynamo_hooks (outside any compile)


def _dynamo_getitem(self, grid):
    """Kernel.__getitem__ while Dynamo compiles: a Python function, so that
    Dynamo inlines it; the launch it returns is a nonstrict_trace call."""
    if torch.compiler.is_dynamo_compiling():
        return functools.partial(_traced_call, f"{self._index}@{_TOKEN}", grid)
    return (self._binder or self._build_launcher())(grid)


def _traced_call(index, grid, *args, stream=None, **kwargs):
    if stream is not None:
        raise TileLaunchError("a launch with stream= cannot be traced by torch.compile",
                              "launch on the current stream: `with torch.cuda.stream(s):` "
                              "around the call", kernel=None)
    _nonstrict_launch(index, grid, args, kwargs)


_hooks_installed = False


def _on_compile_start(_args):
    _kernel.subscript_override = _dynamo_getitem
    _kernel.set_subscript()


def _on_compile_end(_args):
    _kernel.subscript_override = None
    _kernel.set_subscript()


def install_dynamo_hooks():
    """Makes `kernel[grid](...)` traceable by Dynamo: while torch.compile
    compiles, Kernel.__getitem__ is a Python function Dynamo inlines (the
    eager launch path keeps its C subscript). Called on import."""
    global _hooks_installed, _nonstrict_launch
    if _hooks_installed:
        return
    from torch._dynamo.callback import callback_handler
    _nonstrict_launch = _make_nonstrict_launch()
    callback_handler.register_start_callback(_on_compile_start)
    callback_handler.register_end_callback(_on_compile_end)
    _hooks_installed = True


install_dynamo_hooks()
