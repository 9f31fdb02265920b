"""`@tile.kernel`: the Kernel object, specialization keys, the dispatch cache
and the launch path.

The per-call path is `_tile.Dispatcher` (python-frontend/src/Dispatch.cpp)
when the C++ module has it: argument binding, the specialization key (in a
compact form), its own dispatch cache and the launch, in C. Behind it, and
alone without it, is a function generated for each kernel (see
`_make_launcher`): Python's own argument binding, one handler call per
argument (interop.py), a tuple key, one dict lookup, `_tile.Kernel.launch`.
The dispatcher hands every call it does not recognize to that function,
which stays the reference behaviour. Everything else (tracing, compiling,
error messages) runs on a cache miss. TILE_LAUNCHER=python turns the
dispatcher off.
"""

import functools
import inspect
import itertools
import keyword
import operator
import os
import struct
import threading
import weakref

from . import backend as _backend
from . import devices as _devices
from . import global_watch, interop, ir
from .errors import (TileCompilerExecutionError, TileCompilerTimeoutError, TileError,
                     TileLaunchError, TileTypeError,
                     first_python_diagnostic, kernel_scope, replay_command,
                     user_location)
from .specializations import Specializations as _Specializations
from .hints import HINT_DEFAULTS, check_hints, for_target, run_with_timeout, with_target_hints
from .hints import (check_defer_mma_waits, check_num_stages, check_num_warps, check_ping_pong,
                    check_tied_wgmma_fence, check_ws_registers, current_compiler_timeout,
                    defer_mma_waits_options)
from .array_lists import check_parameter_space
from .array_writes import array_writes
from .language import is_constant_annotation
from .rewrite import def_line, rewritten
from .tracer import trace

__all__ = ["Kernel", "CompiledKernel", "kernel", "launch"]

# One native binary per distinct (IR, target, options), shared by kernels.
_binaries = {}
_partial = functools.partial
_MISSING = object()  # an argument the launch did not pass
# Kernels by a small int (tile.torch names them so in traced graphs).
_kernel_ids = itertools.count()
_kernels_by_index = weakref.WeakValueDictionary()

# CUDA's grid limits (x, y, z), held on every backend so that a kernel
# launches the same everywhere (python-frontend/src/Kernel.h checks them too).
MAX_GRID = (2**31 - 1, 65535, 65535)

def kernel(fn=None, /, *, num_ctas=None, occupancy=None, opt_level=3, num_worker_warps=None,
           num_warps=None, backend=None, num_stages=None, ws_registers=None,
           defer_mma_waits=None, tied_wgmma_fence=None, ping_pong=None):
    """`@tile.kernel` or `@tile.kernel(num_warps=None, opt_level=3, backend=None,
    num_stages=None, ws_registers=None, defer_mma_waits=None, tied_wgmma_fence=None,
    ping_pong=None)`;
    cuTile's hints `num_ctas`,
    `occupancy`, `opt_level`, `num_worker_warps` (each a value or a
    `tile.ByTarget`) are checked here (tile/hints.py). `num_stages`: cp.async
    ring slots of mma loops (None or 0: the compiler chooses).
    `ws_registers`: (P, C) registers per thread that a warp-specialized
    kernel's producer warpgroup keeps and its consumers ask for (setmaxnreg;
    None: TILE_WS_REGISTERS or 40, 232). `defer_mma_waits`: a loop's
    warpgroup mmas committed without waiting, each waited for where its
    result is read (True: also issued as early as they can be; "in-place":
    where written; False: off; None: TILE_DEFER_MMA_WAITS).
    `tied_wgmma_fence`: the fence in front of a wgmma whose A is in
    registers carries those fragments, so they are all computed before it
    (False: NVVM's plain fence, ptxas fences the fragments itself; None:
    TILE_TIED_FENCE, on unless 0). `ping_pong`: a warp-specialized
    attention loop's two consumer warpgroups take turns at their wgmmas
    (None: TILE_PING_PONG, off unless 1)."""
    hints = dict(num_ctas=num_ctas, occupancy=occupancy, opt_level=opt_level,
                 num_worker_warps=num_worker_warps)
    check_hints(hints)
    check_num_warps(num_warps)
    check_num_stages(num_stages)
    ws_registers = check_ws_registers(ws_registers)
    check_defer_mma_waits(defer_mma_waits)
    check_tied_wgmma_fence(tied_wgmma_fence)
    check_ping_pong(ping_pong)

    def wrap(f):
        if isinstance(f, Kernel):
            raise TileTypeError(f"'{f.__name__}' is already a @tile.kernel",
                                "decorate the function once", location=user_location())
        if not inspect.isfunction(f):  # the tracer rewrites its source
            raise TileTypeError(f"@tile.kernel decorates a Python function (def or lambda), "
                                f"got {type(f).__name__} {f!r}", location=user_location())
        return Kernel(f, num_warps=num_warps, backend=backend, num_stages=num_stages,
                      ws_registers=ws_registers, defer_mma_waits=defer_mma_waits,
                      tied_wgmma_fence=tied_wgmma_fence, ping_pong=ping_pong, **hints)
    if fn is None:
        return wrap
    if not callable(fn):
        raise TypeError("@tile.kernel decorates a function; pass options by keyword: "
                        "@tile.kernel(num_warps=4)")
    return wrap(fn)


def launch(first, grid=_MISSING, third=_MISSING, fourth=_MISSING, /, *more, stream=None,
           programmatic_dependent_launch=False, **kwargs):
    """`tile.launch(kernel, grid, *args, stream=None)` == `kernel[grid](*args)`,
    or cuTile's `tile.launch(stream, grid, kernel, args)` (args a tuple): a
    first argument that is a kernel selects tile's form. Launches are stream
    ordered; with `programmatic_dependent_launch=True` (CUDA, sm_90) the
    kernel may start before the previous one on the stream ends, and waits
    for it in `tile.grid_dependency_control_wait()` (see _dependent)."""
    if programmatic_dependent_launch.__class__ is not bool:
        raise TileTypeError("tile.launch: programmatic_dependent_launch must be True or "
                            f"False, got {programmatic_dependent_launch!r}",
                            location=user_location())
    args = tuple(a for a in (first, grid, third, fourth) if a is not _MISSING) + more
    if isinstance(first, Kernel):
        kern, rest = first, args[2:]
        if grid is _MISSING:
            raise TileTypeError("tile.launch(kernel, grid, *args): missing the grid",
                                kernel=kern.__name__, location=user_location())
        if programmatic_dependent_launch:
            kern = kern._dependent()
        return kern[grid](*rest, stream=stream, **kwargs)
    if len(args) != 4 or kwargs or stream is not None:
        raise TileTypeError(
            "tile.launch takes (kernel, grid, *args, stream=None) or cuTile's "
            f"(stream, grid, kernel, args); got {len(args)} positional arguments"
            + (f" and keywords {', '.join(kwargs)}" if kwargs else ""),
            "the first argument is a @tile.kernel, or the stream with the kernel third",
            location=user_location())
    stream, grid, kern, kernel_args = args
    if not isinstance(kern, Kernel):
        raise TileTypeError(f"tile.launch(stream, grid, kernel, args): the kernel must be a "
                            f"@tile.kernel function, got {kern!r}", location=user_location())
    if kernel_args.__class__ is not tuple:
        raise TileTypeError("tile.launch(stream, grid, kernel, args): args must be a tuple, "
                            f"got a {type(kernel_args).__name__}", "e.g. (x, y, out)",
                            kernel=kern.__name__, location=user_location())
    if programmatic_dependent_launch:
        kern = kern._dependent()
    return kern[grid](*kernel_args, stream=stream)


_FLOAT_CONSTANTS = {}  # bit pattern -> one float object: NaN keys equal to themselves


def _constant_key(v):
    """A Constant's key part, (class, value[, bits]). Floats are told apart by
    their bits: -0.0 == 0.0 would share one binary (a Constant -0.0 ran the
    kernel compiled for 0.0), and nan != nan would compile on every call."""
    if v.__class__ is float:
        bits = struct.pack("<d", v)
        return (float, _FLOAT_CONSTANTS.setdefault(bits, v), bits)
    return (v.__class__, v)


class CompiledKernel:
    """One specialization: what `kernel.compile(...)` returns and what the
    dispatch cache holds. `.asm` maps stage names to text ("tile" is the
    traced IR; `_tile` adds the later stages of its target, e.g. "fused",
    "tiled", "mapped", "pipelined", "gpu", "nvvm", "ptx", "cubin": see tilec
    --list-stages)."""

    __slots__ = ("kernel", "name", "key", "constants", "ir", "asm", "backend", "target",
                 "num_warps", "shared_mem", "binary", "_launch", "_stream_fn", "written",
                 "device", "watch")

    def __init__(self, kern, key, constants, ir_text, backend, target):
        self.kernel = kern
        self.name = kern.__name__
        self.key = key
        self.constants = constants
        self.ir = ir_text
        self.asm = {"tile": ir_text}
        self.backend = backend
        self.target = target
        self.num_warps = kern.num_warps or 0
        self.shared_mem = 0
        self.binary = None
        self.watch = ()  # the globals the trace read (global_watch.py)
        self._launch = self._no_binary
        self._stream_fn = None
        # Array parameters the kernel may write: read-only arrays are refused there.
        self.written = frozenset(array_writes(ir_text, kern.params, key))
        if backend == "cuda" and any(isinstance(p, tuple) and str(p[0]).startswith("torch")
                                     for p in key):
            self._stream_fn = interop.torch_stream_getter()
        # With several GPUs visible, torch tensors' key parts name their device.
        self.device = next((interop.torch_device_of(p) for p in key
                            if interop.torch_device_of(p) is not None), None)

    def _attach(self, binary):
        self.binary = binary
        asm = dict(getattr(binary, "asm", {}) or {})
        asm["tile"] = self.ir
        self.asm = asm
        self.num_warps = getattr(binary, "num_warps", self.num_warps)
        self.shared_mem = getattr(binary, "shared_mem", 0)
        self._launch = getattr(binary, "fast_launch", None) or binary.launch
        if getattr(self.kernel, "_launches_dependent", False) and \
                hasattr(binary, "launch_dependent"):
            self._launch = binary.launch_dependent

    def _no_binary(self, grid, args, stream):
        _backend.require(f"launching kernel '{self.name}'")
        raise TileLaunchError(f"kernel '{self.name}' was traced but not compiled")

    def run(self, grid, flat, stream):
        """The hot path after the cache lookup."""
        if grid.__class__ is tuple and len(grid) == 1 and grid[0].__class__ is int \
                and 0 < grid[0] <= MAX_GRID[0]:
            grid = (grid[0], 1, 1)
        else:
            grid = self._grid3(grid)
            if grid is None:
                return  # an empty grid launches nothing
        if self.device is not None:
            return _devices.run_on_device(self, grid, flat, stream)
        if stream is None:
            sf = self._stream_fn
            stream = sf() if sf is not None else 0
        elif stream.__class__ is not int:
            stream = self._stream_of(stream)
        try:
            self._launch(grid, tuple(flat), stream)
        except Exception as e:
            raise self._launch_error(e) from None

    def _stream_of(self, stream):
        """The raw handle of a `stream=` that is not an int."""
        try:
            return interop.stream_of(stream)
        except interop.ArgError as e:
            raise TileTypeError(f"argument 'stream': {e}", e.hint, kernel=self.name,
                                location=user_location()) from None

    def _launch_error(self, e):
        if isinstance(e, TileError):
            return e
        return TileLaunchError(f"the launch failed: {type(e).__name__}: {e}",
                               "check the arguments and the grid; driver errors can "
                               "come from an earlier asynchronous launch",
                               kernel=self.name, location=user_location())

    def _grid3(self, grid):
        """(x, y, z) of a launch's grid; None when it runs no block."""
        g = grid
        if callable(g) and not isinstance(g, (tuple, list, int)):
            g = g(dict(self.constants))
        if isinstance(g, (tuple, list)):
            if not 1 <= len(g) <= 3:
                raise TileLaunchError(f"a grid has 1 to 3 dimensions, got {tuple(g)!r}",
                                      kernel=self.name, location=user_location())
            g = tuple(g) + (1,) * (3 - len(g))
        else:
            g = (g, 1, 1)
        dims = []
        for axis, n, limit in zip("xyz", g, MAX_GRID):
            try:
                n = operator.index(n)  # ints and NumPy ints; not 4.5 nor "4"
            except TypeError:
                raise TileLaunchError(f"the grid must hold ints, got {grid!r} (grid "
                                      f"dimension {axis} is a {type(n).__name__})",
                                      "e.g. kernel[(tile.cdiv(n, BLOCK),)](...)",
                                      kernel=self.name, location=user_location()) from None
            if n < 0:
                raise TileLaunchError(f"the grid {g} has a negative dimension",
                                      kernel=self.name, location=user_location())
            if n > limit:
                raise TileLaunchError(
                    f"grid dimension {axis} is {n}, above its limit of {limit} blocks "
                    "(CUDA's limits, x < 2**31 and y, z < 2**16, hold on every backend)",
                    "put the largest dimension first, or have each block do more work "
                    "(a tile.range loop)", kernel=self.name, location=user_location())
            dims.append(n)
        return None if min(dims) == 0 else tuple(dims)

    def launch(self, grid, *args, stream=None, **kwargs):
        """Launches through the kernel (re-checking the specialization)."""
        return self.kernel[grid](*args, stream=stream, **kwargs)

    def __repr__(self):
        return f"<CompiledKernel {self.name} for {self.target}>"


class Kernel:
    """A traced-on-demand kernel: `kernel[grid](*args, stream=None)`."""

    def __init__(self, fn, num_warps=None, opt_level=3, backend=None, num_stages=None,
                 ws_registers=None, defer_mma_waits=None, tied_wgmma_fence=None,
                 ping_pong=None, **hints):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self.num_warps = num_warps
        self.num_stages = num_stages  # None: the compiler chooses
        self.ws_registers = ws_registers  # None: the environment's split
        self.defer_mma_waits = defer_mma_waits  # None: the environment's
        self.tied_wgmma_fence = tied_wgmma_fence  # None: the environment's
        self.ping_pong = ping_pong  # None: the environment's
        self.opt_level = opt_level  # an int, or a tile.ByTarget of ints
        self.backend = backend
        self.hints = dict(HINT_DEFAULTS, **hints, opt_level=opt_level)
        self.cache = _Specializations()  # specialization key -> CompiledKernel
        self.compile_count = 0   # traces+compiles done (tests check reuse)
        self._fast = None        # the Python launcher, without a dispatcher
        self._binder = None      # grid -> kernel[grid]
        self._dispatcher = None  # _tile.Dispatcher, when used
        self._backend_name = None
        # Cold first calls from several threads set up, trace and compile once.
        self._first_call_lock = threading.RLock()
        self._signature = inspect.signature(fn)
        self.params = []         # [(name, is_constant)]
        self._index = next(_kernel_ids)
        _kernels_by_index[self._index] = self
        for p in self._signature.parameters.values():
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise TileTypeError(f"kernel parameters cannot be *{p.name} / **{p.name}",
                                    "list every parameter explicitly",
                                    kernel=fn.__name__, location=self._def_location())
            if p.name == "stream" or p.name.startswith("__tile_"):
                raise TileTypeError(f"kernel parameter name '{p.name}' is reserved "
                                    "(`stream=` selects the launch stream)",
                                    "rename the parameter", kernel=fn.__name__,
                                    location=self._def_location())
            self.params.append((p.name, is_constant_annotation(p.annotation)))

    # -- calling ---------------------------------------------------------
    def __getitem__(self, grid):
        # The dispatcher's bound launcher, or a C-level partial of the
        # generated launcher: no Python frame of ours between the user's call
        # and the launch path. Once `_tile` is in use, `_install_subscript`
        # replaces this method with the same code in C (Dispatch.cpp).
        return (self._binder or self._build_launcher())(grid)

    def __call__(self, *args, **kwargs):
        if ir.current() is not None:  # a kernel called from a kernel: inline it
            fn = self._traceable()
            global_watch.record(fn)
            return fn(*args, **kwargs)
        raise TypeError(
            f"kernel '{self.__name__}' must be launched with a grid: "
            f"{self.__name__}[grid](*args), e.g. {self.__name__}[(tile.cdiv(n, BLOCK),)](...), "
            "or tile.launch(kernel, grid, *args)")

    def __repr__(self):
        return f"<tile.kernel {self.__name__}>"

    def replace_hints(self, **hints):
        """A new kernel of the same function with these hints changed (cuTile's
        num_ctas, occupancy, opt_level, num_worker_warps; tile's num_warps,
        num_stages, ws_registers, defer_mma_waits, tied_wgmma_fence, ping_pong
        and backend); it compiles and caches on its own."""
        own = {k: hints.pop(k) for k in ("num_warps", "backend", "num_stages", "ws_registers",
                                         "defer_mma_waits", "tied_wgmma_fence", "ping_pong")
               if k in hints}
        merged = dict(self.hints, **hints)
        check_hints(merged)
        check_num_warps(own.get("num_warps", self.num_warps))
        num_stages = own.get("num_stages", self.num_stages)
        check_num_stages(num_stages)
        defer = own.get("defer_mma_waits", self.defer_mma_waits)
        check_defer_mma_waits(defer)
        tied = own.get("tied_wgmma_fence", self.tied_wgmma_fence)
        check_tied_wgmma_fence(tied)
        ping_pong = own.get("ping_pong", self.ping_pong)
        check_ping_pong(ping_pong)
        return Kernel(self.fn, num_warps=own.get("num_warps", self.num_warps),
                      backend=own.get("backend", self.backend), num_stages=num_stages,
                      ws_registers=check_ws_registers(own.get("ws_registers",
                                                              self.ws_registers)),
                      defer_mma_waits=defer, tied_wgmma_fence=tied, ping_pong=ping_pong,
                      **merged)

    def codegen_hint_options(self):
        """The compile options this kernel's ws_registers, defer_mma_waits,
        tied_wgmma_fence and ping_pong hints set (those at None set none)."""
        options = defer_mma_waits_options(self.defer_mma_waits)
        if self.ws_registers is not None:
            options["ws_registers"] = self.ws_registers
        if self.tied_wgmma_fence is not None:
            options["tied_fence"] = self.tied_wgmma_fence
        if self.ping_pong is not None:
            options["ping_pong"] = self.ping_pong
        return options

    def _dependent(self):
        """The same kernel launched as a programmatic dependent launch: its
        own specializations (binaries are shared through the compile memo),
        whose launch is `launch_dependent` (cuLaunchKernelEx with
        programmatic stream serialization; a plain launch on the CPU)."""
        with self._first_call_lock:
            dep = self.__dict__.get("_dependent_kernel")
            if dep is None:
                dep = Kernel(self.fn, num_warps=self.num_warps, backend=self.backend,
                             num_stages=self.num_stages, ws_registers=self.ws_registers,
                             defer_mma_waits=self.defer_mma_waits,
                             tied_wgmma_fence=self.tied_wgmma_fence,
                             ping_pong=self.ping_pong, **self.hints)
                dep._launches_dependent = True
                self._dependent_kernel = dep
        return dep

    # -- tracing and compiling -------------------------------------------
    def _def_location(self):
        return (self.fn.__code__.co_filename, def_line(self.fn), 1)

    def _traceable(self):
        from .loops import RUNTIME
        return rewritten(self.fn, RUNTIME, strip_decorators=True) or self.fn

    def _resolve_backend(self):
        if self._backend_name is None:
            with kernel_scope(self.__name__):
                self._backend_name = _backend.resolve(self.backend)
        return self._backend_name

    def _constants(self, key):
        return {name: part[1] for (name, const), part in zip(self.params, key) if const}

    def _trace(self, key, watch=None):
        fn = self._traceable()  # rewrites first, so the def line is known
        return trace(self.__name__, fn, self.params, key, self._def_location(), watch)

    def _specialize(self, key, need_binary):
        """Traces and (when _tile is present) compiles one key."""
        with kernel_scope(self.__name__):
            watch = []
            text = self._trace(key, watch)  # first: tracing errors need no _tile
            backend = self._resolve_backend()
            # Torch tensors on cuda:N (several GPUs visible) name N in the key.
            device = next((d for d in map(interop.torch_device_of, key) if d is not None),
                          None)
            target = _backend.target_for(backend, device) if _backend.load() is not None \
                else backend
            ck = CompiledKernel(self, key, self._constants(key), text, backend, target)
            ck.watch = watch[0]
            mod = _backend.require(f"launching kernel '{self.__name__}'") if need_binary \
                else _backend.load()
            if mod is not None and target.startswith("sm_"):
                check_parameter_space(self.__name__, self.params, key)
            if mod is not None:
                ck._attach(self._native_compile(mod, text, target))
        self.compile_count += 1
        return ck

    def _native_compile(self, mod, text, target):
        options = _backend.compile_options(self.num_warps,
                                           for_target(self.opt_level, target, 3),
                                           self.num_stages)
        options.update(self.codegen_hint_options())  # the kernel's own hints win
        # occupancy (blocks per SM, nvvm.minctasm) and num_ctas (clusters)
        text = with_target_hints(text, self.hints, target)
        bkey = (text, target, tuple(sorted(options.items())))
        binary = _binaries.get(bkey)
        if binary is not None and not options["always_compile"]:
            return binary
        timeout = current_compiler_timeout()
        try:
            binary = run_with_timeout(lambda: mod.compile(text, target, options), timeout)
        except TimeoutError:
            raise TileCompilerTimeoutError(
                f"compiling for {target} took longer than {timeout:g} s",
                "raise the limit of tile.compiler_timeout", kernel=self.__name__,
                location=self._def_location()) from None
        except Exception as e:
            if type(e).__name__ != "CompileError" and not isinstance(
                    e, getattr(mod, "CompileError", ())):
                raise
            raise self._compile_error(e, target) from None
        _binaries[bkey] = binary
        return binary

    def _compile_error(self, e, target=None):
        stage = getattr(e, "stage", "") or "?"
        repro = getattr(e, "reproducer", "") or ""
        diags = str(e)
        hit = first_python_diagnostic(diags)
        loc = (hit[0], hit[1], 0) if hit else self._def_location()
        lines = diags.strip().splitlines() or ["compilation failed"]
        what = hit[2] if hit else lines[0]
        msg = f"compilation failed in stage '{stage}': {what}"
        rest = diags.strip() if hit else "\n".join(lines[1:])
        if rest and rest != what:
            msg += "\n" + rest
        # The reproducer is the failing stage's input; tilec resumes there.
        hint = ("this is a compiler bug if the kernel is valid; replay the failing stage "
                f"from its reproducer: {replay_command(repro, stage, target)}" if repro else
                "set TILE_DUMP_DIR to keep every stage's IR for a bug report")
        if "a block can have" in what:  # the compiler's shared-memory limit: the user's choice
            hint = ("the kernel's tiles and stages need more shared memory than a block has; "
                    "lower num_stages or the tile shapes (the autotuner skips such configs)")
        return TileCompilerExecutionError(msg, hint, stage=stage, reproducer=repro,
                                diagnostics=diags, kernel=self.__name__, location=loc)

    def _cached(self, key):
        """The cached CompiledKernel of `key`, unless a global its trace read
        has changed since (global_watch.py)."""
        ck = self.cache.get(key)
        return None if ck is None or global_watch.changed(ck.watch) else ck

    def _miss(self, key, args):
        ck = self._cached(key)
        if ck is None or ck.binary is None:
            with self._first_call_lock:
                ck = self._cached(key)  # another thread may have compiled it
                if ck is None or ck.binary is None:
                    ck = self._specialize(key, need_binary=True)
                    self.cache[key] = ck
        return ck

    def _launch_miss(self, key, args, stream=None):
        """_miss for a launch's key. A key with read-only arrays launches the
        writable key's kernel, and is refused where the kernel writes one of
        them; either way only once per key (then the key is cached). Fake or
        functional torch tensors (torch is tracing) make a traced launch."""
        if interop.TRACED in key:
            return _devices.TracedLaunch(self, args)
        _devices.check_devices(self, key)
        base = interop.writable_key(key)
        ck = self._cached(base)
        if ck is None or ck.binary is None:
            _devices.refuse_in_capture(self, stream)
        ck = self._miss(base, args)
        if base is not key:
            self._check_read_only(ck, key)
            self.cache[key] = ck
        return ck

    def _check_read_only(self, ck, key):
        for (name, const), part in zip(self.params, key):
            if const or part.__class__ is not tuple or part[-1] is not interop.READ_ONLY \
                    or name not in ck.written:
                continue
            op, file, line = array_writes(ck.ir, self.params, ck.key)[name]
            raise TileTypeError(f"argument '{name}': a read-only array was passed to a "
                                f"parameter the kernel writes ({op} at {file}:{line})",
                                "pass a writable array (a copy: np.array(x)); NumPy's "
                                "x.flags.writeable = True is only safe for memory you own",
                                kernel=self.__name__, location=user_location())

    def _duplicate_error(self, name):
        names = ", ".join(n for n, _ in self.params)
        raise TileTypeError(
            f"wrong arguments for {self.__name__}({names}): parameter '{name}' was given "
            "more than once (by position and by keyword)", "pass each parameter once",
            kernel=self.__name__, location=user_location())

    def _bind(self, args, kwargs):
        """Every parameter's value, in order (slow path)."""
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise self._signature_error(args, kwargs, e) from None
        bound.apply_defaults()
        return [bound.arguments[n] for n, _ in self.params]

    def _key(self, values, handlers):
        flat, key = [], []
        for (name, const), v in zip(self.params, values):
            if const:
                try:
                    hash(v)
                except TypeError:
                    raise TileTypeError(f"Constant parameter '{name}' got an unhashable "
                                        f"{type(v).__name__}", "pass a tuple instead of a "
                                        "list", kernel=self.__name__) from None
                key.append(_constant_key(v))
            else:
                try:
                    h = handlers.get(type(v)) or handlers.slow
                    key.append(h(v, flat))
                except interop.ArgError as e:
                    raise self._arg_exception(e, name) from e.__cause__
        return interop.writable_key(tuple(key)), flat

    def compile(self, *args, **constants):
        """Traces and compiles for these arguments; returns a CompiledKernel
        whose `.asm["tile"]` is the traced IR (even without `_tile`)."""
        values = self._bind(args, constants)
        key, _ = self._key(values, interop.handlers("any"))
        ck = self._cached(key)
        if ck is None:
            with self._first_call_lock:
                ck = self._cached(key)
                if ck is None:
                    ck = self._specialize(key, need_binary=False)
                    self.cache[key] = ck
        return ck

    def trace(self, *args, **constants):
        """The traced IR text for these arguments (no compilation)."""
        values = self._bind(args, constants)
        key, _ = self._key(values, interop.handlers("any"))
        return self._trace(key)

    # -- the launcher ----------------------------------------------------
    def _build_launcher(self):
        """Sets up the per-call path; returns `grid -> kernel[grid]`."""
        with self._first_call_lock:
            if self._binder is None:
                self._setup_launcher()
        return self._binder

    def _setup_launcher(self):
        backend = self._resolve_backend()
        handlers = interop.handlers(backend)
        self._dispatcher = _make_dispatcher(self, handlers)
        if self._dispatcher is not None:
            self._binder = self._dispatcher.bind
        else:  # (a dispatcher holds the Python launcher it falls back to)
            self._fast = _make_launcher(self, handlers)
            self._binder = _partial(_partial, self._fast)

    def _arg_exception(self, e, name):
        cls = TileTypeError if e.kind == "type" else TileLaunchError
        return cls(f"argument '{name}': {e}", e.hint, kernel=self.__name__,
                   location=user_location())

    def _argument_error(self, e, values):
        """Finds which argument a handler rejected, to name it."""
        h = interop.handlers(self._resolve_backend())
        for (name, const), v in zip(self.params, values):
            if const:
                continue
            try:
                (h.get(type(v)) or h.slow)(v, [])
            except interop.ArgError as err:
                raise self._arg_exception(err, name) from err.__cause__
        raise self._arg_exception(e, "?") from e.__cause__

    def _binding_error(self, extra, kwargs, values):
        names = [n for n, _ in self.params]
        if extra:
            npos = sum(1 for p in self._signature.parameters.values()
                       if p.kind is not p.KEYWORD_ONLY)
            which = "arguments" if npos == len(names) else "positional arguments"
            why = f"takes {npos} {which} but {npos + len(extra)} were given"
        elif kwargs:
            why = f"got unexpected keyword argument(s) {', '.join(map(repr, kwargs))}"
        else:
            missing = [n for n, v in zip(names, values) if v is _MISSING]
            why = f"missing argument(s) {', '.join(map(repr, missing))}"
        raise TileTypeError(
            f"wrong arguments for {self.__name__}({', '.join(names)}): {why}",
            "pass every parameter (Constants may be passed by keyword, e.g. BLOCK=1024)",
            kernel=self.__name__, location=user_location()) from None

    def _type_error(self, e, values):
        if isinstance(e, TileError) or "unhashable" not in str(e):
            raise e
        self._key(values, interop.handlers("any"))  # raises the named error
        raise e

    def _signature_error(self, args, kwargs, e):
        names = ", ".join(n for n, _ in self.params)
        return TileTypeError(
            f"wrong arguments for {self.__name__}({names}): {_why(e)}",
            "pass every parameter (Constants may be passed by keyword, e.g. BLOCK=1024)",
            kernel=self.__name__, location=user_location())


def _why(e):
    """A TypeError from argument binding, without the function's name."""
    text = str(e)
    return text.split("() ", 1)[1] if "() " in text else text


def _make_dispatcher(kern, handlers):
    """The `_tile.Dispatcher` of a kernel, or None (no `_tile`, an old one,
    or TILE_LAUNCHER=python)."""
    if os.environ.get("TILE_LAUNCHER", "").strip().lower() == "python":
        return None
    try:
        mod = _backend.load()
    except Exception:  # noqa: BLE001 - a broken _tile: the Python path reports it
        return None
    cls = getattr(mod, "Dispatcher", None) if mod is not None else None
    if cls is None:
        return None
    params = list(kern._signature.parameters.values())
    npos = sum(1 for p in params if p.kind != p.KEYWORD_ONLY)
    defaults = tuple(_MISSING if p.default is p.empty else p.default for p in params)
    d = cls(names=tuple(p.name for p in params),
            constants=tuple(const for _, const in kern.params),
            defaults=defaults, missing=_MISSING, npos=npos,
            kind=interop.fast_kind(handlers), dtype=interop.fast_dtype,
            slow=_make_launcher(kern, handlers, return_entry=True))
    kern.cache._on_change = d.invalidate
    _install_subscript(cls)
    return d


_PY_SUBSCRIPT = Kernel.__dict__["__getitem__"]
_c_subscript = None         # the C one, once `_tile`'s dispatcher is in use
subscript_override = None   # tile.torch's, while torch.compile's Dynamo runs


def _install_subscript(dispatcher_cls):
    """Kernel.__getitem__ in C, once `_tile` is in use: `kernel[grid]` then
    runs no Python frame (the C one does what Kernel.__getitem__ does, for
    every launcher; see Dispatch.cpp)."""
    global _c_subscript
    sub = getattr(dispatcher_cls, "kernel_subscript", None)
    if sub is not None:
        _c_subscript = sub
    set_subscript()


def set_subscript():
    """Installs the Kernel.__getitem__ in force: tile.torch's override, else
    the C one, else the Python one."""
    want = subscript_override or _c_subscript or _PY_SUBSCRIPT
    if Kernel.__dict__["__getitem__"] is not want:
        Kernel.__getitem__ = want


def kernel_by_index(index):
    """The live kernel whose `_index` this is (tile.torch's traced launches)."""
    return _kernels_by_index[index]


def _make_launcher(kern, handlers, return_entry=False):
    """A function specialized to the kernel's signature, named after it:
    launch(grid, <params>, *, stream=None) -> key, cache lookup, run.
    Parameters default to a sentinel so that missing ones are reported by
    us; generated names start with __tile_ so they cannot clash. Positional
    arguments bind to positional-only slots and keywords to keyword-only
    parameters of the kernel's names, so that one given both ways reaches
    us (Python would raise its own TypeError). With `return_entry` (the
    dispatcher's), it returns the CompiledKernel it launched."""
    params = list(kern._signature.parameters.values())
    names = [p.name for p in params]
    slots, merge, defaults = [], [], {}
    for i, p in enumerate(params):
        if p.kind != p.KEYWORD_ONLY:
            slots.append(f"__tile_p{i}=__tile_M")
            merge.append(f"    if __tile_p{i} is not __tile_M:\n"
                         f"        if {p.name} is not __tile_M:\n"
                         f"            __tile_K._duplicate_error({p.name!r})\n"
                         f"        {p.name} = __tile_p{i}\n")
        if p.default is not p.empty:
            defaults[f"__tile_d{i}"] = p.default
            merge.append(f"    if {p.name} is __tile_M:\n        {p.name} = __tile_d{i}\n")
    sig = ", ".join(["__tile_grid"] + slots + ["/", "*__tile_extra"]
                    + [f"{n}=__tile_M" for n in names] + ["stream=None", "**__tile_kw"])
    values = "(" + "".join(n + ", " for n in names) + ")"
    missing = " or ".join(f"{n} is __tile_M" for n in names) or "False"
    body, keyparts = [], []
    for i, (p, (_, const)) in enumerate(zip(params, kern.params)):
        if const:
            keyparts.append(f"(({p.name}.__class__, {p.name}) if {p.name}.__class__ is not "
                            f"float else __tile_CK({p.name}))")
        else:
            body.append(f"        __tile_k{i} = (__tile_H(__tile_T({p.name})) or __tile_S)"
                        f"({p.name}, __tile_F)\n")
            keyparts.append(f"__tile_k{i}")
    key = "(" + "".join(k + ", " for k in keyparts) + ")"
    fname = kern.__name__ if kern.__name__.isidentifier() and \
        not keyword.iskeyword(kern.__name__) else "launch"
    src = (
        f"def {fname}({sig}):\n"
        + "".join(merge)
        + f"    if __tile_extra or __tile_kw or {missing}:\n"
        f"        __tile_K._binding_error(__tile_extra, __tile_kw, {values})\n"
        "    __tile_F = []\n"
        "    try:\n"
        + "".join(body)
        + f"        __tile_key = {key}\n"
        "        __tile_e = __tile_C(__tile_key)\n"
        "    except __tile_ArgError as __tile_err:\n"
        f"        __tile_K._argument_error(__tile_err, {values})\n"
        "    except TypeError as __tile_err:\n"
        f"        __tile_K._type_error(__tile_err, {values})\n"
        "    if __tile_e is None or __tile_G(__tile_e.watch):\n"
        f"        __tile_e = __tile_K._launch_miss(__tile_key, {values}, stream)\n"
        + ("    __tile_e.run(__tile_grid, __tile_F, stream)\n    return __tile_e\n"
           if return_entry else "    return __tile_e.run(__tile_grid, __tile_F, stream)\n")
    )
    ns = dict(defaults, __tile_M=_MISSING, __tile_H=handlers.get, __tile_S=handlers.slow,
              __tile_T=type, __tile_C=kern.cache.get, __tile_G=global_watch.checker(),
              __tile_K=kern, __tile_CK=_constant_key,
              __tile_ArgError=interop.ArgError)
    exec(compile(src, f"<tile launcher for {kern.__name__}>", "exec"), ns)
    return ns[fname]
