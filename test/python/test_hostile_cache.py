"""The kernel cache and the dumps against a hostile or careless user (issue
13, items 10, 12, 14 and 15): damaged or planted cache entries are never
loaded, `python -m tile.cache` survives any damage, a cache another user
could write is not used, and no name writes outside its directory.

Every kernel run here is a fresh process (a crash must not take pytest
down), on the CPU backend: the cache's format and checks are the same for
cubins, which test_cache.py exercises with ptxas."""

import hashlib
import json
import os
import random
import shutil
import stat
import subprocess
import sys
import textwrap
import time

import pytest

tile = pytest.importorskip("tile")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TILEC = os.environ.get("TILEC") or os.path.join(ROOT, "tools", "tilec", "tilec")

# One kernel, `out = x OP y`, in a fresh process; prints the result's
# correctness and the cache's stats.
SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tile
    import tile.cache

    @tile.kernel
    def vop(x, y, out, BLOCK: tile.Constant[int]):
        i = tile.bid(0)
        a = tile.load(x, index=(i,), shape=(BLOCK,))
        b = tile.load(y, index=(i,), shape=(BLOCK,))
        tile.store(out, index=(i,), tile=a OP b)

    n = 1000
    rng = np.random.default_rng(7)
    x = rng.random(n).astype(np.float32)
    y = rng.random(n).astype(np.float32)
    out = np.full_like(x, np.nan)
    vop[(tile.cdiv(n, 256),)](x, y, out, BLOCK=256)
    want = x.astype(np.float64) OP y.astype(np.float64)
    ok = bool(np.allclose(out, want, rtol=1e-6, atol=1e-6))
    print(json.dumps({"ok": ok, "stats": tile.cache.stats()}))
""")


def _env(cache_dir, **extra):
    env = dict(os.environ)
    for var in ("TILE_ALWAYS_COMPILE", "TILE_DUMP_DIR"):
        env.pop(var, None)
    if cache_dir is not None:
        env["TILE_CACHE_DIR"] = str(cache_dir)
    env["TILE_BACKEND"] = "cpu"
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    env.update(extra)
    return env


def _run(cache_dir, op="+", cwd=None, **env):
    """The child's {"ok", "stats"} and stderr; fails on any crash."""
    proc = subprocess.run([sys.executable, "-c", SCRIPT.replace("OP", op)],
                          capture_output=True, text=True, timeout=300,
                          cwd=cwd, env=_env(cache_dir, **env))
    assert proc.returncode == 0, (
        f"the process died (status {proc.returncode}):\n{proc.stderr[-3000:]}")
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    return result, proc.stderr


def _entries(cache_dir):
    return [d for d in cache_dir.iterdir()
            if len(d.name) == 64 and d.is_dir() and not d.is_symlink()]


def _rewrite_checksum(entry):
    """What a torn write or an attacker without the key does: the recorded
    size and SHA-256 made to describe whatever payload.bin now holds."""
    payload = (entry / "payload.bin").read_bytes()
    meta = json.loads((entry / "meta.json").read_text())
    meta["payload_size"] = len(payload)
    meta["payload_sha256"] = hashlib.sha256(payload).hexdigest()
    (entry / "meta.json").write_text(json.dumps(meta))


def _flip_bits(path, rng, count):
    data = bytearray(path.read_bytes())
    for _ in range(count):
        bit = rng.randrange(len(data) * 8)
        data[bit // 8] ^= 1 << (bit % 8)
    path.write_bytes(bytes(data))


# -- item 10: a corrupted object is never loaded ------------------------------

@pytest.mark.numerics
def test_bit_flips_in_a_cached_object_never_reach_the_loader(tmp_path):
    cache = tmp_path / "cache"
    first, _ = _run(cache)
    assert first["ok"] and first["stats"]["writes"] == 1, first
    [entry] = _entries(cache)
    pristine = tmp_path / "pristine"
    shutil.copytree(entry, pristine)

    rng = random.Random(1013)
    rejected = first["stats"]["rejected"]
    for trial in range(40):
        shutil.rmtree(entry, ignore_errors=True)
        shutil.copytree(pristine, entry)
        # Mostly the payload with its checksum rewritten (what crashed the
        # JIT before); also bare payload flips and damaged metadata.
        target = ["payload.bin"] * 3 + ["meta.json", "meta.hmac"]
        name = target[trial % len(target)]
        _flip_bits(entry / name, rng, rng.choice([1, 1, 2, 8, 64]))
        if name == "payload.bin" and trial % 5 != 1:
            _rewrite_checksum(entry)
        result, stderr = _run(cache)
        assert result["ok"], f"trial {trial} ({name}): wrong numerics"
        assert result["stats"]["rejected"] == rejected + 1, (trial, name)
        rejected += 1
        assert "damaged entry of the kernel cache" in stderr, stderr
    # The entry stored afterwards is sound: the next process hits it.
    again, _ = _run(cache)
    assert again["ok"] and again["stats"]["hits"] == result["stats"]["hits"] + 1


@pytest.mark.numerics
def test_a_planted_object_with_a_matching_checksum_is_not_run(tmp_path):
    """Another kernel's object (x - y, same name and signature) planted in
    the x + y entry with a fresh checksum: without the cache's key it does
    not verify, and x + y is compiled and run."""
    good, bad = tmp_path / "cache", tmp_path / "attacker"
    assert _run(good)[0]["ok"] and _run(bad, op="-")[0]["ok"]
    [entry], [evil] = _entries(good), _entries(bad)
    shutil.copyfile(evil / "payload.bin", entry / "payload.bin")
    _rewrite_checksum(entry)
    result, stderr = _run(good)
    assert result["ok"], "the planted object ran"
    assert result["stats"]["rejected"] == 1
    assert "fails the keyed check" in stderr


def test_a_huge_sparse_payload_is_not_read(tmp_path):
    cache = tmp_path / "cache"
    _run(cache)
    [entry] = _entries(cache)
    with open(entry / "payload.bin", "r+b") as f:
        f.truncate(3 << 30)
    start = time.monotonic()
    result, _ = _run(cache)
    assert result["ok"] and result["stats"]["rejected"] == 1
    assert time.monotonic() - start < 30
    # The CLI's --verify checks the size before reading, too.
    _run(cache)
    [entry] = _entries(cache)
    with open(entry / "payload.bin", "r+b") as f:
        f.truncate(3 << 30)
    start = time.monotonic()
    listing = _cli(cache, "list", "--verify")
    assert time.monotonic() - start < 20
    assert "BROKEN" in listing and "larger" in listing


# -- item 12: python -m tile.cache on damaged metadata --------------------------

def _cli(cache_dir, *args):
    proc = subprocess.run([sys.executable, "-m", "tile.cache", *args],
                          capture_output=True, text=True, timeout=120,
                          env=_env(cache_dir))
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, (
        args, proc.stderr[-3000:])
    return proc.stdout


def _meta(key, **fields):
    meta = {"format": 2, "key": key, "kernel_name": "k", "num_warps": 0,
            "shared_mem": 0, "signature": ["array:1"], "payload_kind": "object",
            "payload_size": 4, "payload_sha256": hashlib.sha256(b"abcd").hexdigest(),
            "stages": [], "attrs": {}, "created_ns": 0,
            "key_inputs": {"ir_sha256": "0" * 64, "build_id": "b", "target": "cpu",
                           "options": "", "tool_version": ""}}
    meta.update(fields)
    return json.dumps(meta)


DAMAGE = {
    "nested_arrays": lambda key: "[" * 200000 + "]" * 200000,
    "nested_objects": lambda key: '{"a":' * 100000 + "1" + "}" * 100000,
    "key_inputs_is_a_list": lambda key: _meta(key, key_inputs=[1, 2]),
    "stages_is_a_string": lambda key: _meta(key, stages="tile"),
    "stages_are_ints": lambda key: _meta(key, stages=[1, None, "x"]),
    "stage_size_is_a_list": lambda key: _meta(key, stages=[
        {"name": "tile", "size": [1], "sha256": 5}]),
    "kernel_name_is_an_object": lambda key: _meta(key, kernel_name={"a": 1}),
    "payload_size_is_text": lambda key: _meta(key, payload_size="4"),
    "payload_size_is_negative": lambda key: _meta(key, payload_size=-1),
    "format_is_true": lambda key: _meta(key, format=True),
    "not_utf8": lambda key: b"\xff\xfe{\x00",
    "too_large": lambda key: " " * (2 << 20) + "{}",
    "a_number": lambda key: "12",
}


def _damaged_cache(tmp_path):
    """A cache holding every kind of damage, and an outside directory whose
    files must survive everything done to the cache."""
    cache, outside = tmp_path / "cache", tmp_path / "outside"
    cache.mkdir(mode=0o700)
    outside.mkdir()
    (outside / "precious").write_text("keep me")
    keys = []
    for i, (name, make) in enumerate(sorted(DAMAGE.items())):
        key = hashlib.sha256(name.encode()).hexdigest()
        d = cache / key
        d.mkdir()
        text = make(key)
        (d / "meta.json").write_bytes(text if isinstance(text, bytes) else text.encode())
        (d / "payload.bin").write_bytes(b"abcd")
        keys.append(key)
    weird = {}
    for name in ("meta_is_a_link", "meta_is_a_directory", "payload_is_a_link",
                 "entry_is_a_file", "entry_is_a_link", "entry_unreadable"):
        weird[name] = hashlib.sha256(name.encode()).hexdigest()
    d = cache / weird["meta_is_a_link"]
    d.mkdir()
    (d / "meta.json").symlink_to(outside / "precious")
    d = cache / weird["meta_is_a_directory"]
    (d / "meta.json").mkdir(parents=True)
    d = cache / weird["payload_is_a_link"]
    d.mkdir()
    (d / "meta.json").write_text(_meta(weird["payload_is_a_link"]))
    (d / "payload.bin").symlink_to(outside / "precious")
    (cache / weird["entry_is_a_file"]).write_text("not a directory")
    (cache / weird["entry_is_a_link"]).symlink_to(outside)
    d = cache / weird["entry_unreadable"]
    d.mkdir()
    (d / "meta.json").write_text(_meta(weird["entry_unreadable"]))
    d.chmod(0)
    (cache / ".trash-planted").symlink_to(outside)
    (cache / ".stats.lock").symlink_to(outside / "created-through-the-lock")
    (cache / "stats.json").write_text("[" * 100000)
    return cache, outside, keys + list(weird.values())


def test_cli_reports_and_skips_damaged_entries(tmp_path):
    cache, outside, keys = _damaged_cache(tmp_path)
    for args in (["list"], ["list", "--verify"]):
        listing = _cli(cache, *args)
        lines = [line for line in listing.splitlines() if "BROKEN" in line]
        # Every damaged directory entry is listed as such; none is sound.
        assert len(lines) >= len(DAMAGE), listing
        assert f"{len(keys)} entries" in listing or "entries" in listing
    stats = json.loads(_cli(cache, "stats", "--json"))
    assert stats["hits"] == 0  # the damaged stats.json reads as zero
    assert "hits" in _cli(cache, "stats")
    assert (outside / "precious").read_text() == "keep me"


def test_cli_clear_always_works(tmp_path):
    cache, outside, keys = _damaged_cache(tmp_path)
    out = _cli(cache, "clear")
    assert out.startswith("removed")
    left = sorted(p.name for p in cache.iterdir())
    assert not [n for n in left if n in keys or n.startswith(".trash-")], left
    assert "stats.json" not in left
    # Nothing outside was followed, created or removed.
    assert (outside / "precious").read_text() == "keep me"
    assert not (outside / "created-through-the-lock").exists()
    assert sorted(p.name for p in outside.iterdir()) == ["precious"]
    # And again on the now empty cache, and on one that does not exist.
    assert "removed 0 entries" in _cli(cache, "clear")
    assert "removed 0 entries" in _cli(tmp_path / "absent", "clear")


# -- item 14: whose cache it is --------------------------------------------------

def test_the_cache_is_created_private(tmp_path):
    cache = tmp_path / "a" / "cache"
    old = os.umask(0)
    try:
        result, _ = _run(cache)
    finally:
        os.umask(old)
    assert result["ok"]
    assert stat.S_IMODE(cache.stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700
    key = cache / "cache.key"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and key.stat().st_size == 32
    [entry] = _entries(cache)
    assert stat.S_IMODE(entry.stat().st_mode) == 0o700
    for f in entry.iterdir():
        assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
    # The CLI verifies what the runtime wrote as the runtime does.
    listing = _cli(cache, "list", "--verify")
    assert "1 entries" in listing and "BROKEN" not in listing, listing


@pytest.mark.parametrize("how", ["chmod 777", "chmod 770", "chown other"])
def test_a_cache_others_can_write_is_not_used(tmp_path, how):
    cache = tmp_path / "cache"
    result, _ = _run(cache)
    assert result["stats"]["writes"] == 1
    [entry] = _entries(cache)
    if how == "chown other":
        if os.geteuid() != 0:
            pytest.skip("chown to another uid needs root")
        os.chown(cache, 12345, 12345)
    else:
        cache.chmod(int(how.split()[1], 8))
    shutil.rmtree(entry)  # so a use would show as a write
    result, stderr = _run(cache)
    assert result["ok"]
    assert "not using the kernel cache" in stderr, stderr
    assert stderr.count("not using the kernel cache") == 1
    assert _entries(cache) == [], "an entry was written into an untrusted cache"
    # `tile.cache list` says why.
    proc = subprocess.run([sys.executable, "-m", "tile.cache", "list"],
                          capture_output=True, text=True, env=_env(cache))
    assert "does not use the cache" in proc.stderr


def test_an_entry_of_another_user_is_not_loaded(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("chown to another uid needs root")
    cache = tmp_path / "cache"
    _run(cache)
    [entry] = _entries(cache)
    os.chown(entry / "payload.bin", 12345, 12345)
    result, stderr = _run(cache)
    assert result["ok"] and result["stats"]["rejected"] == 1
    assert "owned by uid 12345" in stderr


def test_without_a_home_the_fallback_is_private_and_removed(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    predictable = f"/tmp/tile-cache-{os.getuid()}"
    existed = os.path.exists(predictable)
    env = _env(None, HOME=str(tmp_path / "no-home"), TMPDIR=str(tmp))
    env.pop("TILE_CACHE_DIR", None)
    proc = subprocess.run([sys.executable, "-c", SCRIPT.replace("OP", "+")],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout.splitlines()[-1])["ok"]
    assert os.path.exists(predictable) == existed
    assert list(tmp.iterdir()) == [], "the private cache was left behind"


# -- item 15: names in paths -----------------------------------------------------

ESCAPE_SCRIPT = textwrap.dedent("""
    import numpy as np
    import tile

    def vadd(x, out, BLOCK: tile.Constant[int]):
        i = tile.bid(0)
        a = tile.load(x, index=(i,), shape=(BLOCK,))
        tile.store(out, index=(i,), tile=a + a)

    vadd.__name__ = vadd.__qualname__ = "../../escape"
    k = tile.kernel(vadd)
    x = np.arange(16, dtype=np.float32)
    out = np.zeros_like(x)
    k[(1,)](x, out, BLOCK=16)
    assert (out == 2 * x).all()
""")


def _files(d):
    return sorted(str(p.relative_to(d)) for p in d.rglob("*") if p.is_file())


def test_a_kernel_name_cannot_write_outside_the_dump_dir(tmp_path):
    dump = tmp_path / "a" / "b" / "dump"
    proc = subprocess.run([sys.executable, "-c", ESCAPE_SCRIPT],
                          capture_output=True, text=True, timeout=300,
                          env=_env(tmp_path / "cache", TILE_DUMP_DIR=str(dump)))
    assert proc.returncode == 0, proc.stderr
    outside = [f for f in _files(tmp_path)
               if not f.startswith("a/b/dump/") and not f.startswith("cache/")]
    assert outside == [], outside
    dumped = _files(dump)
    assert dumped and all("/" not in f and not f.startswith(".") for f in dumped)
    assert "_.._.._escape.tile.mlir" in dumped

    # tilec -o DIR names its files the same way.
    if not os.access(TILEC, os.X_OK):
        return
    out = tmp_path / "x" / "y" / "out"
    r = subprocess.run([TILEC, str(dump / "_.._.._escape.tile.mlir"), "--emit",
                        "all", "--target", "cpu", "-o", str(out)],
                       capture_output=True, text=True, timeout=300,
                       env=_env(tmp_path / "cache"))
    assert r.returncode == 0, r.stderr
    assert [f for f in _files(tmp_path / "x") if not f.startswith("y/out/")] == []
    assert "_.._.._escape.llvm-ir.ll" in _files(out)
