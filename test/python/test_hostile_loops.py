"""Issue 13: a tile.range loop with a runtime step of zero or a negative one
hung forever (scf.for with such a step never ends). The spec: a device loop
whose step is zero at run time runs no iteration; a negative step counts down
as Python's range does. Each case runs in a child process with a timeout, so
a hang fails the test instead of stopping the suite."""

import os
import subprocess
import sys
import json
import textwrap

import numpy as np
import pytest

from tilehelp import ROOT

CHILD = textwrap.dedent('''
    import json, sys
    import numpy as np
    import tile
    sys.path.insert(0, {testdir!r})
    from tilehelp import Device

    @tile.kernel
    def walk(x, out, start, stop, step, B: tile.Constant[int]):
        acc = tile.load(x, index=(0,), shape=(B,))
        for it in tile.range(start, stop, step):
            acc = acc * 2.0 + it
        tile.store(out, index=(0,), tile=acc)

    @tile.kernel
    def countdown(x, out, start, stop, B: tile.Constant[int]):
        acc = tile.load(x, index=(0,), shape=(B,))
        for it in tile.range(start, stop, -3):  # a Constant negative step counts down too
            acc = acc * 2.0 + it
        tile.store(out, index=(0,), tile=acc)

    dev = Device()
    x = dev.put(np.random.default_rng(1).standard_normal(8).astype(np.float32))
    results = []
    for start, stop, step in json.loads(sys.argv[1]):
        out = dev.poisoned((8,), np.float32)
        walk[(1,)](x, out, start, stop, step, B=8)
        results.append(dev.get(out).astype(np.float64).tolist())
        if step == -3:
            out = dev.poisoned((8,), np.float32)
            countdown[(1,)](x, out, start, stop, B=8)
            results[-1] = [results[-1], dev.get(out).astype(np.float64).tolist()]
    print(json.dumps(results))
''')

CASES = [(0, 4, 0), (3, -5, 0), (0, 4, -1), (4, 0, -1), (7, -3, -3), (-2, 6, -2),
         (0, 4, 1), (1, 10, 3), (5, 5, 2), (9, 1, 4), (-(2 ** 31), 2 ** 31 - 1, 2 ** 30),
         (2 ** 31 - 1, -(2 ** 31), -(2 ** 30))]


def reference(x, start, stop, step):
    """The loop in float64 over Python's range (none for a zero step)."""
    acc = [float(v) for v in x]
    for it in (range(start, stop, step) if step else ()):
        acc = [a * 2.0 + it for a in acc]
    return acc


def test_runtime_steps_follow_python_range_and_never_hang(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python-frontend")
               + os.pathsep + os.environ.get("PYTHONPATH", ""))
    script = tmp_path / "walk.py"  # a file: tracing reads the loop's source
    script.write_text(CHILD.format(testdir=os.path.dirname(os.path.abspath(__file__))))
    try:
        r = subprocess.run([sys.executable, str(script), json.dumps(CASES)], env=env,
                           capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired:
        pytest.fail("a tile.range loop with a runtime step hung")
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    x = np.random.default_rng(1).standard_normal(8).astype(np.float32)
    for (start, stop, step), g in zip(CASES, got):
        if step == -3:  # the runtime step's result and the Constant one's
            assert g[0] == g[1], f"tile.range({start}, {stop}, -3): Constant and runtime differ"
            g = g[0]
        want = np.array(reference(x, start, stop, step))
        # f32 accumulation: a few ulp of the largest magnitude reached.
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6 * np.abs(want).max(),
                                   err_msg=f"tile.range({start}, {stop}, {step})")
