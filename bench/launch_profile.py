"""Where the launch time goes: per-call host time of each layer of the
launch path for a tiny kernel (run on the GPU machine)."""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python-frontend"))
import torch  # noqa: E402

import kernels as K  # noqa: E402
from tile import interop  # noqa: E402

N = 20000


def per_call(fn):
    for _ in range(200):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(N):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / N * 1e6


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
    "torch.add": per_call(lambda: torch.add(x, y, out=o)),
    "tile full path kernel[grid](...)": per_call(lambda: launcher(x, y, o, BLOCK=1024)),
    "entry.run(grid, flat, None)": per_call(lambda: entry.run((1,), list(flat), None)),
    "binary.launch(grid3, flat, stream)": per_call(lambda: entry._launch((1, 1, 1), flat, stream)),
    "torch stream getter": per_call(getter),
    "x.data_ptr()": per_call(x.data_ptr),
    "x.stride()": per_call(x.stride),
}
entry._launch = lambda g, a, s: None
results["python path, launch stubbed"] = per_call(lambda: launcher(x, y, o, BLOCK=1024))
for k, v in results.items():
    print(f"{k:45s} {v:7.2f} us")
