"""A mutation fuzzer over the compiler's inputs (issue 13): every input
tile-opt or tilec is given, however broken, must end in success or a
diagnostic (exit status 1), never a signal, a Python traceback or a hang.

The seeds are the lit inputs under test/ and the MLIR stage dumps of the
examples (both targets, made by tilec); each input is 1-4 mutations of one
(lines and tokens deleted, duplicated, swapped, spliced from another seed;
characters flipped; numbers made huge, negative or zero; types and shapes
changed; op names exchanged; truncation; deep nesting), compiled by
tile-opt (parse only, single passes and the named pipelines) or by tilec
(which resumes at the input's stage and compiles to LLVM IR or PTX).

Two campaigns: a fixed seed and a rotating one ($TILE_FUZZ_SEED, default
the date), $TILE_COMPILER_FUZZ_COUNT inputs each (default 160), within
$TILE_COMPILER_FUZZ_SECONDS (default 75) each. A failure prints the seed and
the index of the input, and saves the input and a reproducer shrunk by
deleting lines (under $TILE_FUZZ_ARTIFACTS, else pytest's tmp dir).

test_every_pass_on_every_lit_input runs each pass alone on each lit input.
"""

import concurrent.futures
import datetime
import glob
import os
import random
import re
import subprocess
import time

import pytest

from tilehelp import ROOT, tile_opt_path

from tile import backend
from tile import tilec as tilec_module

TILEC = os.environ.get("TILEC") or os.path.join(ROOT, "tools", "tilec", "tilec")
EXAMPLES = os.path.join(ROOT, "examples")
FIXED_SEED = 13
COUNT = int(os.environ.get("TILE_COMPILER_FUZZ_COUNT", "160"))
SECONDS = float(os.environ.get("TILE_COMPILER_FUZZ_SECONDS", "75"))
TIMEOUT = 60  # seconds per run: a hang is a failure
WORKERS = max(2, os.cpu_count() or 2)

pytestmark = pytest.mark.fuzz

# The examples' kernels and signatures (as test_tilec.py), for the dumps.
KERNELS = {
    "vector_add": ("vadd", "f32[98432], f32[98432], f32[98432]", ["BLOCK=1024"]),
    "softmax": ("softmax", "f32[128,781], f32[128,781]", ["BLOCK=1024"]),
    "layernorm": ("layernorm", "f32[64,1000], f32[1000], f32[1000], f32[64,1000], "
                  "i32, f32", ["BLOCK=256"]),
    "matmul": ("matmul", "f16[192,200], f16[200,160], f32[192,160], i32",
               ["BM=64", "BN=64", "BK=32"]),
}
MLIR_STAGES = {"cpu": "tile,fused,host,bufferized,llvm",
               "sm_90": "tile,fused,tiled,mapped,pipelined,gpu,nvvm"}

# tile-opt invocations: parse and verify only, single passes, the pipelines.
TILE_OPT_PIPELINES = [
    [], ["--canonicalize", "--cse"], ["--tile-fuse"], ["--tile-chunk-loops"], ["--tile-tiling"],
    ["--tile-tiling=warp-tiling"], ["--tile-tiling=warp-tiling warpgroup-mma"],
    ["--tile-map-threads"], ["--tile-tiling=warp-tiling", "--tile-map-threads"],
    ["--convert-tile-to-gpu"], ["--convert-tile-to-host"], ["--tile-host-matmul"],
    ["--tile-to-host"], ["--tile-to-gpu"], ["--tile-to-llvm-nvvm"],
    ["--tile-to-llvm-nvvm=warpgroup-mma"],
]
# The passes tile-opt registers (test_every_pass_on_every_lit_input).
SINGLE_PASSES = [
    "--canonicalize", "--convert-elementwise-to-linalg", "--convert-linalg-to-loops",
    "--convert-tile-to-gpu", "--convert-tile-to-gpu=prefetch=false",
    "--convert-tile-to-host", "--cse", "--inline", "--linalg-fuse-elementwise-ops",
    "--one-shot-bufferize", "--one-shot-bufferize=bufferize-function-boundaries",
    "--symbol-dce", "--tile-emit-ptx", "--tile-fuse", "--tile-host-matmul",
    "--tile-map-threads", "--tile-chunk-loops", "--tile-tiling", "--tile-tiling=warp-tiling",
    "--tile-tiling=warp-tiling warpgroup-mma", "--tile-to-gpu", "--tile-to-host",
    "--tile-to-llvm-nvvm", "--buffer-deallocation-pipeline",
]

needs_tile = pytest.mark.skipif(backend.find_module_file() is None,
                                reason="_tile module not built")


def rotating_seed():
    env = os.environ.get("TILE_FUZZ_SEED")
    return int(env) if env else int(datetime.date.today().strftime("%Y%m%d"))


# -- running the tools -----------------------------------------------------------

def _env(cache):
    env = dict(os.environ)
    env.pop("TILE_DUMP_DIR", None)
    env["TILE_CACHE_DIR"] = cache
    return env


class Outcome:
    def __init__(self, returncode, stderr, seconds):
        self.returncode, self.stderr, self.seconds = returncode, stderr, seconds

    def failure(self, tool):
        """Why this run is a failure (None if it is not): the kind first."""
        err = self.stderr
        if self.returncode is None:
            return f"timeout: no result in {TIMEOUT} s"
        if self.returncode < 0:
            return f"signal {-self.returncode}"
        if self.returncode not in (0, 1):
            return f"exit status {self.returncode}"
        if tool == "tilec" and "Traceback" in err:
            return "Python traceback"
        if self.returncode == 1 and "error" not in err:
            return "exit status 1 without a diagnostic"
        return None


def run(cmd, data, cache, timeout=TIMEOUT):
    """Runs `cmd` on `data` (bytes) given on stdin."""
    start = time.monotonic()
    for attempt in range(5):  # a build may be relinking the binary right now
        try:
            r = subprocess.run(cmd, input=data, capture_output=True, timeout=timeout,
                               env=_env(cache))
            return Outcome(r.returncode, r.stderr.decode(errors="replace"),
                           time.monotonic() - start)
        except subprocess.TimeoutExpired as e:
            return Outcome(None, (e.stderr or b"").decode(errors="replace"), timeout)
        except OSError:
            if attempt == 4:
                raise
            time.sleep(2)


def tilec_command(text):
    """tilec on stdin, to the last stage of the input's target."""
    try:
        _, implied = tilec_module.detect_stage(text)
    except Exception:
        implied = None
    target = implied or random.Random(text).choice(["cpu", "sm_90"])
    return [TILEC, "-", "--target", target,
            "--emit", "llvm-ir" if target == "cpu" else "ptx"]


def command(job):
    tool, args, text = job["tool"], job["args"], job["text"]
    if tool == "tilec":
        return tilec_command(text)
    return [tile_opt_path(), *args, "-"]


# -- the seed corpus ---------------------------------------------------------------

def lit_inputs():
    """The lit tests' inputs, split at `// -----` as --split-input-file does."""
    out = []
    for path in sorted(glob.glob(os.path.join(ROOT, "test", "**", "*.mlir"), recursive=True)):
        with open(path) as f:
            for i, chunk in enumerate(re.split(r"^// -----.*$", f.read(), flags=re.M)):
                if chunk.strip():
                    out.append((f"{os.path.relpath(path, ROOT)}#{i}", chunk))
    return out


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """(name, text) of every seed input: lit inputs, and with _tile the
    examples' MLIR stages on both targets."""
    seeds = lit_inputs()
    if backend.find_module_file() is None:
        return seeds
    out = tmp_path_factory.mktemp("dumps")
    cache = str(tmp_path_factory.mktemp("cache"))
    jobs = []
    for name, (kernel, sig, consts) in KERNELS.items():
        for target, stages in MLIR_STAGES.items():
            cmd = [TILEC, os.path.join(EXAMPLES, f"{name}.py") + "::" + kernel,
                   "--args", sig, "--target", target, "--emit", stages,
                   "-o", str(out / target)]
            for c in consts:
                cmd += ["-D", c]
            jobs.append(cmd)
    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        for r in pool.map(lambda c: subprocess.run(c, capture_output=True, timeout=300,
                                                   env=_env(cache)), jobs):
            assert r.returncode == 0, r.stderr.decode()[-3000:]
    for path in sorted(glob.glob(str(out / "*" / "*.mlir"))):
        with open(path) as f:
            seeds.append((os.path.relpath(path, out), f.read()))
    return seeds


# -- mutations ---------------------------------------------------------------------

NUMBERS = ["0", "-1", "1", "-0", "2", "3", "7", "255", "2147483647", "2147483648",
           "-2147483649", "4294967296", "9223372036854775807", "-9223372036854775808",
           "18446744073709551616", "99999999999999999999", "1048576", "1073741824",
           "1e309", "-1e309", "nan", "0.5", "0x7FC00000", "0xFFFFFFFFFFFFFFFFFFFF"]
TYPES = ["i1", "i8", "i16", "i32", "i64", "i128", "index", "f16", "bf16", "f32", "f64",
         "f8E4M3FN", "none", "complex<f32>", "vector<4xf32>", "tensor<4xf32>",
         "tensor<?xf32>", "tensor<*xf32>", "memref<4xf32>", "!tile.array<?xf32>",
         "!llvm.ptr", "!llvm.ptr<3>", "tuple<>"]
DIMS = ["0", "1", "3", "?", "2", "1048576", "2147483648", "4096", "1x1"]
INTERESTING = list('{}()[]<>,:=%@#^!"?x-.0123456789 \n\\') + ["\t", "\x00", "\x7f", "\u00e9"]
TYPE_RE = re.compile(r"\b(?:i1|i8|i16|i32|i64|index|f16|bf16|f32|f64)\b")
NUMBER_RE = re.compile(r"(?<![\w%#@^.])-?\d+(?:\.\d+)?(?:e[+-]?\d+)?\b")
SHAPE_RE = re.compile(r"(?<=[<x])(?:\d+|\?)(?=x)")
OP_RE = re.compile(r"\b(?:tile|arith|math|scf|func|memref|linalg|tensor|llvm|nvvm|gpu|vector|"
                   r"cf|bufferization)\.[a-z_.]+\b")
SSA_RE = re.compile(r"%[\w$.-]+(?:#\d+)?")
TOKEN_RE = re.compile(r"\S+")


def _pick_match(rng, regex, text):
    found = list(regex.finditer(text))
    return rng.choice(found) if found else None


def _replace_match(rng, regex, text, choices):
    m = _pick_match(rng, regex, text)
    if m is None:
        return text
    return text[:m.start()] + rng.choice(choices) + text[m.end():]


def _lines_op(text, fn):
    lines = text.split("\n")
    fn(lines)
    return "\n".join(lines)


def mutate_once(rng, text, others):
    lines = text.split("\n")
    n = len(lines)
    i, j = rng.randrange(n), rng.randrange(n)
    kind = rng.choice(["del_line", "dup_line", "swap_lines", "move_line", "splice",
                       "del_token", "dup_token", "swap_tokens", "flip", "flip", "number",
                       "number", "type", "type", "shape", "op", "ssa", "truncate", "nest",
                       "del_range", "dup_range"])
    if kind == "del_line":
        del lines[i]
    elif kind == "dup_line":
        lines.insert(j, lines[i])
    elif kind == "swap_lines":
        lines[i], lines[j] = lines[j], lines[i]
    elif kind == "move_line":
        lines.insert(j, lines.pop(i))
    elif kind == "del_range":
        del lines[min(i, j):max(i, j) + 1]
    elif kind == "dup_range":
        lines[j:j] = lines[min(i, j):max(i, j) + 1]
    elif kind == "splice":
        other = rng.choice(others).split("\n")
        k = rng.randrange(len(other))
        lines[j:j] = other[k:k + rng.choice([1, 1, 2, 5])]
    if kind in ("del_line", "dup_line", "swap_lines", "move_line", "del_range",
                "dup_range", "splice"):
        return "\n".join(lines)
    if kind in ("del_token", "dup_token", "swap_tokens"):
        tokens = list(TOKEN_RE.finditer(text))
        if len(tokens) < 2:
            return text
        a, b = sorted(rng.sample(tokens, 2), key=lambda m: m.start())
        if kind == "del_token":
            return text[:a.start()] + text[a.end():]
        if kind == "dup_token":
            return text[:b.start()] + a.group() + " " + text[b.start():]
        return (text[:a.start()] + b.group() + text[a.end():b.start()] + a.group() +
                text[b.end():])
    if kind == "flip":
        if not text:
            return rng.choice(INTERESTING)
        k = rng.randrange(len(text))
        return text[:k] + rng.choice(INTERESTING) + text[k + 1:]
    if kind == "number":
        return _replace_match(rng, NUMBER_RE, text, NUMBERS)
    if kind == "type":
        return _replace_match(rng, TYPE_RE, text, TYPES)
    if kind == "shape":
        return _replace_match(rng, SHAPE_RE, text, DIMS)
    if kind == "op":
        ops = OP_RE.findall(text + "\n" + rng.choice(others))
        return _replace_match(rng, OP_RE, text, ops) if ops else text
    if kind == "ssa":
        names = SSA_RE.findall(text)
        return _replace_match(rng, SSA_RE, text, names) if names else text
    if kind == "truncate":
        return text[:rng.randrange(len(text) + 1)]
    # nest: brackets opened (and maybe closed) at one point, some past the
    # nesting limit (compiler/InputLimits.h).
    depth = rng.choice([2, 10, 100, 255, 300, 5000])
    opener, closer = rng.choice([("{", "}"), ("(", ")"), ("[", "]"), ("<", ">"),
                                 ("module {\n", "}\n"), ("scf.execute_region {\n", "}\n")])
    k = rng.randrange(len(text) + 1)
    tail = closer * depth if rng.random() < 0.7 else ""
    return text[:k] + opener * depth + tail + text[k:]


def make_jobs(seed, count, corpus):
    texts = [t for _, t in corpus]
    jobs = []
    for index in range(count):
        rng = random.Random(f"{seed}:{index}")
        name, text = rng.choice(corpus)
        for _ in range(rng.choice([1, 1, 2, 3, 4])):
            text = mutate_once(rng, text, texts)
        use_tilec = backend.find_module_file() is not None and rng.random() < 0.25
        jobs.append({"index": index, "seed_input": name, "text": text,
                     "tool": "tilec" if use_tilec else "tile-opt",
                     "args": [] if use_tilec else rng.choice(TILE_OPT_PIPELINES)})
    return jobs


# -- shrinking and reporting ---------------------------------------------------------

def shrink(job, kind, cache, budget_s=60):
    """The input with lines deleted while the run still fails the same way
    (delta debugging over line chunks), within `budget_s`."""
    lines = job["text"].split("\n")
    deadline = time.monotonic() + budget_s
    cmd = command(job)

    def still_fails(candidate):
        text = "\n".join(candidate)
        c = tilec_command(text) if job["tool"] == "tilec" else cmd
        why = run(c, text.encode(), cache).failure(job["tool"])
        return why is not None and why.split(":")[0] == kind.split(":")[0]

    chunk = max(1, len(lines) // 2)
    while chunk >= 1 and time.monotonic() < deadline:
        i, removed = 0, False
        while i < len(lines) and time.monotonic() < deadline:
            candidate = lines[:i] + lines[i + chunk:]
            if candidate and still_fails(candidate):
                lines, removed = candidate, True
            else:
                i += chunk
        if not removed:
            chunk //= 2
    return "\n".join(lines)


def artifacts_dir(tmp_path):
    d = os.environ.get("TILE_FUZZ_ARTIFACTS")
    if d:
        os.makedirs(d, exist_ok=True)
        return d
    return str(tmp_path)


def campaign(seed, corpus, tmp_path):
    jobs = make_jobs(seed, COUNT, corpus)
    cache = str(tmp_path / "cache")
    deadline = time.monotonic() + SECONDS
    failures, ran = [], 0

    def work(job):
        if time.monotonic() > deadline:
            return job, None
        return job, run(command(job), job["text"].encode(), cache)

    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        for job, outcome in pool.map(work, jobs):
            if outcome is None:
                continue
            ran += 1
            why = outcome.failure(job["tool"])
            if why:
                failures.append((job, why, outcome))
    print(f"compiler fuzz: seed {seed}: {ran} of {len(jobs)} inputs in the time budget, "
          f"{len(failures)} failures")
    assert ran >= min(len(jobs), 40), f"only {ran} inputs ran in {SECONDS} s"
    if not failures:
        return
    out = artifacts_dir(tmp_path)
    report = []
    for job, why, outcome in failures[:5]:  # shrink a few; report all
        base = os.path.join(out, f"fuzz-{seed}-{job['index']}")
        with open(base + ".mlir", "w") as f:
            f.write(job["text"])
        small = shrink(job, why, cache) if not why.startswith("timeout") else job["text"]
        with open(base + ".min.mlir", "w") as f:
            f.write(small)
        cmd = tilec_command(small) if job["tool"] == "tilec" else command(job)
        cmd = " ".join(cmd[:1] + [base + ".min.mlir"] + cmd[2:] if job["tool"] == "tilec"
                       else cmd[:-1] + [base + ".min.mlir"])
        report.append(f"input {job['index']} (from {job['seed_input']}): {why}\n"
                      f"  saved: {base}.mlir, shrunk: {base}.min.mlir\n"
                      f"  replay: {cmd}\n"
                      f"  stderr tail: {outcome.stderr[-600:]}\n"
                      f"  reproducer:\n{small[:1500]}")
    pytest.fail(f"seed {seed} (TILE_FUZZ_SEED={seed} reruns it): {len(failures)} of {ran} "
                f"inputs failed; indices "
                f"{[j['index'] for j, _, _ in failures]}\n" + "\n".join(report),
                pytrace=False)


@pytest.mark.parametrize("which", ["fixed", "rotating"])
def test_mutated_inputs_never_crash(which, corpus, tmp_path):
    seed = FIXED_SEED if which == "fixed" else rotating_seed()
    campaign(seed, corpus, tmp_path)


def test_every_pass_on_every_lit_input(tmp_path):
    """Each pass tile-opt registers, alone, on each lit input: success or a
    diagnostic (--tile-map-threads crashed on ops.mlir, issue 13)."""
    jobs = [(name, text, p) for name, text in lit_inputs() for p in SINGLE_PASSES]
    cache = str(tmp_path / "cache")

    def work(job):
        name, text, p = job
        return job, run([tile_opt_path(), p, "-"], text.encode(), cache)

    bad = []
    with concurrent.futures.ThreadPoolExecutor(WORKERS) as pool:
        for (name, _, p), outcome in pool.map(work, jobs):
            why = outcome.failure("tile-opt")
            if why:
                bad.append(f"tile-opt {p} {name}: {why}\n{outcome.stderr[-400:]}")
    assert not bad, "\n".join(bad)
