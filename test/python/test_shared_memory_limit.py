"""A kernel whose shared-memory buffers outgrow a block (227 KB on sm_90)
fails to compile, naming the kernel, the user's line and the way out,
rather than compiling to a binary whose every launch fails. The example's
dQ kernel with a 3-slot ring at D 128 needed 263168 bytes of buffers: the
num_stages check saw only the ring (3 x 64 KB); the launch then failed."""

import os

import pytest

from test_tilec import gpu_backend, run_tilec  # noqa: F401 - needs_sm90 evaluates it here
from test_tma import needs_sm90
from tilehelp import ROOT

DEEP = f"""
import sys
sys.path.insert(0, {os.path.join(ROOT, "examples")!r})
import flash_attention_backward as FAB
deep = FAB.attention_dq.replace_hints(num_stages={{stages}})
"""
SIG = ", ".join(["f16[128,4096,128]"] * 4 + ["f32[128,4096]"] * 2 + ["f16[128,4096,128]"]) + \
    ", i32, f32"


def _compile(tmp_path, stages):
    src = tmp_path / f"deep{stages}.py"
    src.write_text(DEEP.format(stages=stages))
    return run_tilec([f"{src}::deep", "--args", SIG, "-D", "BM=128", "-D", "BN=128", "-D",
                      "D=128", "-D", "CAUSAL=False", "--target", "sm_90", "--emit", "gpu"],
                     tmp_path, ok=False)


@needs_sm90
def test_buffers_past_a_block_are_a_compile_error(tmp_path):
    r = _compile(tmp_path, 3)
    assert r.returncode != 0
    err = r.stderr
    assert "kernel 'attention_dq' at " in err and "flash_attention_backward.py:" in err, err
    assert "shared-memory buffers need 263168 bytes, more than the 232448" in err, err
    # The user's way out, not "a compiler bug".
    assert "lower num_stages or the tile shapes" in err and "compiler bug" not in err, err


@needs_sm90
@pytest.mark.parametrize("stages", [0, 2])
def test_buffers_within_a_block_compile(tmp_path, stages):
    r = _compile(tmp_path, stages)
    assert r.returncode == 0, r.stderr
