"""The C++ module `tile._tile`, found lazily, and backend selection.

`import tile` must work without `_tile` (not built yet) and without a GPU, so
nothing here runs at import time.
"""

import glob
import importlib
import importlib.machinery
import importlib.util
import os
import sys
import threading

_PKG_DIR = os.path.dirname(os.path.abspath(__file__))
_module = None
_searched = False
_error = None
# Threads' first calls load once (another thread would see the half-initialized
# module that _load_file has put in sys.modules).
_load_lock = threading.Lock()


def _candidates():
    """Built `_tile` extensions outside the package, for a source checkout
    whose CMake build put the module in build*/ (newest first)."""
    root = os.path.dirname(os.path.dirname(_PKG_DIR))
    dirs = [os.environ.get("TILE_EXT_DIR", "")]
    dirs += glob.glob(os.path.join(root, "build*", "python-frontend", "tile"))
    dirs += glob.glob(os.path.join(root, "build*", "python-frontend"))
    dirs += glob.glob(os.path.join(root, "build*", "lib"))
    found = []
    for d in filter(None, dirs):
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            found += glob.glob(os.path.join(d, "_tile" + suffix))
    found.sort(key=os.path.getmtime, reverse=True)
    return found


def _explicit():
    """The `_tile` in $TILE_EXT_DIR, which wins when set (build*/bin/tilec
    sets it to pick its own build's module)."""
    d = os.environ.get("TILE_EXT_DIR", "")
    for suffix in importlib.machinery.EXTENSION_SUFFIXES if d else ():
        path = os.path.join(d, "_tile" + suffix)
        if os.path.exists(path):
            return path
    return None


def find_module_file():
    """Where `_tile` would be loaded from, or None when it is not built."""
    if _explicit():
        return _explicit()
    spec = importlib.util.find_spec("tile._tile")
    if spec is not None:
        return spec.origin
    found = _candidates()
    return found[0] if found else None


def load():
    """The `_tile` module, or None when it is not built. A module that exists
    but fails to import raises (every time): that is a bug, not an absent
    module."""
    if _module is not None or _searched:
        return _module
    with _load_lock:
        return _load_once()


def _load_once():
    global _module, _searched, _error
    if _module is not None or _searched:
        return _module
    if _error is not None:
        raise _error
    try:
        if _explicit():
            _module = _load_file(_explicit())
        elif importlib.util.find_spec("tile._tile") is not None:
            _module = importlib.import_module("tile._tile")
        else:
            found = _candidates()
            if found:
                _module = _load_file(found[0])
    except Exception as e:
        _error = e
        raise
    _searched = True
    return _module


def _load_file(path):
    loader = importlib.machinery.ExtensionFileLoader("tile._tile", path)
    spec = importlib.util.spec_from_file_location("tile._tile", path, loader=loader)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["tile._tile"] = mod
    try:
        loader.exec_module(mod)
    except BaseException:
        del sys.modules["tile._tile"]
        raise
    return mod


def require(what="launching a kernel"):
    from .errors import TileLaunchError
    mod = load()
    if mod is None:
        raise TileLaunchError(
            f"{what} needs the C++ module tile._tile, which is not built",
            "build it: cmake -G Ninja -B build -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir "
            "&& ninja -C build (or pip install .)")
    return mod


def cuda_device_count():
    mod = load()
    if mod is None:
        return 0
    for name in ("cuda_device_count", "device_count"):
        fn = getattr(mod, name, None)
        if fn is not None:
            try:
                return int(fn())
            except Exception:  # no driver: no usable GPU
                return 0
    return 0


def default_backend():
    """TILE_BACKEND, else cuda when a GPU is usable, else cpu."""
    env = os.environ.get("TILE_BACKEND", "").strip().lower()
    if env:
        return resolve(env)
    return "cuda" if cuda_device_count() > 0 else "cpu"


def resolve(name):
    from .errors import TileLaunchError
    if name is None:
        return default_backend()
    n = str(name).strip().lower()
    if n in ("gpu", "nvidia"):
        n = "cuda"
    if n not in ("cuda", "cpu"):
        raise TileLaunchError(f"unknown backend {name!r}", "use 'cuda' or 'cpu' "
                              "(TILE_BACKEND=cuda|cpu)", kernel=None)
    return n


def cuda_target(device=0):
    """'sm_90' when CUDA device `device` is Hopper or newer, else 'sm_80'.
    Asks `_tile.cuda_device_capability(device) -> (major, minor)` when
    present, else torch when it is already imported."""
    mod = load()
    cap = None
    fn = getattr(mod, "cuda_device_capability", None) if mod is not None else None
    if fn is not None:
        try:
            cap = tuple(fn(device))
        except TypeError:
            cap = tuple(fn())
    else:
        torch = sys.modules.get("torch")
        try:
            if torch is not None and torch.cuda.is_available():
                cap = torch.cuda.get_device_capability(device)
        except Exception:  # torch without a working driver
            cap = None
    if cap is None:
        return "sm_80"
    return "sm_90" if cap[0] >= 9 else "sm_80"


def target_for(backend, device=None):
    """The compile target of a launch on `backend`: the architecture of CUDA
    device `device` (None: device 0), so that a program whose GPUs differ
    compiles for each (the disk cache is shared by devices of one
    architecture: the target is part of its key)."""
    return "cpu" if backend == "cpu" else cuda_target(device or 0)


_PIPELINES = ("off", "regs", "async", "tma")


def is_register_split(split):
    """Whether `split` is a (producer, consumer) pair setmaxnreg takes: two
    ints, multiples of 8 from 24 to 256 (TILE_WS_REGISTERS and the
    ws_registers hint both check with this)."""
    return (isinstance(split, (tuple, list)) and len(split) == 2
            and all(r.__class__ is int and 24 <= r <= 256 and r % 8 == 0 for r in split))


def parse_register_split(text):
    """"P,C" as (P, C) when is_register_split takes it, else None
    (TILE_WS_REGISTERS and tilec --ws-registers)."""
    parts = text.split(",")
    if all(p.strip().isdigit() for p in parts):
        split = tuple(int(p) for p in parts)
        if is_register_split(split):
            return split
    return None


def _ws_registers(text):
    """TILE_WS_REGISTERS=P,C as (P, C); empty: (40, 232)."""
    if not text:
        return (40, 232)
    split = parse_register_split(text)
    if split is not None:
        return split
    from .errors import TileValueError
    raise TileValueError(f"TILE_WS_REGISTERS={text!r}: expected P,C, two multiples of 8 "
                         "from 24 to 256 (registers per thread of the producer and the "
                         "consumer warpgroups, e.g. 24,240)")


def codegen_switches():
    """The code-generation switches of the environment (for comparisons and
    debugging), read here into the compile options: the compiler's passes
    never read the environment, and the binary cache key covers them.
    TILE_GPU_PIPELINE=off|regs|async|tma (mma loop pipelining, default tma:
    TMA into mbarrier-guarded rings where an sm_90 wgmma loop's operands
    allow it, else async, cp.async rings), TILE_TMA=0 (the default becomes
    async: the H200 ran the 4096^2 and 8192^2 matmuls 9-11% faster with TMA,
    and the GPU suite passed with it), TILE_WGMMA=0 (mma.sync instead of wgmma on sm_90),
    TILE_NVPTX_SCHED=source (LLVM's source-order scheduling instead of
    register pressure), TILE_WARP_SPECIALIZE=1|0 (a producer warpgroup
    issues the copies of every TMA ring, or of none; by default of
    attention's rings and of matmul rings in a persistent loop:
    tile-warp-specialize), TILE_WS_REGISTERS=P,C (setmaxnreg's split in
    such a kernel: the producer keeps P registers per thread, the consumers
    ask for C; default 40,232; FlashAttention-3 uses 24,240 with two
    consumer warpgroups), TILE_PING_PONG=1 (the
    consumer warpgroups take turns at attention's wgmmas; a kernel's
    ping_pong hint wins), TILE_MMA_OVERLAP=0
    (attention's softmax no longer runs beside the previous iteration's P V:
    tile-overlap-mma-chain), TILE_LATE_OPS_FIRST=1 (in that overlap, O's
    rescale runs before S_j is issued, not while it is in flight, where
    ptxas fenced it before TILE_TIED_FENCE's default:
    tile-overlap-mma-chain's late-ops-first; off until measured),
    TILE_TIED_FENCE=0 (the fence in front of a wgmma whose A comes from
    registers, as attention's P V, no longer carries the A fragments:
    ptxas then fences each wgmma whose fragment LLVM computed after the
    fence, and serialized every wgmma of the persistent attention kernel;
    a kernel's tied_wgmma_fence hint wins: the example's backward kernels
    ask for False), TILE_SPLIT_MASKS=0 (loops keep their masks
    where they are all true, as causal attention's blocks below the
    diagonal: tile-split-uniform-masks), TILE_STAGE_STORES=0 (mma
    results stored from their fragments, not in 16-byte runs through shared
    memory, tile-stage-stores), TILE_TMA_STORES=0 (warpgroup mma results
    leave through the threads' 16-byte stores instead of TMA bulk copies
    from a swizzled buffer, tile-stage-stores' tma-stores: on by default,
    the H100 ran the persistent matmul 2-5% faster with them),
    TILE_PREFETCH_TMAPS=1 (thread 0 prefetches the kernel's TMA
    descriptors first, prefetch.param.tensormap: off until measured),
    TILE_BULK_REDUCE=1 (an atomic add of an mma
    result into a block of an array, as the fused attention backward's dQ,
    by TMA bulk reductions: tile-bulk-reduce; off, it needs the staged
    path), TILE_STAGED_MMA=1 (wgmma for an mma whose operand the loop
    computes, staged through shared memory: the fused attention backward's
    dQ; off, the fused backward measured slower than the two kernels),
    TILE_DEFER_MMA_WAITS=1 (a loop's wgmmas issued early and each waited
    for where its result is read: tile-defer-mma-waits; =in-place: only
    the waits move, the mmas stay where written),
    TILE_DELAY_STAGED_MMA=1 (the fused backward's dQ product one iteration
    late, dS^T's slots handed between the warpgroups by mbarriers:
    tile-delay-staged-mma)."""
    tma = os.environ.get("TILE_TMA", "").strip() != "0"
    defer = os.environ.get("TILE_DEFER_MMA_WAITS", "").strip()
    ws_registers = _ws_registers(os.environ.get("TILE_WS_REGISTERS", "").strip())
    pipeline = os.environ.get("TILE_GPU_PIPELINE", "") or ("tma" if tma else "async")
    if pipeline not in _PIPELINES:
        from .errors import TileValueError
        raise TileValueError(f"TILE_GPU_PIPELINE={pipeline!r}: expected one of "
                             f"{', '.join(_PIPELINES)}")
    return {
        "mma_pipeline": pipeline,
        "warpgroup_mma": os.environ.get("TILE_WGMMA", "1") != "0",
        "nvptx_register_scheduling": os.environ.get("TILE_NVPTX_SCHED", "") != "source",
        "warp_specialize": {"": "attention", "0": "off"}.get(
            os.environ.get("TILE_WARP_SPECIALIZE", "").strip(), "all"),
        "stage_stores": os.environ.get("TILE_STAGE_STORES", "1") != "0",
        "tma_stores": os.environ.get("TILE_TMA_STORES", "1").strip() != "0",
        "prefetch_tmaps": os.environ.get("TILE_PREFETCH_TMAPS", "") not in ("", "0"),
        "ws_registers": ws_registers,
        "ping_pong": os.environ.get("TILE_PING_PONG", "") not in ("", "0"),
        "mma_overlap": os.environ.get("TILE_MMA_OVERLAP", "1") != "0",
        "late_ops_first": os.environ.get("TILE_LATE_OPS_FIRST", "") not in ("", "0"),
        "tied_fence": os.environ.get("TILE_TIED_FENCE", "1").strip() != "0",
        "split_masks": os.environ.get("TILE_SPLIT_MASKS", "1") != "0",
        "bulk_reduce": os.environ.get("TILE_BULK_REDUCE", "") not in ("", "0"),
        "staged_mma": os.environ.get("TILE_STAGED_MMA", "") not in ("", "0"),
        "defer_mma_waits": defer not in ("", "0"),
        "move_deferred_mmas": defer != "in-place",
        "delay_staged_mma": os.environ.get("TILE_DELAY_STAGED_MMA", "") not in ("", "0"),
    }


def compile_options(num_warps, opt_level, num_stages=0):
    """The options of one compile (num_stages: cp.async ring slots of mma
    loops, 0: the compiler chooses)."""
    return {
        "num_warps": int(num_warps or 0),
        "opt_level": int(opt_level),
        "num_stages": int(num_stages or 0),
        "dump_dir": os.environ.get("TILE_DUMP_DIR", ""),
        "always_compile": os.environ.get("TILE_ALWAYS_COMPILE", "") not in ("", "0"),
        **codegen_switches(),
    }
