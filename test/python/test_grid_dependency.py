"""Programmatic dependent launch (cuTile's grid_dependency_control_wait /
_launch_dependents, tile.launch(..., programmatic_dependent_launch=True)):
the calls trace to tile.grid_dependency_control, which is PTX griddepcontrol
on sm_90 (and nothing before sm_90 or on the CPU); a dependent launch goes
through cuLaunchKernelEx with programmatic stream serialization; a consumer
that waits sees all of its producer's writes."""
import os
import re

import numpy as np
import pytest

import tile as ct
from tilehelp import Device
from test_tilec import gpu_backend, needs_tile, run_tilec

HERE = os.path.abspath(__file__)


@ct.kernel
def produce(x, y, B: ct.Constant[int]):
    i = ct.bid(0)
    t = ct.load(x, index=(i,), shape=(B,))
    ct.store(y, index=(i,), tile=t * 2.0 + 1.0)
    ct.grid_dependency_control_launch_dependents()


@ct.kernel
def consume(y, z, B: ct.Constant[int]):
    i = ct.bid(0)
    ct.grid_dependency_control_wait()
    t = ct.load(y, index=(i,), shape=(B,))
    ct.store(z, index=(i,), tile=t * t)


def test_the_calls_trace_to_the_op():
    x = np.zeros(256, np.float32)
    assert "tile.grid_dependency_control launch_dependents" in produce.trace(x, x, B=128)
    assert "tile.grid_dependency_control wait" in consume.trace(x, x, B=128)


def test_outside_a_kernel_is_an_error():
    with pytest.raises(ct.TileTypeError, match="only meaningful inside a kernel"):
        ct.grid_dependency_control_wait()


@pytest.mark.numerics
@pytest.mark.parametrize("dependent", [False, True])
def test_a_dependent_consumer_sees_its_producer(dependent):
    dev = Device()
    n, B = 1 << 16, 256
    rng = np.random.default_rng(3)
    for _ in range(3):  # the consumer runs right behind a fresh producer each time
        x = rng.standard_normal(n).astype(np.float32)
        y, z = dev.poisoned(n, np.float32), dev.poisoned(n, np.float32)
        stream = dev.stream() if hasattr(dev, "stream") else None
        ct.launch(stream, (n // B,), produce, (dev.put(x), y, B))
        ct.launch(stream, (n // B,), consume, (y, z, B),
                  programmatic_dependent_launch=dependent)
        want = (x.astype(np.float64) * 2 + 1) ** 2
        np.testing.assert_allclose(dev.get(z), want, rtol=1e-6)
    ck = next(iter(consume._dependent().cache.values())) if dependent else None
    if dependent and dev.backend == "cuda":
        assert getattr(ck._launch, "__name__", "") == "launch_dependent"


@needs_tile
@pytest.mark.parametrize("chip", ["sm_90", "sm_80"])
def test_griddepcontrol_in_the_ptx(tmp_path, chip):
    if not gpu_backend():
        pytest.skip("no GPU backend or ptxas")
    for kernel, action in (("produce", "launch_dependents"), ("consume", "wait")):
        args = [f"{HERE}::{kernel}", "--args", "f32[1024], f32[1024]", "-D", "B=256",
                "--target", chip]
        ptx = run_tilec(args + ["--emit", "ptx"], tmp_path).stdout
        assert re.findall(r"griddepcontrol\.(\w+);", ptx) == ([action] if chip == "sm_90" else [])
        out = tmp_path / f"{kernel}-{chip}"
        run_tilec(args + ["--emit", "cubin", "-o", str(out)], tmp_path)  # ptxas takes it
        assert any(f.endswith(".cubin") for f in os.listdir(out))
