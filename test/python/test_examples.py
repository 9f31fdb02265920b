"""Every example script runs on the available backend and checks itself
(exit status 0). Under --tile-reference they run in-process on refinterp."""

import os
import runpy
import subprocess
import sys

import pytest

from tilehelp import ROOT

EXAMPLES = ["vector_add.py", "softmax.py", "layernorm.py", "matmul.py", "flash_attention.py",
            "flash_attention_backward.py",
            "persistent_matmul.py", "splitk_matmul.py", "grouped_matmul.py",
            "tensor_parallel_mlp.py"]


@pytest.mark.numerics
@pytest.mark.parametrize("name", EXAMPLES)
def test_example(name, request):
    path = os.path.join(ROOT, "examples", name)
    if request.config.getoption("--tile-reference"):
        sys.path.insert(0, os.path.dirname(path))
        try:
            assert runpy.run_path(path, run_name="example")["main"]() == 0
        finally:
            sys.path.remove(os.path.dirname(path))
        return
    r = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OK" in r.stdout and "MISMATCH" not in r.stdout


def test_examples_trace():
    """Each example's kernels trace to IR that tile-opt accepts (no _tile)."""
    import numpy as np

    from tilehelp import verify
    sys.path.insert(0, os.path.join(ROOT, "examples"))
    try:
        mods = {n: runpy.run_path(os.path.join(ROOT, "examples", n), run_name="example")
                for n in EXAMPLES}
    finally:
        sys.path.pop(0)
    f32 = lambda *s: np.zeros(s, np.float32)  # noqa: E731
    verify(mods["vector_add.py"]["vadd"].trace(f32(64), f32(64), f32(64), BLOCK=64))
    verify(mods["softmax.py"]["softmax"].trace(f32(4, 64), f32(4, 64), BLOCK=64))
    verify(mods["layernorm.py"]["layernorm"].trace(f32(4, 64), f32(64), f32(64), f32(4, 64),
                                                  64, 1e-5, BLOCK=32))
    verify(mods["matmul.py"]["matmul"].trace(f32(64, 64), f32(64, 64), f32(64, 64), 64,
                                            BM=32, BN=32, BK=16))
    h = np.zeros((2, 64, 32), np.float16)
    for causal in (False, True):
        ir = mods["flash_attention.py"]["attention"].trace(h, h, h, f32(2, 64, 32), 64, 0.1,
                                                          BM=32, BN=32, D=32, CAUSAL=causal)
        verify(ir)
        # One masked loop over the key blocks (the compiler cuts off the
        # unmasked part: test_example_kernels).
        assert ir.count("scf.for") == 1
    ir = mods["persistent_matmul.py"]["persistent_matmul"].trace(
        f32(64, 64), f32(64, 64), f32(64, 64), BM=32, BN=32, BK=16, GROUP_SIZE_M=2)
    verify(ir)
    assert ir.count("scf.while") == 1 and ir.count("scf.for") == 1
    i32 = lambda n: np.zeros(n, np.int32)  # noqa: E731
    ir = mods["splitk_matmul.py"]["splitk_matmul"].trace(
        f32(64, 64), f32(64, 64), f32(64, 64), i32(4), i32(4), 64, BM=32, BN=32, BK=16,
        SPLIT_K=2)
    verify(ir)
    # The spin loop, the K loop over this block's slice, the first-partial test.
    assert ir.count("scf.while") == 1 and ir.count("scf.for") == 1 and ir.count("scf.if") == 1
    # Lists of arrays: one argument per array, selected at run time in the group loop.
    ir = mods["grouped_matmul.py"]["grouped_matmul"].trace(
        [f32(64, 32)] * 3, [f32(32, 64)] * 3, [f32(64, 64)] * 3, 4, TM=32, TN=32, TK=16)
    verify(ir)
    assert ir.count("tile.array_select") == 3 and ir.count("scf.while") == 1
