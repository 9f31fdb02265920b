"""Kernels of test_autotune.py, in a module of their own: a second process
imports them, and tracing reads their source."""

import tile

def make(configs, **kw):
    @tile.autotune(configs=configs, key=["n"], warmup=1, rep=4, **kw)
    @tile.kernel(backend="cpu")
    def passes(x, out, n, REPS: tile.Constant[int], BLOCK: tile.Constant[int]):
        i = tile.bid(0)
        a = tile.load(x, index=(i,), shape=(BLOCK,))
        acc = tile.zeros((BLOCK,), tile.float32)
        for r in tile.range(REPS):
            acc = acc + tile.exp(a)
        tile.store(out, index=(i,), tile=acc / REPS)
    return passes

SLOW_FAST = [tile.Config({"REPS": 400, "BLOCK": 64}), tile.Config({"REPS": 1, "BLOCK": 64}),
             tile.Config({"REPS": 40, "BLOCK": 128})]
