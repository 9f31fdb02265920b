"""`_tile.Kernel.launch` for CUDA targets without a GPU: the kernel is
compiled for sm_90 (ptxas only) and launched on a fake libcuda
(test/unittests/runtime/FakeCuda.cpp, loaded through TILE_LIBCUDA) that
records what the driver was asked to do."""

import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _fake_cuda():
    env = os.environ.get("TILE_FAKE_CUDA")
    if env:
        return env
    found = glob.glob(os.path.join(ROOT, "build*", "test", "unittests", "runtime",
                                   "libtile_fake_cuda.so"))
    return max(found, key=os.path.getmtime) if found else None


def ptxas_path():
    """The ptxas the compiler would run (TILE_PTXAS, CUDA_HOME's, PATH's), or None."""
    path = os.environ.get("TILE_PTXAS") or os.path.join(
        os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ptxas")
    return path if os.access(path, os.X_OK) else shutil.which("ptxas")


def _have_ptxas():
    return ptxas_path() is not None


def _run_on_fake_driver(script, tmp_path, drop=()):
    """Runs `script` (given the fake's path) in a new process on the fake
    driver; its last stdout line as JSON."""
    fake = _fake_cuda()
    env = dict(os.environ, TILE_LIBCUDA=fake, TILE_CACHE_DIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    for name in drop:
        env.pop(name, None)
    proc = subprocess.run([sys.executable, "-c", script, fake],
                          capture_output=True, text=True, timeout=600, env=env)
    if "built without the GPU backend" in proc.stderr:
        pytest.skip("this _tile has no GPU backend")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


pytestmark = [
    pytest.mark.numerics,
    pytest.mark.skipif(_fake_cuda() is None,
                       reason="fake libcuda not built (ninja TileRuntimeTests)"),
    pytest.mark.skipif(not _have_ptxas(), reason="needs ptxas"),
]

SCRIPT = textwrap.dedent("""
    import ctypes, json, struct, sys
    import numpy as np
    import tile
    from tile import backend

    @tile.kernel(backend="cpu")
    def scale(x, out, a, BLOCK: tile.Constant[int]):
        i = tile.bid(0)
        v = tile.load(x, index=(i,), shape=(BLOCK,))
        tile.store(out, index=(i,), tile=v * a)

    _tile = backend.load()
    fake = ctypes.CDLL(sys.argv[1])
    fake.fake_cuda_param.restype = ctypes.c_uint64
    fake.fake_cuda_kernel.restype = ctypes.c_char_p
    x = np.zeros(64, np.float32)
    ir = scale.compile(x, x, 2.5, BLOCK=64).asm["tile"]
    k = _tile.compile(ir, "sm_90", backend.compile_options(0, 3))
    fake.fake_cuda_reset(7)
    stream_dev1 = 0x5000 + 16 * 1   # the fake's stream on device 1
    args = (0x7f00_0000_1000, 1000, 1, 0x7f00_0000_2000, 1000, 1, 2.5)
    k.launch((16, 1, 1), args, stream_dev1)

    errors = {}
    for name, call in {
        "count": lambda: k.launch((1, 1, 1), args[:-1], 0),
        "type": lambda: k.launch((1, 1, 1), args[:1] + (1.5,) + args[2:], 0),
        "stream": lambda: k.launch((1, 1, 1), args, 0x5000 + 16 * 7),
        "grid": lambda: k.launch((1, 70000, 1), args, stream_dev1),
    }.items():
        try:
            call()
            errors[name] = None
        except Exception as e:
            errors[name] = [type(e).__name__, str(e)]
    print(json.dumps({
        "devices": _tile.cuda_device_count(),
        "num_warps": k.num_warps, "shared_mem": k.shared_mem,
        "launches": fake.fake_cuda_launches(),
        "loads": fake.fake_cuda_loads(),
        "device": fake.fake_cuda_launch_device(),
        "kernel": fake.fake_cuda_kernel().decode(),
        "grid": [fake.fake_cuda_grid(d) for d in range(3)],
        "block": [fake.fake_cuda_block(d) for d in range(3)],
        "shared": fake.fake_cuda_shared(),
        "params": [fake.fake_cuda_param(i) for i in range(7)],
        "a_bits": struct.unpack("<I", struct.pack("<f", 2.5))[0],
        "errors": errors,
    }))
""")


def test_launch_through_fake_driver(tmp_path):
    r = _run_on_fake_driver(SCRIPT, tmp_path)

    assert r["devices"] == 2
    assert r["launches"] == 1 and r["loads"] == 1
    assert r["device"] == 1, "launched outside the stream's context"
    assert r["kernel"] == "scale"
    assert r["grid"] == [16, 1, 1]
    assert r["block"] == [32 * r["num_warps"], 1, 1]
    assert r["shared"] == r["shared_mem"]
    # internals.md section 3: ptr, i64 extents, i64 strides; then the f32.
    p = r["params"]
    assert p[:6] == [0x7F0000001000, 1000, 1, 0x7F0000002000, 1000, 1]
    assert p[6] & 0xFFFFFFFF == r["a_bits"]

    errors = r["errors"]
    for name in ("count", "type", "stream", "grid"):
        assert errors[name] is not None, f"{name}: no error"
        assert errors[name][0] == "LaunchError", errors[name]
    assert "takes 7 flat argument values, got 6" in errors["count"][1]
    assert "extent 0 of array parameter 0" in errors["type"][1]
    assert "CUDA_ERROR_INVALID_HANDLE" in errors["stream"][1]
    # CUDA's grid limits are checked before the driver sees the launch.
    assert "grid dimension y is 70000, above its limit of 65535" in errors["grid"][1]
    assert r["launches"] == 1


DISPATCH_SCRIPT = textwrap.dedent("""
    import ctypes, json, sys
    import tile

    class Dev:  # a device array: __cuda_array_interface__ with a fake pointer
        def __init__(self, ptr, shape, typestr="<f4", strides=None):
            self.__cuda_array_interface__ = {"data": (ptr, False), "shape": shape,
                                             "typestr": typestr, "strides": strides,
                                             "version": 3}

    @tile.kernel
    def scale(x, out, a, BLOCK: tile.Constant[int]):
        i = tile.bid(0)
        v = tile.load(x, index=(i,), shape=(BLOCK,))
        tile.store(out, index=(i,), tile=(v * a).astype(out.dtype))

    fake = ctypes.CDLL(sys.argv[1])
    fake.fake_cuda_param.restype = ctypes.c_uint64
    fake.fake_cuda_stream.restype = ctypes.c_uint64
    fake.fake_cuda_reset(7)

    def record():
        return {"launches": fake.fake_cuda_launches(),
                "grid": [fake.fake_cuda_grid(d) for d in range(3)],
                "stream": fake.fake_cuda_stream(),
                "device": fake.fake_cuda_launch_device(),
                "params": [fake.fake_cuda_param(i) for i in range(6)],
                "compiles": scale.compile_count}

    out = []
    x = Dev(0x7f0000001000, (1024,))
    o = Dev(0x7f0000002000, (1024,))
    for _ in range(3):
        scale[(4,)](x, o, 2.0, BLOCK=256)
    out.append(record())
    s = Dev(0x7f0000003000, (512,), strides=(8,))          # strided: another key
    scale[(2,)](s, o, 2.0, BLOCK=256)
    out.append(record())
    h = Dev(0x7f0000004000, (1024,), "<f2")                 # another dtype
    scale[(4,)](h, o, 2.0, BLOCK=256)
    out.append(record())
    scale[(4,)](x, o, 2.0, BLOCK=256, stream=0x5000 + 16)   # the fake's stream on device 1
    out.append(record())
    scale[(4,)](x, o, 2.0, BLOCK=256)
    out.append(record())
    try:
        scale[(4,)](x, o, 2.0, BLOCK=256, stream=0x5000 + 16 * 7)   # no such device
        out.append(None)
    except Exception as e:
        out.append([type(e).__name__, str(e), e.lineno])
    print(json.dumps({"records": out, "stats": scale._dispatcher.stats()
                      if scale._dispatcher is not None else None}))
""")


def test_kernel_launch_through_the_dispatcher_and_fake_driver(tmp_path):
    """kernel[grid](...) with device arrays, end to end on the fake driver:
    the flat parameters the driver gets, after cached calls, a changed
    stride, a changed dtype, a stream override and a driver error."""
    r = _run_on_fake_driver(DISPATCH_SCRIPT, tmp_path, drop=("TILE_BACKEND", "TILE_LAUNCHER"))
    first, strided, half, other_stream, default_stream, error = r["records"]
    assert first["launches"] == 3 and first["grid"] == [4, 1, 1]
    assert first["compiles"] == 1 and first["stream"] == 0
    assert first["params"][:6] == [0x7F0000001000, 1024, 1, 0x7F0000002000, 1024, 1]
    assert strided["compiles"] == 2 and strided["grid"] == [2, 1, 1]
    assert strided["params"][:3] == [0x7F0000003000, 512, 2]
    assert half["compiles"] == 3 and half["params"][:3] == [0x7F0000004000, 1024, 1]
    assert other_stream["compiles"] == 3 and other_stream["stream"] == 0x5010
    assert other_stream["device"] == 1
    assert default_stream["stream"] == 0 and default_stream["launches"] == 7
    assert error[0] == "TileLaunchError" and "CUDA_ERROR_INVALID_HANDLE" in error[1]
    assert "scale" in error[1]
    if r["stats"] is not None:  # the C dispatcher served the repeated calls
        assert r["stats"]["hits"] >= 3 and r["stats"]["misses"] == 3
