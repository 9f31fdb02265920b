"""Where the launch time goes: per-call host time of each layer of the
launch path for a tiny kernel.

    python bench/launch_profile.py            # on the GPU machine (torch + CUDA)
    python bench/launch_profile.py --fake     # anywhere: CUDA backend on a no-op driver
    python bench/launch_profile.py --fake --profile   # + cProfile of the Python launcher

--fake loads the fake libcuda of the runtime's tests (build*/test/unittests/
runtime/libtile_fake_cuda.so, or $TILE_FAKE_CUDA; `ninja tile_fake_cuda`)
through TILE_LIBCUDA, so `kernel[grid](...)` runs the whole real path (the
C dispatcher or the Python launcher, `_tile.Kernel.fast_launch`, argument
packing, the runtime's context and stream handling) down to a
cuLaunchKernel that only records its arguments. Arrays are objects with a
`__cuda_array_interface__` (fake device pointers); kernels compile for
sm_90, which needs ptxas. Numbers from it are this machine's, not a GPU's.
"""
import argparse
import glob
import itertools
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "python-frontend"))


def per_call(fn, n, sync=lambda: None, repeats=5):
    """Best of `repeats` runs of `n` calls, in us per call."""
    for _ in range(min(n, 1000)):
        fn()
    sync()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        sync()
        best = min(best, (time.perf_counter() - t) / n * 1e6)
    return best


def report(results):
    for k, v in results.items():
        print(f"{k:60s} {v:7.2f} us")


def gpu_main(args):
    import torch

    import kernels as K
    from tile import interop
    n = args.n or 20000
    sync = torch.cuda.synchronize
    x = torch.randn(1024, device="cuda")
    y = torch.randn(1024, device="cuda")
    o = torch.empty_like(x)
    launcher = K.vadd[(1,)]
    launcher(x, y, o, BLOCK=1024)
    entry = next(iter(K.vadd.cache.values()))
    flat = []
    for t in (x, y, o):
        flat.append(t.data_ptr())
        flat += t.shape
        flat += t.stride()
    flat = tuple(flat)
    stream = torch.cuda.current_stream().cuda_stream
    getter = interop.torch_stream_getter()
    results = {
        "torch.add": per_call(lambda: torch.add(x, y, out=o), n, sync),
        "tile kernel[grid](...)": per_call(lambda: K.vadd[(1,)](x, y, o, BLOCK=1024), n, sync),
        "tile launcher(...) (kernel[grid] bound once)": per_call(
            lambda: launcher(x, y, o, BLOCK=1024), n, sync),
        "entry.run(grid, flat, None) (Python launcher's tail)": per_call(
            lambda: entry.run((1,), list(flat), None), n, sync),
        "binary.fast_launch(grid3, flat, stream)": per_call(
            lambda: entry._launch((1, 1, 1), flat, stream), n, sync),
        "torch stream getter": per_call(getter, n, sync),
        "x.data_ptr()": per_call(x.data_ptr, n, sync),
        "x.stride()": per_call(x.stride, n, sync),
    }
    d = getattr(K.vadd, "_dispatcher", None)
    results["(dispatcher in use)"] = float(d is not None)
    real = entry._launch
    entry._launch = lambda g, a, s: None
    results["tile kernel[grid](...), launch stubbed (frontend alone)"] = per_call(
        lambda: K.vadd[(1,)](x, y, o, BLOCK=1024), n, sync)
    entry._launch = real
    report(results)


class DeviceArray:
    """A device array as CuPy/Numba show it: __cuda_array_interface__ only."""

    __slots__ = ("__cuda_array_interface__",)

    def __init__(self, ptr, shape, typestr="<f4", strides=None):
        self.__cuda_array_interface__ = {"data": (ptr, False), "shape": shape,
                                         "strides": strides, "typestr": typestr,
                                         "version": 3}


class TorchLike:
    """What the launch path reads from a CUDA torch.Tensor, at C speed
    (data_ptr/stride are C callables, as torch's are); registered as
    torch.Tensor of a stand-in `torch` module."""

    def __init__(self, ptr, n, dtype):
        self.is_cuda = True
        self.shape = (n,)
        self.dtype = dtype
        self.data_ptr = itertools.repeat(ptr).__next__
        self.stride = itertools.repeat((1,)).__next__


def install_fake_torch():
    import types
    mod = types.ModuleType("torch")
    mod.Tensor = TorchLike
    mod._C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda dev: 0,
                                   _cuda_getDevice=lambda: 0)
    sys.modules["torch"] = mod
    return mod


class _F32:
    def __str__(self):
        return "torch.float32"


def find_fake_cuda():
    env = os.environ.get("TILE_FAKE_CUDA")
    if env:
        return env
    found = glob.glob(os.path.join(ROOT, "build*", "test", "unittests", "runtime",
                                   "libtile_fake_cuda.so"))
    return max(found, key=os.path.getmtime) if found else None


def fake_main(args):
    lib = os.environ.get("TILE_LIBCUDA") or find_fake_cuda()
    if lib is None:
        sys.exit("no fake libcuda: build it (ninja -C build-fe tile_fake_cuda) or set "
                 "TILE_FAKE_CUDA")
    os.environ["TILE_LIBCUDA"] = lib
    os.environ.setdefault("TILE_CACHE_DIR", tempfile.mkdtemp(prefix="tile-launch-"))
    os.environ.pop("TILE_BACKEND", None)
    import tile
    from tile import backend

    n = args.n or 100000
    install_fake_torch()  # before any kernel sees an argument
    mod = backend.load()
    print(f"_tile: {backend.find_module_file()}")
    print(f"libcuda: {lib} (no-op fake driver; {mod.cuda_device_count()} fake devices)")

    import kernels as K

    def make():  # a fresh Kernel (own launcher) of the benchmark's vadd
        return tile.kernel(K.vadd.fn)

    f32 = _F32()
    flavors = {
        "CAI": [DeviceArray(0x7F0000001000 + 0x10000 * i, (1024,)) for i in range(3)],
        "torch-like": [TorchLike(0x7F0000001000 + 0x10000 * i, 1024, f32) for i in range(3)],
    }
    results = {}
    launchers = {}
    for flavor, (x, y, o) in flavors.items():
        for name, env in (("python launcher", "python"), ("C dispatcher", "")):
            os.environ["TILE_LAUNCHER"] = env
            k = make()
            k[(1,)](x, y, o, BLOCK=1024)
            if name == "C dispatcher" and getattr(k, "_dispatcher", None) is None:
                print("(this _tile has no Dispatcher: only the Python launcher is measured)")
                continue
            launchers[name] = k
            bound = k[(1,)]
            results[f"{flavor}, {name}: kernel[grid](x, y, o, BLOCK=1024)"] = per_call(
                lambda: k[(1,)](x, y, o, BLOCK=1024), n)
            results[f"{flavor}, {name}: bound(x, y, o, BLOCK=1024)"] = per_call(
                lambda: bound(x, y, o, BLOCK=1024), n)
            entry = next(iter(k.cache.values()))
            real = entry._launch
            entry._launch = lambda g, a, s: None
            results[f"{flavor}, {name}: kernel[grid](...), launch stubbed"] = per_call(
                lambda: k[(1,)](x, y, o, BLOCK=1024), n)
            entry._launch = real
    x, y, o = flavors["CAI"]
    os.environ.pop("TILE_LAUNCHER", None)
    k = next(iter(launchers.values()))
    entry = next(iter(k.cache.values()))
    flat = []
    for t in (x, y, o):
        flat += [t.__cuda_array_interface__["data"][0], 1024, 1]
    flat = tuple(flat)
    results["binary.fast_launch(grid3, flat, 0) (C++ packing + fake driver)"] = per_call(
        lambda: entry._launch((1, 1, 1), flat, 0), n)
    results["a Python call that does nothing"] = per_call(lambda: None, n)
    report(results)
    d = getattr(launchers.get("C dispatcher"), "_dispatcher", None)
    if d is not None:
        print(f"dispatcher: {d.stats()}")

    if args.profile:
        import cProfile
        import pstats
        k = launchers["python launcher"]
        bound = k[(1,)]
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(20000):
            bound(x, y, o, BLOCK=1024)
        prof.disable()
        print("\ncProfile of the Python launcher, CAI arrays (20000 calls):")
        pstats.Stats(prof).sort_stats("tottime").print_stats(12)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fake", action="store_true",
                    help="no GPU: the CUDA backend on the fake libcuda")
    ap.add_argument("--profile", action="store_true", help="cProfile the Python launcher")
    ap.add_argument("-n", type=int, default=0, help="calls per measurement")
    args = ap.parse_args()
    if args.fake:
        fake_main(args)
    else:
        gpu_main(args)


if __name__ == "__main__":
    main()
