"""tile.device_print and tile.device_assert on the GPU (compiler/gpu/
TileToGpuDebug.cpp). Each kernel runs in a subprocess: vprintf's buffer and
the driver's assert report go to the process's stdout/stderr, not to Python,
and a failed assert leaves the CUDA context unusable.

On the GPU a print is one line per tile element, from the thread that owns
it: `pid (bx, by, bz) idx (i, ...) <prefix> <value>`; scalars come once per
block, from thread 0: `pid (bx, by, bz) <prefix> <value>`. Lines of
different threads and blocks come in no particular order."""

import os
import re
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.gpu

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _run(tmp_path, source):
    script = tmp_path / "debug_kernel.py"
    script.write_text(textwrap.dedent(source))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.join(ROOT, "python-frontend")] +
        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       env=env, timeout=300)
    return r, r.stdout + r.stderr


def test_device_print_prints_every_element_once_per_block(tmp_path):
    r, out = _run(tmp_path, """
        import torch
        import tile

        @tile.kernel
        def show(x, n, BLOCK: tile.Constant[int]):
            i = tile.bid(0)
            v = tile.load(x, index=(i,), shape=(BLOCK,))
            tile.device_print("v", v)
            tile.device_print("n", n + i)

        x = torch.arange(16, dtype=torch.float32, device="cuda") * 0.5
        show[(2,)](x, 7, BLOCK=8)
        torch.cuda.synchronize()
        print("DONE", flush=True)
    """)
    assert r.returncode == 0, out
    assert "DONE" in out
    elems = re.findall(r"^pid \((\d+), 0, 0\) idx \((\d+)\) v (\S+)$", out, re.M)
    got = sorted((int(b), int(i), float(v)) for b, i, v in elems)
    want = sorted((b, i, (8 * b + i) * 0.5) for b in range(2) for i in range(8))
    assert got == want, out
    scalars = re.findall(r"^pid \((\d+), 0, 0\) n (-?\d+)$", out, re.M)
    assert sorted((int(b), int(v)) for b, v in scalars) == [(0, 7), (1, 8)], out


def test_device_print_several_operands_are_tagged(tmp_path):
    r, out = _run(tmp_path, """
        import torch
        import tile

        @tile.kernel
        def show2(x, BLOCK: tile.Constant[int]):
            v = tile.load(x, index=(0, 0), shape=(BLOCK, BLOCK))
            tile.device_print("t", v, v + 1)

        x = torch.arange(16, dtype=torch.int32, device="cuda").reshape(4, 4)
        show2[(1,)](x, BLOCK=4)
        torch.cuda.synchronize()
    """)
    assert r.returncode == 0, out
    for k, off in ((0, 0), (1, 1)):
        lines = re.findall(rf"^pid \(0, 0, 0\) idx \((\d+), (\d+)\) t \(operand {k}\) (-?\d+)$",
                           out, re.M)
        got = sorted((int(i), int(j), int(v)) for i, j, v in lines)
        assert got == [(i, j, 4 * i + j + off) for i in range(4) for j in range(4)], out


def test_device_assert_failure_raises_and_names_the_message(tmp_path):
    r, out = _run(tmp_path, """
        import torch
        import tile

        @tile.kernel
        def check(x, n, BLOCK: tile.Constant[int]):
            i = tile.bid(0)
            v = tile.load(x, index=(i,), shape=(BLOCK,))
            tile.device_assert(v < n, "value too large")  # ASSERT_LINE
            tile.store(x, index=(i,), tile=v + 1)

        x = torch.arange(256, dtype=torch.int32, device="cuda")
        try:
            check[(2,)](x, 200, BLOCK=128)
            torch.cuda.synchronize()
        except Exception as e:
            print("RAISED", type(e).__name__, e, flush=True)
        else:
            print("NOT RAISED", flush=True)
    """)
    assert "RAISED" in out and "NOT RAISED" not in out, out
    raised = out[out.index("RAISED"):]
    assert re.search(r"assert", raised, re.I), out  # device-side assert triggered
    # The driver's report: the user's file:line, the message, the block.
    assert "value too large" in out, out
    line = next(n for n, text in enumerate((tmp_path / "debug_kernel.py").read_text()
                                           .splitlines(), 1) if "ASSERT_LINE" in text)
    assert re.search(rf"debug_kernel\.py:{line}", out), out
    assert re.search(r"block: \[1,0,0\]", out), out


def test_device_assert_passing_is_silent(tmp_path):
    r, out = _run(tmp_path, """
        import torch
        import tile

        @tile.kernel
        def check(x, n, BLOCK: tile.Constant[int]):
            i = tile.bid(0)
            v = tile.load(x, index=(i,), shape=(BLOCK,))
            tile.device_assert(v < n, "value too large")
            tile.store(x, index=(i,), tile=v + 1)

        x = torch.arange(256, dtype=torch.int32, device="cuda")
        check[(2,)](x, 1000, BLOCK=128)
        torch.cuda.synchronize()
        assert torch.equal(x.cpu(), torch.arange(1, 257, dtype=torch.int32))
        print("OK", flush=True)
    """)
    assert r.returncode == 0 and "OK" in out, out
    assert "value too large" not in out, out
