"""The bench's harness: how bench.py checks, times and records a row (the
rows list, do_bench's best median, interleaved timing with a cold L2,
TILE_* switches for one kernel object). bench.py's main() sets REPEATS and
IMPLS from its flags."""
import hashlib
import json
import os

import torch
from triton.testing import do_bench

rows = []

REPEATS = 3  # main() sets it from --repeats
IMPLS = None  # main() sets it from --impls: the rows to run (torch's always)


def bench(fn):
    """The best of REPEATS medians of do_bench (every implementation alike):
    one median moved by up to 7% between back-to-back measurements of the
    same binary on the H200 (2026-12-01), more than the differences a row
    compares."""
    return min(do_bench(fn, return_mode="median") for _ in range(REPEATS))


def binary_digest(compiled):
    """SHA-256 (first 12 hex digits) of a CompiledKernel's cubin: two rows with
    the same digest launched the same machine code."""
    code = compiled.asm.get("cubin") or compiled.asm.get("ptx") or b""
    return hashlib.sha256(code if isinstance(code, bytes) else code.encode()).hexdigest()[:12]


def tuned_choice(tuned):
    """(the autotuner's last choice, its readings of every config for that
    choice's key, {config: ms}, and the same from its first pass), for the
    row: a choice that looks wrong in the table can be checked against what
    the tuner measured."""
    key = list(tuned.cache)[-1] if tuned.cache else None  # the latest choice's
    timings = tuned.configs_timings.get(key) or {}  # (none when loaded from disk)
    first = tuned.first_timings.get(key) or {}
    return str(tuned.best_config), {str(c): round(ms, 4) for c, ms in timings.items()}, \
        {str(c): round(ms, 4) for c, ms in first.items()}


def record(problem, impl, ms, flops=None, nbytes=None, err=None, config=None):
    r = {"problem": problem, "impl": impl, "ms": ms}
    if isinstance(config, tuple):
        config, readings, first = config
        if first != readings:
            r["tuner_first_ms"] = first  # before the confirmation round
        if readings:
            r["tuner_ms"] = readings
            if config in readings and ms == ms and ms > 0:
                # How far the tuner's reading of its choice is from this
                # row's (an H100 read 225 KB attention blocks 8-12% slow in
                # the tuner, 2026-12-07, and it chose worse configs).
                r["tuner_over_bench"] = round(readings[config] / ms, 3)
    if config is not None:
        r["config"] = config
    if flops:
        r["TFLOP/s"] = flops / ms / 1e9
    if nbytes:
        r["GB/s"] = nbytes / ms / 1e6
    if err is not None:
        r["error"] = err
    rows.append(r)
    print(json.dumps(r), flush=True)


def attempt(problem, impl, fn, check, flops=None, nbytes=None, tuned=None):
    """Checks then times one implementation; a failure is recorded, not fatal.
    `tuned`: an autotuned kernel, whose first call (the check's, untimed)
    tunes; its choice goes into the row."""
    try:
        fn()
        torch.cuda.synchronize()
        check()
        config = tuned_choice(tuned) if tuned is not None else None
        record(problem, impl, bench(fn), flops, nbytes, config=config)
    except Exception as e:  # noqa: BLE001 - the table shows what failed
        record(problem, impl, float("nan"), err=f"{type(e).__name__}: {str(e)[:300]}")


_FLUSH = []  # the L2-clearing buffer, made on first use


def interleaved_medians(fns, rep_ms=100.0):
    """The median time (ms) of each of `fns`, timed as do_bench times one
    (CUDA events around each run, a 256 MiB memset before it so that every
    run starts with a cold L2 and the host's launch time hides behind the
    memset) but taking turns run by run: run r of every fn is timed before
    run r+1 of any, so the machine's drift (clocks, the host) falls on all
    of them alike; run r starts at fn r (mod their number), so no fn always
    follows the same one (on an H100 two copies of the same backward
    kernels in different rows differed by up to 2%, 2026-12-06). About
    `rep_ms` of runs of the slowest, 10 to 1000 each."""
    if not _FLUSH:
        _FLUSH.append(torch.empty(256 << 20, dtype=torch.int8, device="cuda"))
    flush = _FLUSH[0]
    est = []
    for fn in fns:
        fn()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(5):
            fn()
        end.record()
        torch.cuda.synchronize()
        est.append(start.elapsed_time(end) / 5)
    n = max(10, min(1000, int(rep_ms / max(max(est), 1e-3))))
    events = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
               for _ in range(n)] for _ in fns]
    for r in range(n):
        for step in range(len(fns)):
            i = (step + r) % len(fns)
            flush.zero_()
            events[i][r][0].record()
            fns[i]()
            events[i][r][1].record()
    torch.cuda.synchronize()
    out = []
    for ev in events:
        times = sorted(s.elapsed_time(e) for s, e in ev)
        out.append(times[len(times) // 2])
    return out


def contest(problem, entries, flops=None, nbytes=None):
    """Checks every implementation of one problem, then times them taking
    turns run by run (interleaved_medians), REPEATS rounds, each keeping its
    best median: timing one implementation after the other gave the later
    rows a different machine (one do_bench median of the same binary moved by
    up to 7% between back-to-back calls on the H200). An entry is (impl, fn,
    check[, tuned[, before]]): `tuned` as in attempt(); `before` (say, NaN
    into the output) runs before the checked call."""
    live = []
    if IMPLS is not None:
        entries = [e for e in entries if e[0] in IMPLS or e[0].startswith("torch")]
    for e in entries:
        impl, fn, check = e[:3]
        tuned = e[3] if len(e) > 3 else None
        before = e[4] if len(e) > 4 else None
        try:
            if before is not None:
                before()
            fn()
            torch.cuda.synchronize()
            check()
            live.append((impl, fn, tuned_choice(tuned) if tuned is not None else None))
        except Exception as ex:  # noqa: BLE001 - the table shows what failed
            record(problem, impl, float("nan"), err=f"{type(ex).__name__}: {str(ex)[:300]}")
    best = None
    try:
        for _ in range(REPEATS):
            ms = interleaved_medians([fn for _, fn, _ in live])
            best = ms if best is None else [min(a, b) for a, b in zip(best, ms)]
    except Exception as ex:  # noqa: BLE001
        for impl, _fn, _config in live:
            record(problem, impl, float("nan"), err=f"{type(ex).__name__}: {str(ex)[:300]}")
        return
    for (impl, _fn, config), ms in zip(live, best or []):
        record(problem, impl, ms, flops, nbytes, config=config)


def note_binaries(problem, compiled_by_impl):
    """Adds each tile row's binary digest ("binary") to its record, so the
    table can say when the autotuned and the hand-picked rows ran the same
    machine code."""
    for r in rows:
        if r["problem"] == problem and r["impl"] in compiled_by_impl:
            try:
                r["binary"] = binary_digest(compiled_by_impl[r["impl"]]())
            except Exception as e:  # noqa: BLE001
                r["binary"] = f"? ({type(e).__name__})"


def close(a, b, atol, rtol=0.0):
    if not torch.allclose(a.float(), b.float(), atol=atol, rtol=rtol):
        raise AssertionError(f"mismatch: max abs err {(a.float() - b.float()).abs().max().item():.3g}")


def close_normwise(a, b, rtol):
    """|a - b| <= rtol |b| in the Frobenius norm, and no NaN."""
    err = ((a.float() - b.float()).norm() / b.float().norm()).item()
    if not err <= rtol:
        raise AssertionError(f"mismatch: normwise relative error {err:.3g}")



def with_env(name, value, fn):
    """fn whose first run (which compiles) has os.environ[name] = value:
    the TILE_* switches are read when a kernel compiles, so a kernel object
    of its own compiled under it gives that switch's row beside the
    default's, in one process."""
    compiled = []

    def run():
        if compiled:  # timed calls: no environment writes
            return fn()
        old = os.environ.get(name)
        os.environ[name] = value
        try:
            fn()
            compiled.append(True)
        finally:
            if old is None:
                del os.environ[name]
            else:
                os.environ[name] = old
    return run
