"""Whether the autotuner reads attention's configs as bench does. For
causal D128 and non-causal D64 (B4 H32 L4096, f16), the configs whose
readings disagreed on an H100 (2026-12-07: 225 KB blocks and 64-row blocks
two to an SM read 8-30% slower in the tuner than in bench) and SDPA are
timed by each method:

1. time_launches, each config alone (the tuner's first pass until 32e8e58);
2. time_launches one run at a time in turns, waiting after each run (the
   tuner's confirmation round until 2026-12-07);
3. time_interleaved (its confirmation round since);
4. bench's interleaved_medians (torch's zero_() as the flush);
5. bench's method, each alone;
6. each alone, flushed by fill_(1), surely a kernel.

Then the tuner's own choice and readings (TILE_PRINT_AUTOTUNING=1 prints
them). Run: `bash scripts/device-run.sh python bench/tuner_probe.py`;
with `rank-d64-causal`, only bench's method on causal D64's close configs;
with `first-pass`, the tuner's first pass taken apart (first_pass())."""
import os
import sys
import time

import torch

import tile
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import kernels as K  # noqa: E402
import harness as Hn  # noqa: E402
from tile import backend  # noqa: E402

FLUSH_BYTES = 256 << 20


def median(xs):
    return round(sorted(xs)[len(xs) // 2], 4)


def alone_filled(fn, flush, runs=60):
    """Method 6: each run after flush.fill_(1), all enqueued, one wait."""
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(runs)]
    for start, end in events:
        flush.fill_(1)
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return median([s.elapsed_time(e) for s, e in events])


def attention_fns(D, causal, configs):
    """(name -> a launch of B4 H32 L4096 f16 attention) for each of
    `configs` (name -> (BM, BN, hints)) and SDPA, each run once; and the
    inputs (q, k, v, o)."""
    Bz, H, L = 4, 32, 4096
    q, k, v = (torch.randn(Bz * H, L, D, device="cuda", dtype=torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    fns = {}
    for name, (bm, bn, hints) in configs.items():
        kern = K.attention.replace_hints(**hints) if hints else K.attention
        fns[name] = (lambda kern=kern, bm=bm, bn=bn: kern[(L // bm, Bz * H)](
            q, k, v, o, D ** -0.5, BM=bm, BN=bn, D=D, CAUSAL=causal, GROUP=1))
    fns["sdpa"] = lambda: torch.nn.functional.scaled_dot_product_attention(
        q.view(Bz, H, L, D), k.view(Bz, H, L, D), v.view(Bz, H, L, D), is_causal=causal)
    for fn in fns.values():
        fn()
    torch.cuda.synchronize()
    return fns, (q, k, v, o)


def probe(D, causal, configs):
    mod = backend.require("timing")
    stream = torch.cuda.current_stream().cuda_stream
    flush = torch.empty(FLUSH_BYTES, dtype=torch.int8, device="cuda")
    fns, (q, k, v, o) = attention_fns(D, causal, configs)
    Bz, H, L = 4, 32, 4096
    names = list(fns)
    methods = {
        "1 alone (tuner's old first pass)": lambda: [
            median(mod.time_launches(fns[n], stream, 20, 80, None, FLUSH_BYTES)) for n in names],
        "2 turns, a wait after each run": lambda: [
            median(x) for x in zip(*[[mod.time_launches(fns[n], stream, 0, 1, None,
                                                        FLUSH_BYTES)[0] for n in names]
                                     for _ in range(60)])],
        "3 time_interleaved": lambda: [
            median(x) for x in mod.time_interleaved([fns[n] for n in names], stream, 0, 80, [],
                                                    FLUSH_BYTES)],
        "4 bench interleaved": lambda: [
            round(x, 4) for x in Hn.interleaved_medians([fns[n] for n in names])],
        "5 bench alone": lambda: [
            round(Hn.interleaved_medians([fns[n]])[0], 4) for n in names],
        "6 alone, fill_(1)": lambda: [alone_filled(fns[n], flush) for n in names],
    }
    print(f"D{D} causal={causal}: {names}", flush=True)
    for label, method in methods.items():
        print(f"  [{time.strftime('%H:%M:%S')}] {label}: {method()}", flush=True)
    K.attention_tuned[lambda m: (L // m["BM"], Bz * H)](q, k, v, o, D ** -0.5, D=D,
                                                       CAUSAL=causal, GROUP=1)
    torch.cuda.synchronize()
    print(f"  tuner chose {K.attention_tuned.best_config}", flush=True)


def rank(D, causal, configs, repeats=3):
    """Bench's method only (interleaved, best median of `repeats`), for a
    shape where several configs read within a few percent of each other."""
    fns, _ = attention_fns(D, causal, configs)
    best = None
    for _ in range(repeats):
        ms = Hn.interleaved_medians(list(fns.values()))
        print(f"  {[round(x, 4) for x in ms]}", flush=True)
        best = ms if best is None else [min(a, b) for a, b in zip(best, ms)]
    print(f"D{D} causal={causal} best medians:", flush=True)
    for name, ms in zip(fns, best):
        print(f"  {name}: {ms:.4f} ms ({best[-1] / ms:.3f}x SDPA)", flush=True)


def first_pass(D=64, causal=True):
    """Why the tuner's first pass read the 64-row D64 config 12-27% slow
    (H100, 2026-12-07) when time_launches on the same kernel alone read it
    right: a fresh tuner's search (whose first pass times the configs in
    turns since), then each config timed alone by the tuner's own _time
    (private, used here on purpose) in the list's order and in reverse, and
    by time_launches on a plain launch (call 8 of 2026-12-07: alone read the
    64-row config 5-11% slower than in turns; order did not matter)."""
    mod = backend.require("timing")
    raw = torch.cuda.current_stream().cuda_stream
    Bz, H, L = 4, 32, 4096
    q, k, v = (torch.randn(Bz * H, L, D, device="cuda", dtype=torch.float16) for _ in range(3))
    o = torch.empty_like(q)
    tuned = tile.autotune(configs=K.ATTENTION_SPACE, key=["q", "k", "D", "CAUSAL", "GROUP"],
                          prune_configs_by={
                              "early_config_prune": tile.autotune_configs.attention_prune()},
                          )(K.attention)
    grid = lambda m: (L // m["BM"], Bz * H)  # noqa: E731
    args, kwargs = (q, k, v, o, D ** -0.5), dict(D=D, CAUSAL=causal, GROUP=1)
    tuned[grid](*args, **kwargs)
    torch.cuda.synchronize()
    print(f"D{D} causal={causal}: tuner chose {tuned.best_config}", flush=True)
    first = next(iter(tuned.first_timings.values()))
    named = tuned._named_args(args, kwargs)
    pairs = tuned._pruned(named)
    for label, order in (("list order", pairs), ("reverse order", pairs[::-1])):
        readings = {}
        for i, cfg in order:
            try:
                readings[i] = tuned._time(i, cfg, grid, args, kwargs, named, "cuda", raw)
            except tile.TileError:
                readings[i] = float("nan")
        print(f"  _time in {label}:", flush=True)
        for i, cfg in pairs:
            searched = first.get(cfg, float("nan"))
            print(f"    {cfg}: {readings[i]:.4f} (search's first pass {searched:.4f})", flush=True)
    print("  time_launches, plain launches, each alone:", flush=True)
    for i, cfg in pairs:
        kern = tuned._variant(i)
        fn = (lambda kern=kern, cfg=cfg: kern[grid](*args, **cfg.kwargs, **kwargs))
        fn()
        print(f"    {cfg}: {median(mod.time_launches(fn, raw, 20, 80, None, FLUSH_BYTES)):.4f}",
              flush=True)


def main():
    if sys.argv[1:] == ["first-pass"]:
        first_pass()
        return
    if sys.argv[1:] == ["rank-d64-causal"]:
        rank(64, True, {
            "128x128": (128, 128, None),
            "128x128 turns": (128, 128, dict(ping_pong=True)),
            "128x256 2 slots": (128, 256, dict(num_stages=2)),
            "64x128 two an SM": (64, 128, dict(num_stages=3, ws_registers=(24, 232))),
            "128x64 3 slots": (128, 64, dict(num_stages=3))})
        return
    probe(128, True, {"128x128": (128, 128, None), "128x64": (128, 64, None),
                      "128x128 turns": (128, 128, dict(ping_pong=True))})
    probe(64, False, {"64x128 two an SM": (64, 128, dict(num_stages=3, ws_registers=(24, 232))),
                      "128x128": (128, 128, None),
                      "128x256 2 slots": (128, 256, dict(num_stages=2))})


if __name__ == "__main__":
    main()
