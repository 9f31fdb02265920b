"""The C dispatcher's compact key against kernel.py's specialization key.

`_tile.Dispatcher` serves a launch from its own cache when the compact key
(python-frontend/src/DispatchKey.cpp) of the arguments was seen before, so
two argument lists must have equal compact keys exactly when their Python
keys (the generated launcher's: interop handlers, READ_ONLY marks kept,
Constants as `_constant_key`) are equal, and the flat launch values must be
the Python ones. Arguments the Python side refuses must never get a compact
key. Random argument lists: arrays of every dtype, shape, stride, offset and
read-only-ness (NumPy, torch on the CPU when installed, CUDA array interface
objects), scalars of each kind, Constants, lists of arrays, unsupported
values.
"""

import importlib
import random
import struct

import numpy as np
import pytest

import tile
from tile import interop
tile_kernel = importlib.import_module("tile.kernel")  # `tile.kernel` is the decorator
from tilehelp import real_dispatcher

hypothesis = pytest.importorskip("hypothesis")
st = hypothesis.strategies

try:
    import torch
except ImportError:  # CI has no torch: its tensors are left out
    torch = None


@pytest.fixture(scope="module")
def dispatcher_cls():
    cls = real_dispatcher()
    if cls is None or not hasattr(cls, "key_of"):
        pytest.skip("no _tile with Dispatcher.key_of built")
    return cls


def make_kernel():
    @tile.kernel
    def k(a, b, c, d, A: tile.Constant[int], B: tile.Constant):
        pass
    return k


PARAMS = 6


def python_key(kern, handlers, values):
    """The generated launcher's key and flat values (kernel._make_launcher)."""
    flat, key = [], []
    for (_, const), v in zip(kern.params, values):
        if const:
            key.append(tile_kernel._constant_key(v))
        else:
            key.append((handlers.get(type(v)) or handlers.slow)(v, flat))
    return tuple(key), tuple(flat)


# -- argument pools ---------------------------------------------------------

NP_DTYPES = [np.float32, np.float16, np.float64, np.int8, np.uint8, np.int16, np.int32,
             np.int64, np.uint32, np.bool_, np.complex64, ">f4", ">i4"]
EXTENTS = [1, 2, 3, 16, 17, 32]
_buffers = [np.zeros(4096 + 64, np.uint8) for _ in range(3)]  # kept alive


def numpy_array(r):
    dt = np.dtype(r.choice(NP_DTYPES))
    rank = r.choice([0, 1, 1, 2, 2, 3])
    shape = tuple(r.choice(EXTENTS) for _ in range(rank))
    n = int(np.prod(shape)) if shape else 1
    base = r.choice(_buffers)
    offset = r.choice([0, 0, 16, 1, 2, 4, 8])
    a = np.ndarray(shape, dt, buffer=base.data, offset=offset) if n * dt.itemsize + \
        offset <= base.nbytes else np.zeros(shape, dt)
    view = r.randrange(8)
    if view == 1 and rank >= 2:
        a = a.T
    elif view == 2 and rank >= 1:
        a = a[::r.choice([1, 2, 3])]
    elif view == 3 and rank >= 1:
        a = a[::-1]
    elif view == 4 and rank >= 1:
        a = np.broadcast_to(a[..., :1], shape)  # zero strides, read-only
    elif view == 5 and rank >= 1 and dt.itemsize > 1:
        # A byte stride that is not a multiple of the element size.
        a = np.lib.stride_tricks.as_strided(a, shape=(min(shape[0], 4),) + shape[1:],
                                            strides=(dt.itemsize + 1,) + a.strides[1:])
    if r.random() < 0.25:
        a = a.view()
        a.flags.writeable = False
    return a


def torch_tensor(r):
    dt = r.choice([torch.float32, torch.float16, torch.bfloat16, torch.int32, torch.int8,
                   torch.bool, torch.float64, torch.complex64])
    rank = r.choice([0, 1, 2, 3])
    shape = tuple(r.choice(EXTENTS) for _ in range(rank))
    t = torch.zeros(shape, dtype=dt)
    view = r.randrange(5)
    if view == 1 and rank >= 2:
        t = t.t() if rank == 2 else t.transpose(0, 2)
    elif view == 2 and rank >= 1:
        t = t[::r.choice([1, 2, 3])]
    elif view == 3 and rank >= 1 and t.numel() > 1:
        t = t.reshape(-1)[1:]  # an element off the allocation's alignment
    elif view == 4 and rank >= 1:
        t = t[..., :1].expand(shape)
    return t


class CudaArray:
    """A __cuda_array_interface__ object (never dereferenced: keys only)."""

    def __init__(self, d):
        self.__cuda_array_interface__ = d


def cai_array(r):
    typestr = r.choice(["<f4", "<f2", "<f8", "|i1", "|u1", "<i4", "<i8", "|b1", ">f4",
                        "<c8"])
    itemsize = int(typestr[2:])
    rank = r.choice([0, 1, 2, 3])
    shape = tuple(r.choice(EXTENTS) for _ in range(rank))
    ptr = r.choice([0x7000_0000, 0x7000_0010, 0x7000_0001, 0x7000_0004])
    d = {"shape": shape, "typestr": typestr, "version": 3,
         "data": (ptr, r.random() < 0.25)}
    if rank and r.random() < 0.5:
        d["strides"] = tuple(itemsize * r.choice([1, 2, 16, 17, 32]) for _ in shape)
    else:
        d["strides"] = None
    return CudaArray(d)


INTS = [0, 1, -1, 2, 15, 16, 17, 32, 48, -16, 2**31 - 1, 2**31, 2**31 + 16, -2**31,
        -2**31 - 1, 2**63 - 1, 2**63 - 16, -2**63, 2**63, -2**63 - 1]
FLOATS = [0.0, -0.0, 1.5, float("nan"), float("inf"), -2.0]


def scalar(r):
    return r.choice([r.choice(INTS), r.choice(FLOATS), True, False, np.int32(5),
                     np.float32(1.5), np.bool_(True), np.int64(16)])


def array(r, backend):
    """Mostly arrays the backend's handlers take, sometimes any other."""
    host = [numpy_array] + ([torch_tensor] if torch is not None else [])
    native = {"cpu": host, "cuda": [cai_array]}.get(backend, host + [cai_array])
    return r.choice(native if r.random() < 0.9 else host + [cai_array])(r)


def value(r, backend):
    """Any value a non-Constant parameter may be given."""
    pick = r.randrange(10)
    if pick < 5:
        return array(r, backend)
    if pick < 8:
        return scalar(r)
    if pick == 8:
        return r.choice([list, tuple])(array(r, backend) for _ in range(r.randrange(0, 3)))
    return r.choice([None, "text", object(), [[np.zeros(2)]]])


CONSTANTS = [0, 1, True, False, 1.0, -0.0, 0.0, float("nan"), 2**70, -5, "a", "b",
             None, (1, 2), (1, 2.0), (3,), 16, 17, np.int32(1)]


def argument_list(r, backend):
    return [value(r, backend) for _ in range(4)] + [r.choice(CONSTANTS),
                                                   r.choice(CONSTANTS)]


# -- the property -------------------------------------------------------------

def check_agreement(kern, handlers, disp, arg_lists):
    """Asserts that the C and Python keys of `arg_lists` map one to one;
    returns how many lists the C path keyed."""
    by_py, by_c, fast = {}, {}, 0
    for values in arg_lists:
        try:
            pkey, pflat = python_key(kern, handlers, values)
        except (interop.ArgError, TypeError, OverflowError):
            pkey = None  # the Python path refuses these arguments
        got = disp.key_of(values)
        if pkey is None:
            assert got is None, f"C keyed arguments the Python path refuses: {values!r}"
            continue
        if got is None:
            continue  # left to the Python path: always allowed
        fast += 1
        words, objs, cflat = got
        assert cflat == pflat, f"flat values differ for {values!r}"
        # Per parameter (the compact key is one group of words per
        # parameter, the Python key one part), and for the whole list.
        for i, part in enumerate(pkey):
            cpart = (i, words[3 * i:3 * i + 3], objs[i])
            by_py.setdefault((i, part), set()).add(cpart)
            by_c.setdefault(cpart, set()).add((i, part))
        by_py.setdefault(pkey, set()).add((words, objs))
        by_c.setdefault((words, objs), set()).add(pkey)
    for pk, cks in by_py.items():
        assert len(cks) == 1, f"one Python key, {len(cks)} C keys: {pk!r}"
    for ck, pks in by_c.items():
        assert len(pks) == 1, f"one C key, several Python keys: {sorted(map(repr, pks))}"
    return fast


@pytest.fixture(scope="module", params=["any", "cpu", "cuda"])
def setup(request, dispatcher_cls):
    kern = make_kernel()
    handlers = interop.handlers(request.param)
    disp = tile_kernel._make_dispatcher(kern, handlers)
    assert disp is not None
    return kern, handlers, disp


def test_seeded_random_argument_lists(setup):
    kern, handlers, disp = setup
    r = random.Random(1234)
    fast = 0
    for _ in range(40):
        fast += check_agreement(kern, handlers, disp,
                                [argument_list(r, handlers.backend) for _ in range(100)])
    assert fast > 150, "too few argument lists took the C path to test anything"


@hypothesis.settings(max_examples=150, deadline=None, derandomize=True,
                     suppress_health_check=list(hypothesis.HealthCheck))
@hypothesis.given(seeds=st.lists(st.integers(0, 2**32 - 1), min_size=2, max_size=40))
def test_hypothesis_argument_lists(setup, seeds):
    kern, handlers, disp = setup
    # Each seed is one argument list; hypothesis shrinks to the fewest.
    check_agreement(kern, handlers, disp, [argument_list(random.Random(s), handlers.backend)
                                              for s in seeds])


def test_keys_that_must_differ(setup):
    """Pairs whose Python keys differ by one property each: the C keys must
    differ too (and equal ones be equal)."""
    kern, handlers, disp = setup
    base = np.zeros(64, np.float32)
    pairs = [(base[:32], base[:17]),         # extents % 16
             (base[:32], base[1:33]),        # alignment
             (base[:32], base[::2][:16]),    # unit stride
             (base[:16], base[:16].astype(np.float16)),
             (3, 16), (1, 2), (2**31 - 1, 2**31), (1, 1.0), (True, 1)]
    ro = base[:32].view()
    ro.flags.writeable = False
    pairs.append((base[:32], ro))
    for x, y in pairs:
        args = [[x, 1, 1.0, True, 4, "c"], [y, 1, 1.0, True, 4, "c"]]
        if type(x) is not np.ndarray:
            args = [[base, x, 1.0, True, 4, "c"], [base, y, 1.0, True, 4, "c"]]
        kx, ky = (disp.key_of(a) for a in args)
        if kx is None or ky is None:
            continue  # NumPy arrays under the CUDA backend's handlers
        px, py = (python_key(kern, handlers, a)[0] for a in args)
        assert px != py and kx[:2] != ky[:2], (x, y)
    for c1, c2 in [(0.0, -0.0), (1, True), (1, 1.0), ("a", "b"), (2**70, 2**70 + 1)]:
        kx = disp.key_of([base, 1, 1.0, True, 4, c1])
        ky = disp.key_of([base, 1, 1.0, True, 4, c2])
        if kx is not None and ky is not None:
            assert kx[:2] != ky[:2], (c1, c2)
    nan1, nan2 = float("nan"), struct.unpack("<d", struct.pack("<d", float("nan")))[0]
    kx = disp.key_of([base, 1, 1.0, True, 4, nan1])
    ky = disp.key_of([base, 1, 1.0, True, 4, nan2])
    if kx is not None and ky is not None:
        assert kx[:2] == ky[:2]
