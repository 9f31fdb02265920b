"""The on-disk kernel cache: ``python -m tile.cache list|stats|clear``.

Pure Python over the format runtime/DiskCache.cpp writes (see its header):
one directory per key holding ``meta.json``, ``payload.bin`` and optional
``stage.<name>`` files, plus ``stats.json`` beside them. Entries are published
and removed by renaming whole directories, so this module follows the same
rules: it never edits an entry in place.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import re
import shutil
import stat
import sys
import time
import uuid
from dataclasses import dataclass, field
from typing import Optional

FORMAT = 1
DEFAULT_MAX_BYTES = 1 << 30
COUNTERS = ("hits", "misses", "writes", "evictions", "rejected")
_KEY = re.compile(r"^[0-9a-f]{64}$")
_UNITS = {"": 0, "B": 0, "K": 10, "KB": 10, "KIB": 10, "M": 20, "MB": 20,
          "MIB": 20, "G": 30, "GB": 30, "GIB": 30, "T": 40, "TB": 40,
          "TIB": 40}


def cache_dir() -> str:
    """TILE_CACHE_DIR, else ~/.cache/tile (as the C++ runtime decides)."""
    d = os.environ.get("TILE_CACHE_DIR")
    if d:
        return d.rstrip("/") or "/"
    home = os.environ.get("HOME") or os.path.expanduser("~")
    if not home or home == "~":
        return f"/tmp/tile-cache-{os.getuid()}"
    return os.path.join(home, ".cache", "tile")


def parse_size(text: str) -> Optional[int]:
    """A TILE_CACHE_SIZE value in bytes ("1073741824", "512M", "1GiB")."""
    m = re.fullmatch(r"(\d+)([A-Za-z]*)", text)
    if not m or m.group(2).upper() not in _UNITS:
        return None
    value = int(m.group(1)) << _UNITS[m.group(2).upper()]
    return value if value < 1 << 64 else None


def max_bytes() -> int:
    """TILE_CACHE_SIZE, or 1 GiB when unset or malformed."""
    size = parse_size(os.environ.get("TILE_CACHE_SIZE", "x"))
    return DEFAULT_MAX_BYTES if size is None else size


@dataclass
class Entry:
    key: str
    bytes: int
    last_use: float  # seconds since the epoch
    meta: dict = field(default_factory=dict)
    problem: str = ""  # why the entry would be a miss, "" when sound

    @property
    def kernel(self) -> str:
        return str(self.meta.get("kernel_name", "?"))

    @property
    def target(self) -> str:
        return str(self.meta.get("key_inputs", {}).get("target", "?"))


def _check_blob(path: str, size, sha) -> str:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return f"{os.path.basename(path)} is missing"
    if not isinstance(size, int) or len(data) != size:
        return f"{os.path.basename(path)} has the wrong size"
    if hashlib.sha256(data).hexdigest() != sha:
        return f"{os.path.basename(path)} fails its checksum"
    return ""


def _inspect(path: str, key: str, verify: bool) -> Entry:
    st = os.stat(path)
    size = 0
    for name in os.listdir(path):
        try:
            fst = os.lstat(os.path.join(path, name))
        except OSError:
            continue
        size += fst.st_size if stat.S_ISREG(fst.st_mode) else 0
    entry = Entry(key, size, st.st_mtime_ns / 1e9)
    try:
        with open(os.path.join(path, "meta.json"), encoding="utf-8") as f:
            entry.meta = json.load(f)
    except (OSError, ValueError) as e:
        entry.problem = f"meta.json unreadable ({e.__class__.__name__})"
        return entry
    if not isinstance(entry.meta, dict):
        entry.meta, entry.problem = {}, "meta.json is not an object"
    elif entry.meta.get("format") != FORMAT:
        entry.problem = f"format {entry.meta.get('format')!r}"
    elif entry.meta.get("key") != key:
        entry.problem = "recorded key differs from its directory"
    elif verify:
        entry.problem = _check_blob(os.path.join(path, "payload.bin"),
                                    entry.meta.get("payload_size"),
                                    entry.meta.get("payload_sha256"))
        for s in entry.meta.get("stages", []):
            if entry.problem:
                break
            name = str(s.get("name", ""))
            if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", name):
                entry.problem = f"bad stage name {name!r}"
                break
            entry.problem = _check_blob(os.path.join(path, "stage." + name),
                                        s.get("size"), s.get("sha256"))
    return entry


def entries(directory: Optional[str] = None, verify: bool = False):
    """Entries, least recently used first (the eviction order)."""
    directory = directory or cache_dir()
    out = []
    try:
        names = os.listdir(directory)
    except OSError:
        return out
    for name in names:
        if not _KEY.match(name):
            continue
        try:
            out.append(_inspect(os.path.join(directory, name), name, verify))
        except OSError:
            continue  # evicted while we looked
    out.sort(key=lambda e: (e.last_use, e.key))
    return out


def stats(directory: Optional[str] = None) -> dict:
    directory = directory or cache_dir()
    try:
        with open(os.path.join(directory, "stats.json"), encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict):
        data = {}
    return {c: int(data.get(c, 0)) if isinstance(data.get(c, 0), int) else 0
            for c in COUNTERS}


def _discard(directory: str, name: str) -> bool:
    trash = os.path.join(directory, f".trash-{name}-{os.getpid()}-"
                         f"{uuid.uuid4().hex[:12]}")
    try:
        os.rename(os.path.join(directory, name), trash)
    except OSError:
        return False
    shutil.rmtree(trash, ignore_errors=True)
    return True


def clear(directory: Optional[str] = None) -> int:
    """Removes every entry and the stats; returns how many entries went."""
    directory = directory or cache_dir()
    if not os.path.isdir(directory):
        return 0
    removed = sum(_discard(directory, e.key) for e in entries(directory))
    for name in os.listdir(directory):
        if name.startswith(".trash-"):
            shutil.rmtree(os.path.join(directory, name), ignore_errors=True)
    with open(os.path.join(directory, ".stats.lock"), "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # the runtime's stats writers
        try:
            os.unlink(os.path.join(directory, "stats.json"))
        except FileNotFoundError:
            pass
    return removed


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def _ago(t: float) -> str:
    s = max(0.0, time.time() - t)
    for unit, div in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= div:
            return f"{s / div:.0f}{unit} ago"
    return f"{s:.0f}s ago"


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tile.cache",
                                description="Inspect tile's kernel cache.")
    p.add_argument("--dir", help="cache directory (default: TILE_CACHE_DIR "
                   "or ~/.cache/tile)")
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="entries, most recently used last")
    ls.add_argument("--verify", action="store_true",
                    help="check every payload's size and SHA-256")
    st = sub.add_parser("stats", help="hits, misses, writes, evictions")
    st.add_argument("--json", action="store_true")
    sub.add_parser("clear", help="delete every entry and the stats")
    args = p.parse_args(argv)
    directory = args.dir or cache_dir()

    if args.command == "list":
        found = entries(directory, verify=args.verify)
        for e in found:
            state = f"  BROKEN: {e.problem}" if e.problem else ""
            print(f"{e.key[:16]}  {e.kernel:<24} {e.target:<8} "
                  f"{str(e.meta.get('payload_kind', '?')):<7}"
                  f"{_human(e.bytes):>10}  {_ago(e.last_use)}{state}")
        print(f"{len(found)} entries, {_human(sum(e.bytes for e in found))}"
              f" in {directory}")
        return 0
    if args.command == "stats":
        s = stats(directory)
        found = entries(directory)
        s.update(entries=len(found), bytes=sum(e.bytes for e in found),
                 max_bytes=max_bytes(), directory=directory)
        if args.json:
            print(json.dumps(s, indent=2, sort_keys=True))
            return 0
        lookups = s["hits"] + s["misses"]
        rate = f" ({100 * s['hits'] / lookups:.0f}% hits)" if lookups else ""
        print(f"directory  {directory}")
        print(f"entries    {s['entries']} ({_human(s['bytes'])} of "
              f"{_human(s['max_bytes'])})")
        print(f"lookups    {lookups}{rate}")
        for c in COUNTERS:
            print(f"{c:<10} {s[c]}")
        return 0
    n = clear(directory)
    print(f"removed {n} entries from {directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
