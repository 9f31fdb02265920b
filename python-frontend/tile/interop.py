"""Kernel arguments from the outside world, on the launch hot path.

Each handler takes one argument and the flat launch list, appends what
`_tile.Kernel.launch` wants (arrays: data_ptr, *shape, *strides in elements;
scalars: the value) and returns the argument's part of the specialization key:

- arrays: (source, dtype, ndim, unit-stride mask, 16-byte aligned, extents % 16 == 0),
  where "16-byte aligned" is False, True, or TMA (aligned, and an array TMA
  can describe: the compiler may read it through a tensor map), with READ_ONLY appended for an array its owner marked read-only (the kernel
  traces and compiles without it: see `writable_key`)
- ints: "one" (specialized away), "i32", "i32d16", "i64", "i64d16"
- floats: "f32"; bools: "bool"
- lists (and tuples) of arrays: the array part of one type that holds for every
  element (dtype and rank equal; a unit stride, 16-byte alignment or extents
  % 16 == 0 only where all have it), then (LIST, length): see `array_list_part`

Handlers are picked by `type(arg)` from a dict, so the common case is one
dict lookup and one call. Array key parts are memoized on (dtype, shape,
strides), which leaves two attribute reads and a pointer test per array.
"""

import ctypes
import numbers
import sys

from . import dtypes as D

__all__ = ["ArgError", "handlers", "stream_of", "torch_stream_getter", "fast_kind",
           "fast_dtype", "READ_ONLY", "TRACED", "writable_key", "torch_device_of",
           "stream_device", "stream_capturing", "LIST", "list_length", "array_list_part",
           "TMA"]


class ArgError(Exception):
    """A bad argument; the kernel turns it into a TileLaunchError/TileTypeError
    that names the parameter."""

    def __init__(self, message, hint=None, kind="launch"):
        super().__init__(message)
        self.hint = hint
        self.kind = kind


I32_MIN, I32_MAX = -(1 << 31), (1 << 31) - 1
I64_MIN, I64_MAX = -(1 << 63), (1 << 63) - 1


def _int(v, flat):
    if v == 1:
        return "one"
    flat.append(v)
    if I32_MIN <= v <= I32_MAX:
        return "i32" if v & 15 else "i32d16"
    if not I64_MIN <= v <= I64_MAX:
        raise ArgError(f"the int {v} does not fit in 64 bits", kind="type")
    return "i64" if v & 15 else "i64d16"


def _float(v, flat):
    flat.append(v)
    return "f32"


def _bool(v, flat):
    flat.append(int(v))
    return "bool"


def _np_int(v, flat):
    return _int(int(v), flat)


def _np_float(v, flat):
    return _float(float(v), flat)


def _np_bool(v, flat):
    return _bool(bool(v), flat)


# -- array key parts -------------------------------------------------------

# The last item of a read-only array's key part. A read-only array gets a key
# of its own, so that the check against what the kernel writes runs once per
# key, on its first launch (kernel.py), and never on a cache hit.
READ_ONLY = "read-only"


def writable_key(key):
    """`key` without READ_ONLY marks (what tracing sees); `key` itself when
    it has none."""
    for p in key:
        if p.__class__ is tuple and p[-1] is READ_ONLY:
            return tuple(p[:-1] if p.__class__ is tuple and p[-1] is READ_ONLY else p
                         for p in key)
    return key


_parts_cache = {}

# The alignment item of an array's key part when the array is 16-byte aligned
# and TMA can describe it (runtime/TensorMap.h, tmaCanDescribe): rank 1 to 5,
# inner stride 1 and no other, every other stride a positive multiple of 16
# bytes below 2**40, every extent 1 to 2**32. The tracer marks such arrays
# `tile.tma_ok`; arrays without it never get a TMA binary (they take the
# cp.async path). Truthy: it implies 16-byte alignment.
TMA = "tma"


def _tma_ok(shape, strides, size, mask):
    ndim = len(shape)
    if not 1 <= ndim <= 5 or mask != 1 << (ndim - 1):
        return False
    for n in shape:
        if not 1 <= n <= 1 << 32:
            return False
    for s in strides[:-1]:
        if s < 1 or s * size >= 1 << 40:
            return False
    return True


def _array_parts(tag, dt, shape, strides):
    """The four key parts of an array, indexed by `unaligned + 2 * read_only`:
    (aligned pointer, unaligned pointer, both read-only)."""
    mask, ok16, div = 0, True, True
    size = dt.itemsize
    for i, (n, s) in enumerate(zip(shape, strides)):
        if s == 1:
            mask |= 1 << i
        elif (s * size) & 15:
            ok16 = False
        if i == len(shape) - 1 and n & 15:  # rows of whole 16-element runs
            div = False
    ndim = len(shape)
    if ok16 and _tma_ok(shape, strides, size, mask):
        ok16 = TMA
    aligned, unaligned = (tag, dt, ndim, mask, ok16, div), (tag, dt, ndim, mask, False, div)
    return aligned, unaligned, aligned + (READ_ONLY,), unaligned + (READ_ONLY,)


def _check_dtype(dt, what):
    d = D.to_dtype(dt)
    if d is None:
        raise ArgError(f"arrays of dtype {dt} are not supported", "use one of the dtypes "
                       "of the spec (bool, int8..64, uint8..64, float16/32/64, bfloat16, "
                       "float8)", kind="type")
    return d


def _native_order(dt, what):
    """Refuses a NumPy dtype whose bytes are not in this machine's order:
    kernels read memory as native numbers."""
    if not dt.isnative:
        order = "big" if dt.byteorder == ">" else "little"
        raise ArgError(f"{what} of dtype {dt.str!r} is in {order}-endian byte order, "
                       f"which this {sys.byteorder}-endian machine's "
                       "kernels would misread", "convert it to native order first: "
                       f"x.astype({dt.newbyteorder('=').str!r}) (a copy), or "
                       "np.ascontiguousarray(x.byteswap().view(x.dtype.newbyteorder()))",
                       kind="type")
    return dt


def _cached_parts(tag, dtkey, dtname, shape, strides):
    """The memoized key parts; `dtname` None: NumPy's dtype `dtkey`, whose
    name costs microseconds."""
    key = (tag, dtkey, shape, strides)
    p = _parts_cache.get(key)
    if p is None:
        if dtname is None:
            dtname = _native_order(dtkey, "a NumPy array").name
        if len(_parts_cache) > 4096:
            _parts_cache.clear()
        p = _parts_cache[key] = _array_parts(tag, _check_dtype(dtname, tag), shape, strides)
    return p


# -- torch -------------------------------------------------------------------

_torch_dtypes = {}


def _torch_dtype(t):
    d = _torch_dtypes.get(t)
    if d is None:
        d = _torch_dtypes[t] = _check_dtype(str(t), "torch")
    return d


def _torch_new_parts(t, shape, strides):
    if len(_parts_cache) > 4096:
        _parts_cache.clear()
    p = _parts_cache[(t.dtype, shape, strides)] = _array_parts(
        "torch", _torch_dtype(t.dtype), shape, strides)
    return p


# The three torch handlers repeat their few lines: a call less per tensor.
def _torch_cuda(t, flat):
    if not t.is_cuda:
        raise ArgError(f"a torch tensor on {t.device} was passed to a kernel running on "
                       "the CUDA backend", "move it to the GPU (t.cuda()) or run on the "
                       "CPU backend (TILE_BACKEND=cpu)")
    ptr = t.data_ptr()
    shape = t.shape
    st = t.stride()
    flat.append(ptr)
    flat += shape
    flat += st
    p = _parts_cache.get((t.dtype, shape, st)) or _torch_new_parts(t, shape, st)
    return p[ptr & 15 != 0]


def _torch_host(t, flat):
    if t.is_cuda:
        raise ArgError(f"a torch tensor on {t.device} was passed to a kernel running on "
                       "the CPU backend", "pass a CPU tensor (t.cpu()) or run on the "
                       "CUDA backend")
    ptr = t.data_ptr()
    shape = t.shape
    st = t.stride()
    flat.append(ptr)
    flat += shape
    flat += st
    p = _parts_cache.get((t.dtype, shape, st)) or _torch_new_parts(t, shape, st)
    return p[ptr & 15 != 0]


def _torch_cuda_multi(t, flat):
    """_torch_cuda where several GPUs are visible: the key part's tag names
    the tensor's device ("torch@1"), so that each device's launches get a
    CompiledKernel of their own that launches there (kernel.py)."""
    p = _torch_cuda(t, flat)
    return (f"torch@{t.get_device()}",) + p[1:]


def torch_device_of(part):
    """The CUDA device a key part names (see _torch_cuda_multi), else None."""
    if part.__class__ is tuple and part[0].__class__ is str and part[0].startswith("torch@"):
        return int(part[0][6:])
    return None


# The key part of a fake or functional torch tensor: torch is tracing, there
# is no data to launch on (kernel.py hands the launch to tile.torch).
TRACED = "torch-traced"


def _torch_traced(t, flat):
    flat.append(0)
    return TRACED


def _is_traced_tensor(x):
    """A FakeTensor or FunctionalTensor (modules torch loads for tracing)."""
    for mod, cls in (("torch._subclasses.fake_tensor", "FakeTensor"),
                     ("torch._subclasses.functional_tensor", "FunctionalTensor")):
        m = sys.modules.get(mod)
        if m is not None and isinstance(x, getattr(m, cls, ())):
            return True
    return False


def _torch_any(t, flat):  # kernel.compile(): no device check
    if t.is_cuda and _several_gpus():  # the key names the device, as a launch's
        return _torch_cuda_multi(t, flat)
    ptr = t.data_ptr()
    shape, st = t.shape, t.stride()
    flat.append(ptr)
    flat += shape
    flat += st
    p = _parts_cache.get((t.dtype, shape, st)) or _torch_new_parts(t, shape, st)
    return p[ptr & 15 != 0]


# -- NumPy (host memory) -----------------------------------------------------

def _elem_strides(strides, itemsize, what):
    out = []
    for s in strides:
        if s % itemsize:
            raise ArgError(f"{what} has a stride of {s} bytes, not a multiple of its "
                           f"element size {itemsize}", "pass a copy (np.ascontiguousarray)",
                           kind="type")
        out.append(s // itemsize)
    return tuple(out)


def _numpy_any(a, flat):
    ptr, ro = a.__array_interface__["data"]
    shape = a.shape
    st = _elem_strides(a.strides, a.itemsize, "a NumPy array")
    flat.append(ptr)
    flat += shape
    flat += st
    return _cached_parts("numpy", a.dtype, None, shape, st)[(ptr & 15 != 0) + 2 * ro]


def _numpy_on_cuda(a, flat):
    raise ArgError("a NumPy array (host memory) was passed to a kernel running on the "
                   "CUDA backend", "pass a device array (e.g. torch.from_numpy(a).cuda() or "
                   "cupy.asarray(a)), or run on the CPU backend with TILE_BACKEND=cpu")


# -- __cuda_array_interface__ ------------------------------------------------

def _cai_dtype(d):
    import numpy as np
    try:
        dt = np.dtype(d["typestr"])
    except TypeError:
        return str(d["typestr"])
    return _native_order(dt, "a CUDA array").name


def _contiguous_strides(shape):
    st, acc = [], 1
    for n in reversed(shape):
        st.append(acc)
        acc *= n
    return tuple(reversed(st))


_cai_types = {}


def _cai_type(d):
    """(dtype name, tile dtype) of an interface dict's typestr, memoized:
    np.dtype() costs microseconds."""
    ts = d["typestr"]
    try:
        hit = _cai_types.get(ts)
    except TypeError:  # an unhashable typestr: no memo
        name = _cai_dtype(d)
        return name, _check_dtype(name, "cuda array")
    if hit is None:
        name = _cai_dtype(d)
        hit = (name, _check_dtype(name, "cuda array"))
        if len(_cai_types) > 256:
            _cai_types.clear()
        _cai_types[ts] = hit
    return hit


def _cai_any(x, flat):
    try:
        d = x.__cuda_array_interface__
        data = d["data"]
        ptr = data[0]
        ro = len(data) > 1 and bool(data[1])
        shape = tuple(d["shape"])
        name, dt = _cai_type(d)
        if d.get("strides") is None:
            st = _contiguous_strides(shape)
        else:
            st = _elem_strides(d["strides"], dt.itemsize, "a CUDA array")
    except ArgError:
        raise
    except Exception as e:  # a raising property, a malformed dict
        raise ArgError(f"its __cuda_array_interface__ could not be read: "
                       f"{type(e).__name__}: {e}", "see the exception this one was "
                       "raised from") from e
    flat.append(ptr)
    flat += shape
    flat += st
    return _cached_parts("cai", name, name, shape, st)[(ptr & 15 != 0) + 2 * ro]


def _cai_on_host(x, flat):
    raise ArgError(f"a CUDA array ({type(x).__name__}) was passed to a kernel running on "
                   "the CPU backend", "copy it to host memory, or run on the CUDA backend")


# -- DLPack ------------------------------------------------------------------

class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_DL_CODES = {(0, 8): "int8", (0, 16): "int16", (0, 32): "int32", (0, 64): "int64",
             (1, 8): "uint8", (1, 16): "uint16", (1, 32): "uint32", (1, 64): "uint64",
             (2, 16): "float16", (2, 32): "float32", (2, 64): "float64",
             (4, 16): "bfloat16", (6, 8): "bool", (10, 8): "float8_e4m3fn",
             (12, 8): "float8_e5m2"}
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED = 1, 2, 3, 13

class _DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class _DLManagedTensorVersioned(ctypes.Structure):  # DLPack 1.x
    _fields_ = [("version", _DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", _DLTensor)]


_DL_FLAG_READ_ONLY = 1
_DL_MAX_RANK = 64

_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_is_capsule = ctypes.pythonapi.PyCapsule_IsValid
_is_capsule.restype = ctypes.c_int
_is_capsule.argtypes = [ctypes.py_object, ctypes.c_char_p]


class _PinnedPointer(int):
    """A data pointer that holds its DLPack capsule: the exporter may have
    made the memory for this call alone (a conversion, a copy), and the
    capsule's deleter frees it. The pointer lives in the launch's flat
    arguments, so the memory outlives the launch call (on the CPU backend,
    the kernel's whole run)."""


def _dlpack_capsule(x):
    """x.__dlpack__(), asking for DLPack 1.0 (which can flag read-only
    memory) and falling back for older exporters."""
    try:
        try:
            return x.__dlpack__(max_version=(1, 0))
        except TypeError:  # an exporter that knows no max_version
            return x.__dlpack__()
    except Exception as e:
        raise ArgError(f"its __dlpack__() raised {type(e).__name__}: {e}",
                       "see the exception this one was raised from") from e


def _dlpack_view(x):
    """(device type, pointer, shape, strides, dtype name, read-only) of a
    __dlpack__ object. The capsule is not consumed (its destructor calls the
    deleter); the pointer returned holds it."""
    cap = _dlpack_capsule(x)
    ro = False
    if _is_capsule(cap, b"dltensor_versioned"):
        m = _DLManagedTensorVersioned.from_address(_get_pointer(cap, b"dltensor_versioned"))
        if m.version.major != 1:
            raise ArgError(f"its __dlpack__() returned a DLPack {m.version.major}."
                           f"{m.version.minor} tensor; tile reads DLPack 1.x")
        t = m.dl_tensor
        ro = bool(m.flags & _DL_FLAG_READ_ONLY)
    elif _is_capsule(cap, b"dltensor"):
        t = _DLTensor.from_address(_get_pointer(cap, b"dltensor"))
    else:
        raise ArgError(f"its __dlpack__() returned a {type(cap).__name__}, not an unused "
                       "DLPack capsule ('dltensor' or 'dltensor_versioned')",
                       "__dlpack__ must return a new capsule on every call")
    if not 0 <= t.ndim <= _DL_MAX_RANK or (t.ndim and not t.shape):
        raise ArgError(f"its DLPack tensor has an invalid rank {t.ndim}")
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if t.strides:
        st = tuple(t.strides[i] for i in range(t.ndim))
    else:
        st = _contiguous_strides(shape)
    name = _DL_CODES.get((t.dtype.code, t.dtype.bits), f"dlpack code {t.dtype.code}/"
                         f"{t.dtype.bits} bits")
    if t.dtype.lanes != 1:
        name = f"vector of {t.dtype.lanes} lanes"
    ptr = _PinnedPointer((t.data or 0) + t.byte_offset)
    ptr.capsule = cap
    return t.device.device_type, ptr, shape, st, name, ro


def _dlpack(devices, where):
    def handler(x, flat):
        dev, ptr, shape, st, name, ro = _dlpack_view(x)
        if devices is not None and dev not in devices:
            raise ArgError(f"a {type(x).__name__} array on DLPack device type {dev} was "
                           f"passed to a kernel running on the {where} backend",
                           "move the array to the backend's device")
        flat.append(ptr)
        flat += shape
        flat += st
        return _cached_parts("dlpack", name, name, shape, st)[(ptr & 15 != 0) + 2 * ro]
    return handler


# -- lists of arrays ---------------------------------------------------------

# Marks a list argument's key part: (tag, dtype, ndim, mask, aligned16,
# div16, LIST, length[, READ_ONLY]). The kernel takes `length` arrays of the
# part's array type, in the list's order (docs/internals.md section 1).
LIST = "list"


def list_length(part):
    """The number of arrays of a list argument's key part, else None."""
    if part.__class__ is tuple and len(part) > 7 and part[6] == LIST:
        return part[7]
    return None


def _describe_element(p):
    if p.__class__ is tuple:
        return f"a rank-{p[2]} {p[1].name} array"
    if p is TRACED:
        return "a tensor torch is tracing"
    return {"one": "an int", "i32": "an int", "i32d16": "an int", "i64": "an int",
            "i64d16": "an int", "f32": "a float", "bool": "a bool"}.get(p, repr(p))


def array_list_part(parts):
    """The key part of a list whose elements' key parts are `parts`: one array
    type for all, which must agree on dtype and rank."""
    if not parts:
        raise ArgError("an empty list was passed; a list argument holds one or more "
                       "arrays", "pass at least one array (the kernel is specialized on "
                       "the list's length)", kind="type")
    first = parts[0]
    tag, mask, ok16, div, read_only = None, -1, True, True, False
    for i, p in enumerate(parts):
        if p is TRACED:
            raise ArgError("a list of tensors was passed while torch traces the launch "
                           "(torch.compile); tile.torch launches take arrays as separate "
                           "arguments", "pass the tensors as separate parameters, or "
                           "launch outside the compiled region", kind="type")
        if p.__class__ is not tuple or list_length(p) is not None:
            raise ArgError(f"element {i} of the list is {_describe_element(p)}; a list "
                           "argument holds arrays only", kind="type")
        if first.__class__ is tuple and (p[1], p[2]) != (first[1], first[2]):
            raise ArgError(f"element {i} of the list is {_describe_element(p)} but element "
                           f"0 is {_describe_element(first)}: the arrays of a list share one "
                           "dtype and rank", "cast or reshape them to one dtype and rank, "
                           "or pass separate arguments", kind="type")
        if str(p[0]).startswith("torch@") and str(tag).startswith("torch@") and p[0] != tag:
            raise ArgError(f"element {i} of the list is on cuda:{p[0][6:]} but an earlier "
                           f"one on cuda:{tag[6:]}", "move them to one device")
        if tag is None or (str(p[0]).startswith("torch") and not str(tag).startswith("torch")):
            tag = p[0]  # a torch tag if any (CompiledKernel's stream and device)
        mask &= p[3]
        ok16 = ok16 and bool(p[4])  # list elements are never read through TMA
        div = div and p[5]
        read_only = read_only or p[-1] is READ_ONLY
    part = (tag, first[1], first[2], mask, ok16, div, LIST, len(parts))
    return part + (READ_ONLY,) if read_only else part


# -- dispatch ----------------------------------------------------------------

_BASE = {int: _int, float: _float, bool: _bool}


def _classify(x, backend):
    """The handler for a type not seen before (None: unsupported)."""
    t = type(x)
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        if t is not torch.Tensor and _is_traced_tensor(x):
            return _torch_traced
        if backend == "cuda":
            return _torch_cuda_multi if _several_gpus() else _torch_cuda
        return _torch_host if backend == "cpu" else _torch_any
    np = sys.modules.get("numpy")
    if np is not None:
        if isinstance(x, np.ndarray):
            return _numpy_on_cuda if backend == "cuda" else _numpy_any
        if isinstance(x, np.bool_):
            return _np_bool
        if isinstance(x, np.integer):
            return _np_int
        if isinstance(x, np.floating):
            return _np_float
    if hasattr(t, "__cuda_array_interface__") or hasattr(x, "__cuda_array_interface__"):
        return _cai_on_host if backend == "cpu" else _cai_any
    if hasattr(x, "__dlpack__"):
        devices = {"cuda": {_DL_CUDA, _DL_CUDA_MANAGED},
                   "cpu": {_DL_CPU, _DL_CUDA_HOST}}.get(backend)
        return _dlpack(devices, backend)
    if hasattr(x, "__array_interface__") and backend != "cuda":
        return _numpy_any if np is not None and isinstance(x, np.ndarray) else None
    if isinstance(x, bool):
        return _bool
    if isinstance(x, numbers.Integral):
        return _np_int
    if isinstance(x, numbers.Real):
        return _np_float
    return None


class handlers(dict):
    """type -> handler, filled on first sight of each type for one backend."""

    def __init__(self, backend):
        super().__init__(_BASE)
        self.backend = backend
        self[list] = self[tuple] = self.array_list

    def array_list(self, xs, flat):
        """A list or tuple of arrays: each element's launch arguments in order,
        and one key part for the list."""
        parts = []
        for x in xs:
            if x.__class__ is list or x.__class__ is tuple:
                raise ArgError(f"element {len(parts)} of the list is a "
                               f"{type(x).__name__}; a list argument holds arrays only "
                               "(no nesting)", kind="type")
            parts.append((self.get(type(x)) or self.slow)(x, flat))
        return array_list_part(parts)

    def slow(self, x, flat):
        h = _classify(x, self.backend)
        if h is None:
            raise ArgError(f"arguments of type {type(x).__module__}.{type(x).__qualname__} "
                           "are not supported", "pass an array (torch, CuPy, JAX, or NumPy "
                           "on the CPU backend), an int, a float or a bool", kind="type")
        self[type(x)] = h
        return h(x, flat)


# -- the C dispatcher (python-frontend/src/Dispatch.cpp) -----------------------

# Argument kinds the dispatcher reads itself; the numbers are Dispatch.cpp's.
_FAST_INT, _FAST_FLOAT, _FAST_BOOL, _FAST_TORCH, _FAST_NUMPY, _FAST_CAI = range(1, 7)

# handler -> (kind, want): see fast_kind.
_FAST_KINDS = {_int: (_FAST_INT, 2), _float: (_FAST_FLOAT, 2), _bool: (_FAST_BOOL, 2),
               _torch_cuda: (_FAST_TORCH, 1), _torch_host: (_FAST_TORCH, 0),
               _torch_any: (_FAST_TORCH, 2), _numpy_any: (_FAST_NUMPY, 2),
               _cai_any: (_FAST_CAI, 2)}


def fast_kind(h):
    """For the dispatcher of one backend's handlers `h`: x -> (kind, want),
    the kind of argument the handler of type(x) reads (0: leave x to the
    Python path) and, for torch tensors, whether is_cuda must be true (1),
    false (0) or either (2). Asked once per type."""
    def kind(x):
        return _FAST_KINDS.get(h.get(type(x)) or _classify(x, h.backend), (0, 2))
    return kind


def fast_dtype(kind, d):
    """(tile dtype, itemsize) of a torch dtype, a NumPy dtype or a CUDA array
    interface typestr, as the handlers of that kind derive it; None when it
    is not supported (the Python path then raises the error)."""
    try:
        if kind == _FAST_TORCH:
            dt = _torch_dtype(d)
        elif kind == _FAST_NUMPY:
            dt = _check_dtype(_native_order(d, "a NumPy array").name, "numpy")
        elif kind == _FAST_CAI:
            dt = _cai_type({"typestr": d})[1]
        else:
            return None
    except Exception:  # noqa: BLE001 - the Python path reports it
        return None
    return dt, dt.itemsize


# -- streams -----------------------------------------------------------------

def torch_stream_getter():
    """A fast function returning torch's current CUDA stream handle."""
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    c = torch._C
    raw, dev = getattr(c, "_cuda_getCurrentRawStream", None), getattr(c, "_cuda_getDevice", None)
    if raw is not None and dev is not None:
        def current():
            return raw(dev())
        # The C dispatcher calls the two directly (no Python frame).
        current.raw_stream, current.current_device = raw, dev
        return current
    return lambda: torch.cuda.current_stream().cuda_stream


def _several_gpus():
    from . import backend
    return backend.cuda_device_count() > 1


def stream_device(s):
    """The CUDA device of a torch or CuPy stream object, else None."""
    dev = getattr(s, "device", None)
    index = getattr(dev, "index", None)
    if isinstance(index, int):
        return index
    dev_id = getattr(s, "device_id", None)  # CuPy
    return dev_id if isinstance(dev_id, int) else None


def stream_capturing(s):
    """Whether the launch stream `s` (None: torch's current stream when torch
    has CUDA initialized, else the legacy stream 0) is capturing a CUDA
    graph: `_tile.stream_is_capturing`, else torch's check of its current
    stream."""
    from . import backend
    torch = sys.modules.get("torch")
    mod = backend.load()
    ask = getattr(mod, "stream_is_capturing", None) if mod is not None else None
    try:
        torch_cuda = torch is not None and torch.cuda.is_initialized()
        if ask is not None:
            if s is None:
                s = torch.cuda.current_stream().cuda_stream if torch_cuda else 0
            return bool(ask(s if isinstance(s, int) else stream_of(s)))
        if torch_cuda and (s is None or s == torch.cuda.current_stream()):
            return bool(torch.cuda.is_current_stream_capturing())
    except Exception:  # noqa: BLE001 - a driver that cannot tell: the launch reports
        return False
    return False


def stream_of(s):
    """A raw stream handle from an int, a torch/CuPy stream, or None (0)."""
    if s is None:
        return 0
    if isinstance(s, int):
        return s
    for attr in ("cuda_stream", "ptr", "handle"):
        v = getattr(s, attr, None)
        if isinstance(v, int):
            return v
    if hasattr(s, "__cuda_stream__"):
        return int(s.__cuda_stream__()[1])
    raise ArgError(f"cannot use {s!r} as a CUDA stream", "pass an int handle or a "
                   "torch.cuda.Stream / cupy.cuda.Stream", kind="type")
