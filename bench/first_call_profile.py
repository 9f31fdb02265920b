"""Where a new process's first call goes (run twice on the GPU machine with
one TILE_CACHE_DIR: the second run is the warm-cache case)."""
import cProfile
import os
import pstats
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python-frontend"))
import torch  # noqa: E402

x = torch.randn(4096, 1024, device="cuda", dtype=torch.float16)
y = torch.empty_like(x)
torch.cuda.synchronize()
t0 = time.perf_counter()
import tile  # noqa: E402
from tile import backend  # noqa: E402
backend.load()
t1 = time.perf_counter()
import kernels as K  # noqa: E402
t2 = time.perf_counter()
prof = cProfile.Profile()
prof.enable()
K.softmax[(4096,)](x, y, ROWS=1, BLOCK=1024)
torch.cuda.synchronize()
prof.disable()
t3 = time.perf_counter()
print(f"import tile + _tile: {(t1 - t0) * 1e3:.1f} ms, kernels module: {(t2 - t1) * 1e3:.1f} ms, "
      f"first call: {(t3 - t2) * 1e3:.1f} ms")
pstats.Stats(prof).sort_stats("cumulative").print_stats(18)
