"""Helpers shared by the frontend tests: IR validation through tile-opt,
source lines, device arrays for numerics."""

import glob
import inspect
import os
import re
import runpy
import subprocess
import sys
import time

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def load_script(*parts):
    """The globals of the script at ROOT/parts (an example or bench file), run
    with its own folder on sys.path for its sibling imports."""
    path = os.path.join(ROOT, *parts)
    sys.path.insert(0, os.path.dirname(path))
    try:
        return runpy.run_path(path, run_name="example")
    finally:
        sys.path.pop(0)


def tile_opt_path():
    """$TILE_OPT, else the newest build*/bin/tile-opt of this checkout."""
    env = os.environ.get("TILE_OPT")
    if env:
        return env
    found = glob.glob(os.path.join(ROOT, "build*", "bin", "tile-opt"))
    return max(found, key=os.path.getmtime) if found else None


def verify(ir_text):
    """Parses and verifies `ir_text` with tile-opt; returns its output."""
    path = tile_opt_path()
    if path is None:
        pytest.fail("tile-opt not found: set TILE_OPT or build it: cmake -G Ninja -B "
                    "build-fe -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir "
                    "-DTILE_BUILD_PYTHON=OFF . && ninja -C build-fe tile-opt")
    for attempt in range(5):  # a build may be relinking the binary right now
        try:
            r = subprocess.run([path, "-"], input=ir_text, capture_output=True, text=True,
                               timeout=60)
            break
        except OSError:
            if attempt == 4:
                raise
            time.sleep(2)
    assert r.returncode == 0, f"tile-opt rejected the IR:\n{r.stderr}\n--- IR ---\n{ir_text}"
    return r.stdout


def sm90_module(request=None):
    """`_tile` when it can compile for sm_90 here (no GPU needed), else the
    test is skipped: under --tile-reference (refinterp compiles no PTX), or
    without `_tile` or its GPU backend."""
    if request is not None and request.config.getoption("--tile-reference"):
        pytest.skip("refinterp compiles no PTX")
    from tile import backend
    mod = backend.load()
    if mod is None:
        pytest.skip("_tile not built")
    try:
        mod.compile("module {}", "sm_90", {})
    except Exception as e:  # noqa: BLE001 - the module has no kernel
        if getattr(e, "stage", "") == "target":
            pytest.skip("_tile has no GPU backend")
    return mod


def trace(kernel, *args, **constants):
    """The kernel's IR for these arguments, verified by tile-opt (no _tile)."""
    text = kernel.trace(*args, **constants)
    verify(text)
    return text


def line_of(fn, marker):
    """The file line holding `# <marker>` in fn's source."""
    fn = getattr(fn, "fn", fn)
    lines, start = inspect.getsourcelines(fn)
    for i, line in enumerate(lines):
        if f"# {marker}" in line:
            return start + i
    raise AssertionError(f"marker {marker!r} not found")


def ops_at(ir_text, op, line):
    """The lines of `ir_text` holding `op` with a loc on `line`."""
    return [ln for ln in ir_text.splitlines()
            if op in ln and re.search(rf'loc\("[^"]*":{line}:\d+\)', ln)]


def count(ir_text, op):
    return len(re.findall(re.escape(op) + r"(?![\w.])", ir_text))


# -- device arrays for numerics -------------------------------------------

class Device:
    """Arrays on the backend `_tile` runs kernels on: NumPy on the CPU
    backend, torch tensors on CUDA. The backend is asked on each use, not when
    the (module-scoped) fixture is made: under --tile-reference the
    function-scoped fixture that installs refinterp (host arrays) runs later."""

    @property
    def backend(self):
        import tile
        return tile.default_backend()

    @property
    def torch(self):
        if self.backend != "cuda":
            return None
        import torch
        return torch

    def put(self, a):
        a = np.ascontiguousarray(a)
        torch = self.torch
        if torch is None:
            return a.copy()
        return torch.from_numpy(a).cuda()

    def poisoned(self, shape, dtype):
        """An output array filled with NaN (floats) or a sentinel (ints)."""
        dtype = np.dtype(dtype)
        if dtype.kind == "f":
            a = np.full(shape, np.nan, dtype)
        elif dtype.kind == "b":
            a = np.ones(shape, dtype)
        else:
            a = np.full(shape, 0x5A5A5A5A % (np.iinfo(dtype).max + 1), dtype)
        return self.put(a)

    def get(self, x):
        torch = self.torch
        if torch is not None:
            torch.cuda.synchronize()
            return x.cpu().numpy()
        return np.asarray(x)


def assert_close(got, want, rtol=1e-5, atol=1e-6):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert not np.isnan(got[~np.isnan(want)]).any(), "output left unwritten (NaN poison)"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)


# -- a stand-in for tile._tile, to test the launch path without C++ ---------

class FakeCompileError(Exception):
    def __init__(self, message, stage, reproducer):
        super().__init__(message)
        self.stage = stage
        self.reproducer = reproducer


class FakeKernel:
    def __init__(self, ir, target, options):
        self.name = "k"
        self.target = target
        self.options = options
        self.num_warps = options["num_warps"] or 4
        self.shared_mem = 128
        self.asm = {"tile": "(C++ print)", "fused": ir, "llvm": "; llvm"}
        self.launches = []
        self.log = None  # FakeTile's launches in call order

    def launch(self, grid, args, stream=0):
        self.launches.append((grid, args, stream))
        if self.log is not None:
            self.log.append((grid, args, stream))


class FakeTile:
    """Records compiles and launches; `fail` makes compile raise."""

    CompileError = FakeCompileError

    def __init__(self, gpus=0, capability=(9, 0)):
        self.gpus = gpus
        self.capability = capability
        self.compiled = []
        self.fail = None
        self.log = []  # every launch, in call order

    def cuda_device_count(self):
        return self.gpus

    def cuda_device_capability(self, device=0):
        """`capability`, or its entry for `device` when it is a dict."""
        if isinstance(self.capability, dict):
            return self.capability[device]
        return self.capability

    def compile(self, ir, target, options):
        if self.fail:
            raise FakeCompileError(*self.fail)
        k = FakeKernel(ir, target, options)
        k.log = self.log
        self.compiled.append(k)
        return k

    @property
    def last(self):
        """The latest launch (grid, args, stream) of any kernel."""
        return self.log[-1]

    @property
    def launches(self):
        return [launch for k in self.compiled for launch in k.launches]


def real_dispatcher():
    """`_tile.Dispatcher` of the built C++ module (None when there is none):
    the launch path's tests run it over FakeTile's kernels too."""
    mod = sys.modules.get("tile._tile")
    if mod is None:
        from tile import backend
        try:
            mod = backend.load()
        except Exception:  # noqa: BLE001 - a broken build: its own tests say so
            return None
    return getattr(mod, "Dispatcher", None)


LAUNCHERS = ["python", "c"]


def fake_tile(monkeypatch, launcher):
    """A FakeTile installed as tile._tile. launcher "python": the generated
    Python launcher alone; "c": the C dispatcher in front of it."""
    import importlib
    backend = importlib.import_module("tile.backend")
    kernel = importlib.import_module("tile.kernel")
    ft = FakeTile()
    if launcher == "c":
        d = real_dispatcher()
        if d is None:
            pytest.skip("no _tile with a Dispatcher built")
        ft.Dispatcher = d
        monkeypatch.delenv("TILE_LAUNCHER", raising=False)
    else:
        monkeypatch.setenv("TILE_LAUNCHER", "python")
    monkeypatch.setattr(backend, "_module", ft)
    monkeypatch.setattr(backend, "_searched", True)
    monkeypatch.setattr(kernel, "_binaries", {})
    monkeypatch.delenv("TILE_BACKEND", raising=False)
    monkeypatch.delenv("TILE_DUMP_DIR", raising=False)
    monkeypatch.delenv("TILE_ALWAYS_COMPILE", raising=False)
    return ft
