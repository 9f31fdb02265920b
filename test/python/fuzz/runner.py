"""Runs programs on the backend and compares them with the model: in worker
processes (a kernel that kills its process, or hangs, is a finding too, not
the end of the run), shrinks each failing program and prints a reproducer."""

import importlib.util
import itertools
import multiprocessing as mp
import os
import shutil
import sys
import tempfile
import time
import traceback
from multiprocessing.connection import wait

import numpy as np

from . import kernelgen as G
from .model import Semantics
from .numeric import BOOL, FLOAT
from .program import arrays_for

_counter = itertools.count()
KERNEL_TIMEOUT_S = 60
# A process keeps every binary it compiled (about 0.5 MB each): workers are
# replaced after this many kernels so long campaigns keep their speed.
TASKS_PER_WORKER = 300


# ---------------------------------------------------------------------------
# One program, in this process
# ---------------------------------------------------------------------------

def _load_kernel(source, workdir):
    """The kernel from its own module file (device loops read their source)."""
    name = f"fuzz_{os.getpid()}_{next(_counter)}"
    path = os.path.join(workdir, name + ".py")
    with open(path, "w") as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.fuzz_kernel


def _poisoned(dev, shape, np_dtype, byte):
    raw = np.full(int(np.prod(shape)) * np_dtype.itemsize, byte, np.uint8)
    a = raw.view(np_dtype).reshape(shape) if np_dtype != np.bool_ else \
        raw.view(np.bool_).reshape(shape)
    return a if dev is None else dev.put(a)


def _raw(a):
    return np.ascontiguousarray(a).view(np.uint8).reshape(a.shape + (-1,))


def run(prog, dev, sem, workdir):
    """Outcome of one program: {"status": "ok"|"mismatch"|"error", ...}."""
    try:
        source = prog.source()
        want = prog.expected(sem)
    except Exception:  # noqa: BLE001 - a bug of the fuzzer itself
        return {"status": "fuzzer-bug", "detail": traceback.format_exc()}
    try:
        kernel = _load_kernel(source, workdir)
        args = [dev.put(a) for a in arrays_for(prog)] + [s[2] for s in prog.scalars]
        outs = []
        for byte in (0x5A, 0xA5):  # an element equal to both poisons was not written
            out = _poisoned(dev, (prog.n, prog.m), prog.out_np, byte)
            kernel[prog.grid](*args, out, R=prog.R, C=prog.C)
            outs.append(np.array(dev.get(out)))
    except Exception as e:  # noqa: BLE001 - valid programs must compile and run
        return {"status": "error", "kind": type(e).__name__,
                "detail": f"{type(e).__name__}: {e}".strip()[:3000]}
    return compare(prog, want, outs)


def compare(prog, want, outs):
    got = outs[0]
    unwritten = np.all(_raw(outs[0]) == 0x5A, -1) & np.all(_raw(outs[1]) == 0xA5, -1)
    bad = unwritten.copy()
    known = ~want.unk
    if not np.array_equal(_raw(outs[0]), _raw(outs[1])):  # two launches, two answers
        bad |= ~np.all(_raw(outs[0]) == _raw(outs[1]), -1) & ~unwritten & known
    dt = prog.final.dt
    if dt.kind == FLOAT:
        g = got.astype(np.float64)
        with np.errstate(all="ignore"):
            want_nan = np.isnan(want.lo) & np.isnan(want.hi)
            atol = dt.tiny  # flushed subnormals
            inside = (g >= want.lo - atol) & (g <= want.hi + atol)
            inf_ok = ~np.isinf(want.lo) | ~(want.lo == want.hi) | (g == want.lo)
            ok = np.where(want_nan, np.isnan(g), ~np.isnan(g) & inside & inf_ok)
    elif dt.kind == BOOL:
        raw = _raw(got)[..., 0]
        ok = (raw <= 1) & ((raw == 1) == want.nom.astype(bool))
    else:
        ok = got == want.nom
    bad |= known & ~ok
    if not bad.any():
        return {"status": "ok", "known": float(known.mean())}
    idx = np.argwhere(bad)[:6]
    lines = []
    for r, c in idx:
        w = want.nom[r, c]
        rng = f" in [{want.lo[r, c]!r}, {want.hi[r, c]!r}]" if dt.kind == FLOAT else ""
        note = " (never written)" if unwritten[r, c] else ""
        lines.append(f"  out[{r}, {c}] = {got[r, c]!r}{note}, expected {w!r}{rng}")
    return {"status": "mismatch", "count": int(bad.sum()), "detail": "\n".join(lines)}


# ---------------------------------------------------------------------------
# Worker processes
# ---------------------------------------------------------------------------

def _worker_main(conn, backend):
    os.environ["TILE_ALWAYS_COMPILE"] = "1"
    os.environ["TILE_CACHE_DIR"] = tempfile.mkdtemp(prefix="tile-fuzz-cache-")
    workdir = tempfile.mkdtemp(prefix="tile-fuzz-")
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from tilehelp import Device
    dev = Device()
    sem = Semantics(dev.backend if backend is None else backend)
    import warnings
    warnings.simplefilter("ignore")
    parent = os.getppid()
    while True:
        if not conn.poll(10):
            if os.getppid() != parent:  # orphaned: the run was killed
                break
            continue
        try:
            task = conn.recv()
        except EOFError:
            break
        if task is None:
            break
        tid, prog = task
        t0 = time.time()
        out = run(prog, dev, sem, workdir)
        out["seconds"] = time.time() - t0
        conn.send((tid, out))
    shutil.rmtree(workdir, ignore_errors=True)


class Pool:
    """Worker processes fed one program at a time; a worker that dies or
    hangs is replaced, and its program's outcome says how it ended."""

    def __init__(self, workers, backend=None):
        self.ctx = mp.get_context("spawn")
        self.backend = backend
        self.slots = [self._spawn() for _ in range(workers)]

    def _spawn(self):
        parent, child = self.ctx.Pipe()
        p = self.ctx.Process(target=_worker_main, args=(child, self.backend), daemon=True)
        p.start()
        child.close()
        return {"proc": p, "conn": parent, "task": None, "since": 0.0, "done": 0}

    def map(self, tasks):
        """Yields (tid, outcome) for tasks [(tid, program)], in completion order."""
        todo = list(reversed(tasks))
        busy = 0
        while todo or busy:
            for s in self.slots:
                if s["task"] is None and todo:
                    s["task"] = todo.pop()
                    s["since"] = time.time()
                    s["conn"].send(s["task"])
                    busy += 1
            live = [s for s in self.slots if s["task"] is not None]
            ready = wait([s["conn"] for s in live] + [s["proc"].sentinel for s in live],
                         timeout=5)
            for i, s in enumerate(self.slots):
                if s["task"] is None:
                    continue
                tid = s["task"][0]
                if s["conn"] in ready:
                    try:
                        _, out = s["conn"].recv()
                    except EOFError:
                        out = None
                    if out is not None:
                        s["task"] = None
                        busy -= 1
                        s["done"] += 1
                        if s["done"] >= TASKS_PER_WORKER:
                            self._retire(s)
                            self.slots[i] = self._spawn()
                        yield tid, out
                        continue
                hung = time.time() - s["since"] > KERNEL_TIMEOUT_S
                if not s["proc"].is_alive() or hung:
                    if hung:
                        s["proc"].kill()
                    s["proc"].join(5)
                    code = s["proc"].exitcode
                    detail = (f"hung for more than {KERNEL_TIMEOUT_S} s" if hung else
                              f"the process died: exit code {code}"
                              + (f" (signal {-code})" if code and code < 0 else ""))
                    busy -= 1
                    self.slots[i] = self._spawn()
                    yield tid, {"status": "crash", "detail": detail}

    @staticmethod
    def _retire(slot):
        try:
            slot["conn"].send(None)
        except (OSError, BrokenPipeError):
            pass
        slot["proc"].join(10)
        if slot["proc"].is_alive():
            slot["proc"].kill()

    def close(self):
        for s in self.slots:
            try:
                s["conn"].send(None)
            except (OSError, BrokenPipeError):
                pass
        for s in self.slots:
            s["proc"].join(10)
            if s["proc"].is_alive():
                s["proc"].kill()


# ---------------------------------------------------------------------------
# Shrinking and reports
# ---------------------------------------------------------------------------

def _paths(node, path=()):
    yield path, node
    for k, c in enumerate(node.children):
        yield from _paths(c, path + (k,))


def _replace(node, path, new):
    if not path:
        return new
    kids = list(node.children)
    kids[path[0]] = _replace(kids[path[0]], path[1:], new)
    return node.with_children(kids)


def _variants(prog):
    """Smaller programs: a subtree replaced by one of its children or by a
    tile leaf; the loop dropped."""
    import copy
    leaves = [G.Tile(i.name.upper(), i.dt, {"full": (prog.R, prog.C), "row": (1, prog.C),
                                            "col": (prog.R, 1)}[i.form]) for i in prog.inputs]
    fields = ["final"] + (["loop.body"] if prog.loop else [])
    for fld in fields:
        tree = prog.final if fld == "final" else prog.loop.body
        for path, node in sorted(_paths(tree), key=lambda pn: len(pn[0])):
            subs = list(node.children) + ([] if isinstance(node, G.Tile) else leaves)
            for sub in subs:
                try:
                    new = _replace(tree, path, sub)
                except G.Invalid:
                    continue
                if new.weak:
                    continue
                p = copy.copy(prog)
                if fld == "final":
                    p.final = new
                else:
                    p.loop = copy.copy(prog.loop)
                    p.loop.body = new
                if p.loop and not any(isinstance(x, G.Tile) and x.name == "ACC"
                                      for x in G.walk(p.final)):
                    p.loop = None
                yield p
    if prog.loop and not any(getattr(x, "name", "") == "ACC" for x in G.walk(prog.final)):
        p = copy.copy(prog)
        p.loop = None
        yield p
    if prog.branch and not any(getattr(x, "name", "") == "BR" for x in G.walk(prog.final)):
        p = copy.copy(prog)
        p.branch = None
        yield p


def same_failure(a, b):
    return a["status"] == b["status"] and a.get("kind") == b.get("kind")


def _size(p):
    return G.size(p.final) + (G.size(p.loop.body) + 1 if p.loop else 0) + \
        (G.size(p.branch.then) + G.size(p.branch.other) + 1 if p.branch else 0)


def shrink(pool, prog, outcome, budget_s=90):
    """Greedy: the first smaller variant that fails the same way, until none
    does (or the time budget is spent)."""
    t0 = time.time()
    best, best_out = prog, outcome
    while time.time() - t0 < budget_s:
        smaller = [v for v in _variants(best) if _size(v) < _size(best)]
        found = None
        for k in range(0, len(smaller), len(pool.slots)):
            if time.time() - t0 > budget_s:
                break
            chunk = smaller[k:k + len(pool.slots)]
            for tid, out in pool.map(list(enumerate(chunk))):
                if found is None and same_failure(out, outcome):
                    found = (chunk[tid], out)
            if found:
                break
        if not found:
            break
        best, best_out = found
    return best, best_out


def reproducer(prog, outcome):
    """A self-contained report: source, inputs, launch, what differed."""
    np.set_printoptions(threshold=200, linewidth=100)
    lines = [f"--- {prog.label}: {outcome['status']}"
             + (f" ({outcome.get('count')} elements)" if outcome.get("count") else ""),
             outcome.get("detail", ""), "--- kernel source:", prog.source().rstrip(),
             "--- launch:"]
    lines.append("import numpy as np")
    lines.append("from numpy import inf, nan  # as tolist() writes them")
    for inp, a in zip(prog.inputs, arrays_for(prog)):
        lines.append(f"{inp.name} = np.array({a.tolist()!r}, dtype=np.{a.dtype.name})")
    for name, dt, value in prog.scalars:
        lines.append(f"{name} = {value!r}")
    lines.append(f"out = np.zeros(({prog.n}, {prog.m}), dtype=np.{np.dtype(prog.out_np).name})")
    lines.append(f"fuzz_kernel[{prog.grid}]({', '.join(prog.params())}, R={prog.R}, "
                 f"C={prog.C})")
    return "\n".join(lines)


def campaign(seed, count, workers=None, shrink_budget_s=60, max_shrunk=8, start=0,
             log=None):
    """Runs programs (seed, start..start+count-1); returns (stats, reports)."""
    from .generate import available_features, generate
    features = available_features()
    workers = workers or max(1, min(os.cpu_count() or 1, 8))
    pool = Pool(workers)
    stats = {"ok": 0, "known": 0.0, "seconds": 0.0, "features": features}
    failures = []
    try:
        tasks = [(i, generate(seed, i, features)) for i in range(start, start + count)]
        progs = dict(tasks)
        for tid, out in pool.map(tasks):
            stats["seconds"] += out.get("seconds", 0.0)
            if out["status"] == "ok":
                stats["ok"] += 1
                stats["known"] += out["known"]
            else:
                failures.append((tid, out))
                if log:
                    log(f"{progs[tid].label}: {out['status']}: "
                        f"{out.get('detail', '').splitlines()[:1]}")
        reports = []
        for k, (tid, out) in enumerate(sorted(failures, key=lambda f: f[0])):
            prog = progs[tid]
            if k < max_shrunk and out["status"] not in ("fuzzer-bug", "crash"):
                prog, out = shrink(pool, prog, out, shrink_budget_s)
            reports.append(reproducer(prog, out))
    finally:
        pool.close()
    return stats, failures, reports
