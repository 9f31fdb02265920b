"""Valid random kernels compile for sm_90: the differential fuzzer's programs
(fuzz/generate.py) and the control-flow fuzzer's branchy ones (fuzz/cfgen.py)
go through tilec to a cubin (to PTX where ptxas is missing), so the GPU
lowering (layouts, shared memory, NVVM, LLVM's NVPTX, ptxas) sees what the
CPU suite only runs on the CPU backend. TILE_GPU_COMPILE_FUZZ_COUNT programs
of each kind (default 16) from a fixed seed and from the rotating one
($TILE_FUZZ_SEED, by default the date). A sweep of 3000 + 2000 programs
(2026-12-07) found a runtime `if` wrongly refused (a name left unbound on a
path that had returned)."""

import concurrent.futures
import datetime
import os
import subprocess
import sys

import numpy as np
import pytest

from tilehelp import ROOT

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fuzz import cfgen  # noqa: E402
from fuzz.generate import available_features, generate  # noqa: E402
from fuzz.program import arrays_for  # noqa: E402
from test_cuda_launch import ptxas_path  # noqa: E402

TILEC = os.environ.get("TILEC") or os.path.join(ROOT, "tools", "tilec", "tilec")
COUNT = int(os.environ.get("TILE_GPU_COMPILE_FUZZ_COUNT", "16"))
FIXED_SEED = 13
CFGEN_SIGNATURE = "f32[64], f32[64], f32[64], i32, i32, i32, f32, f32"

pytestmark = pytest.mark.fuzz

# tilec's short names of the fuzzer's dtypes
_SHORT = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64",
          "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64", "uint8": "u8",
          "uint16": "u16", "uint32": "u32", "uint64": "u64", "bool": "bool"}


def _scalar(value):
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, np.generic):
        return _SHORT[value.dtype.name]
    if isinstance(value, int):
        return "i32" if -2**31 <= value < 2**31 else "i64"
    return "f32"


def differential_job(seed, index, features):
    """(source, tilec arguments) of the differential fuzzer's program."""
    prog = generate(seed, index, features)
    sig = [f"{_SHORT[a.dtype.name]}[{','.join(map(str, a.shape))}]" for a in arrays_for(prog)]
    sig += [_scalar(value) for _, _, value in prog.scalars]
    sig.append(f"{_SHORT[np.dtype(prog.out_np).name]}[{prog.n},{prog.m}]")
    return prog.source(), [", ".join(sig), "-D", f"R={prog.R}", "-D", f"C={prog.C}"]


def cfgen_job(seed):
    """(source, tilec arguments) of the control-flow fuzzer's program."""
    prog = cfgen.generate(cfgen.SeededDraw(seed))
    return prog.kernel, [CFGEN_SIGNATURE, "-D", f"B={16 if seed % 2 else 32}"]


def compile_for_sm90(label, source, args, workdir):
    """None, or why `source`'s fuzz_kernel did not compile for sm_90."""
    path = os.path.join(workdir, f"{label}.py")
    with open(path, "w") as f:
        f.write(source)
    emit = "cubin" if ptxas_path() else "ptx"
    cmd = [TILEC, f"{path}::fuzz_kernel", "--args", *args, "--target", "sm_90",
           "--emit", emit, "-o", os.path.join(workdir, label)]
    env = dict(os.environ, TILE_CACHE_DIR=os.path.join(workdir, "cache"))
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
    except subprocess.TimeoutExpired:
        return f"{label}: no result in 300 s\n{' '.join(cmd)}"
    if r.returncode != 0:
        return (f"{label}: exit status {r.returncode}\n{' '.join(cmd)}\n"
                f"{r.stderr[-2000:]}\n--- source:\n{source}")
    return None


def _seed(which):
    if which == "fixed":
        return FIXED_SEED
    env = os.environ.get("TILE_FUZZ_SEED")
    return int(env) if env else int(datetime.date.today().strftime("%Y%m%d"))


@pytest.mark.parametrize("which", ["fixed", "rotating"])
def test_random_kernels_compile_for_sm90(which, tmp_path):
    if not os.access(TILEC, os.X_OK):
        pytest.skip("tilec is not built")
    seed = _seed(which)
    features = available_features()
    jobs = [(f"d{seed}_{i}", *differential_job(seed, i, features)) for i in range(COUNT)]
    jobs += [(f"c{seed + i}", *cfgen_job(seed + i)) for i in range(COUNT)]
    with concurrent.futures.ThreadPoolExecutor(max(2, os.cpu_count() or 2)) as pool:
        failures = [f for f in pool.map(lambda j: compile_for_sm90(*j, str(tmp_path)), jobs)
                    if f]
    assert not failures, (f"{len(failures)} of {len(jobs)} programs (seed {seed}) did not "
                          f"compile for sm_90:\n\n" + "\n\n".join(failures[:3]))
