"""The on-disk kernel cache: ``python -m tile.cache list|stats|clear``.

Pure Python over the format runtime/DiskCache.cpp writes (see its header and
docs/cache.md): one directory per key holding ``meta.json``, ``meta.hmac``,
``payload.bin`` and optional ``stage.<name>`` files, plus ``cache.key`` and
``stats.json`` beside them, and autotuning choices in ``tuning/``
(tuning_cache.py: listed and cleared here too, never evicted). Entries are published and removed by renaming
whole directories, so this module follows the same rules: it never edits an
entry in place. Everything in the cache may be damaged or hostile: nothing
here follows a symbolic link out of it, reads a file before checking its
size, or lets a malformed entry stop a listing; ``clear`` always works.
"""

from __future__ import annotations

import argparse
import errno
import fcntl
import hashlib
import hmac
import json
import os
import re
import stat
import sys
import time
import uuid
from dataclasses import dataclass, field
from typing import Optional

FORMAT = 2
DEFAULT_MAX_BYTES = 1 << 30
COUNTERS = ("hits", "misses", "writes", "evictions", "rejected")
KEY_FILE = "cache.key"
MAC_DOMAIN = b"tile-cache-entry-v2"
MAX_META_BYTES = 1 << 20  # as the runtime: larger metadata is damage
STALE_TMP_SECONDS = 3600
_KEY = re.compile(r"^[0-9a-f]{64}$")
_STAGE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_UNITS = {"": 0, "B": 0, "K": 10, "KB": 10, "KIB": 10, "M": 20, "MB": 20,
          "MIB": 20, "G": 30, "GB": 30, "GIB": 30, "T": 40, "TB": 40,
          "TIB": 40}
_NOFOLLOW = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def cache_dir() -> Optional[str]:
    """TILE_CACHE_DIR, else ~/.cache/tile (as the C++ runtime decides);
    None without a usable home, where each process of the runtime uses a
    private temporary directory of its own."""
    d = os.environ.get("TILE_CACHE_DIR")
    if d:
        return d.rstrip("/") or "/"
    home = os.environ.get("HOME") or os.path.expanduser("~")
    if not home or home == "~" or not os.path.isdir(home):
        return None
    return os.path.join(home, ".cache", "tile")


def distrust(st: os.stat_result) -> str:
    """Why the runtime would not trust a file or directory with this stat
    (owned by someone else, or writable by group or others), or ""."""
    if st.st_uid not in (os.geteuid(), 0):
        return (f"it is owned by uid {st.st_uid}, not by this user "
                f"(uid {os.geteuid()})")
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return (f"it is writable by group or others (mode "
                f"{stat.S_IMODE(st.st_mode):04o})")
    return ""


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


def _field(d, name, kind, default):
    """d[name] when d is a dict and the value is a `kind` (a bool is no
    int here), else `default`: damaged metadata has any shape."""
    v = d.get(name) if isinstance(d, dict) else None
    if isinstance(v, bool) and kind is not bool:
        return default
    return v if isinstance(v, kind) else default


@dataclass
class Entry:
    key: str
    bytes: int
    last_use: float  # seconds since the epoch
    meta: dict = field(default_factory=dict)
    problem: str = ""  # why the entry would be a miss, "" when sound

    @property
    def kernel(self) -> str:
        return _field(self.meta, "kernel_name", str, "?")

    @property
    def target(self) -> str:
        return _field(_field(self.meta, "key_inputs", dict, {}), "target",
                      str, "?")

    @property
    def payload_kind(self) -> str:
        return _field(self.meta, "payload_kind", str, "?")


def _read_at(dir_fd: int, name: str, max_size: int,
             trusted: bool = True) -> bytes:
    """A regular file of the entry, never through a link; raises OSError
    (ValueError for a size above `max_size`, checked before reading)."""
    fd = os.open(name, _NOFOLLOW, dir_fd=dir_fd)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise ValueError(f"{name} is not a regular file")
        if st.st_size > max_size:
            raise ValueError(f"{name} is larger ({st.st_size} bytes) than "
                             f"recorded ({max_size})")
        if trusted and distrust(st):
            raise ValueError(f"{name}: {distrust(st)}")
        chunks, left = [], st.st_size
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _secret(directory: str) -> Optional[bytes]:
    """The cache's HMAC key when it is this user's and private."""
    try:
        fd = os.open(os.path.join(directory, KEY_FILE), _NOFOLLOW)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if (not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid()
                or st.st_mode & 0o077 or st.st_size != 32):
            return None
        return os.read(fd, 32)
    finally:
        os.close(fd)


def _check_blob(dir_fd: int, name: str, size, sha) -> str:
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        return f"{name} has no recorded size"
    try:
        data = _read_at(dir_fd, name, size)
    except ValueError as e:
        return str(e)
    except OSError as e:
        return f"{name} is unreadable ({e.strerror or e.__class__.__name__})"
    if len(data) != size:
        return f"{name} has the wrong size"
    if not isinstance(sha, str) or hashlib.sha256(data).hexdigest() != sha:
        return f"{name} fails its checksum"
    return ""


def _check(entry: Entry, dir_fd: int, raw: bytes, secret, verify: bool) -> str:
    meta = entry.meta
    if _field(meta, "format", int, None) != FORMAT:
        return f"format {meta.get('format')!r}, not {FORMAT}"
    if meta.get("key") != entry.key:
        return "recorded key differs from its directory"
    shape = _shape_problem(meta)
    if shape or not verify:
        return shape
    if secret is None:
        return f"no usable {KEY_FILE}: the runtime cannot verify it"
    try:
        mac = _read_at(dir_fd, "meta.hmac", 64)
    except (OSError, ValueError):
        return "meta.hmac is missing or damaged"
    want = hmac.new(secret, MAC_DOMAIN + b"\0" + entry.key.encode() + b"\0" +
                    raw, hashlib.sha256).hexdigest().encode()
    if not hmac.compare_digest(mac, want):
        return "meta.json fails its keyed check (HMAC-SHA256)"
    problem = _check_blob(dir_fd, "payload.bin", meta.get("payload_size"),
                          meta.get("payload_sha256"))
    for s in meta.get("stages", []):
        if problem:
            break
        name = _field(s, "name", str, "")
        if not _STAGE.match(name):
            return f"bad stage name {name!r}"
        problem = _check_blob(dir_fd, "stage." + name, s.get("size"),
                              s.get("sha256"))
    return problem


def _shape_problem(meta: dict) -> str:
    """What in the metadata has the wrong type, or "" (as the runtime, which
    treats any of these as damage)."""
    for name, kind in (("kernel_name", str), ("payload_kind", str),
                       ("payload_sha256", str), ("payload_size", int),
                       ("num_warps", int), ("shared_mem", int),
                       ("key_inputs", dict), ("signature", list)):
        if _field(meta, name, kind, None) is None:
            return f"{name} is missing or not a {kind.__name__}"
    if meta["payload_size"] < 0:
        return "payload_size is negative"
    stages = meta.get("stages", [])
    if not isinstance(stages, list) or not all(
            isinstance(s, dict) and _field(s, "name", str, None) is not None and
            _field(s, "size", int, -1) >= 0 and _field(s, "sha256", str, None)
            is not None for s in stages):
        return "the stage list is malformed"
    return ""


def _inspect(directory: str, key: str, verify: bool, secret) -> Entry:
    path = os.path.join(directory, key)
    st = os.lstat(path)
    entry = Entry(key, 0, st.st_mtime_ns / 1e9)
    if not stat.S_ISDIR(st.st_mode):
        entry.problem = ("a symbolic link (not followed)"
                         if stat.S_ISLNK(st.st_mode) else "not a directory")
        return entry
    dir_fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for name in os.listdir(dir_fd):
            try:
                fst = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except OSError:
                continue
            entry.bytes += fst.st_size if stat.S_ISREG(fst.st_mode) else 0
        if distrust(st):
            entry.problem = distrust(st)
            return entry
        try:
            raw = _read_at(dir_fd, "meta.json", MAX_META_BYTES)
            meta = json.loads(raw.decode("utf-8"))
        except (OSError, ValueError, RecursionError) as e:
            entry.problem = f"meta.json unreadable ({e.__class__.__name__})"
            return entry
        if not isinstance(meta, dict):
            entry.problem = "meta.json is not an object"
            return entry
        entry.meta = meta
        entry.problem = _check(entry, dir_fd, raw, secret, verify)
    finally:
        os.close(dir_fd)
    return entry


def entries(directory: Optional[str] = None, verify: bool = False):
    """Entries, least recently used first (the eviction order). A damaged
    entry is listed with its problem, never raised."""
    directory = directory or cache_dir()
    out = []
    try:
        names = os.listdir(directory) if directory else []
    except OSError:
        return out
    secret = _secret(directory) if verify else None
    for name in names:
        if not _KEY.match(name):
            continue
        try:
            out.append(_inspect(directory, name, verify, secret))
        except FileNotFoundError:
            continue  # evicted while we looked
        except Exception as e:  # noqa: BLE001 - damage of any shape
            try:
                when = os.lstat(os.path.join(directory, name)).st_mtime
            except OSError:
                when = time.time()
            out.append(Entry(name, 0, when, problem=f"unreadable ({e!r})"))
    out.sort(key=lambda e: (e.last_use, e.key))
    return out


def stats(directory: Optional[str] = None) -> dict:
    directory = directory or cache_dir()
    data = {}
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            data = json.loads(_read_at(fd, "stats.json", MAX_META_BYTES,
                                       trusted=False).decode("utf-8"))
        finally:
            os.close(fd)
    except (OSError, ValueError, RecursionError, TypeError):
        data = {}
    return {c: _field(data, c, int, 0) for c in COUNTERS}


def _remove_at(dir_fd: int, name: str) -> None:
    """Deletes `name` in `dir_fd`, a tree or not, never following a link."""
    try:
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    except FileNotFoundError:
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(name, dir_fd=dir_fd)
        return
    if st.st_uid == os.geteuid() and st.st_mode & 0o700 != 0o700:
        os.chmod(name, 0o700, dir_fd=dir_fd)  # ours, made unreadable
    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                 dir_fd=dir_fd)
    try:
        for child in os.listdir(fd):
            try:
                _remove_at(fd, child)
            except OSError:
                pass  # rmdir below reports what is left
    finally:
        os.close(fd)
    os.rmdir(name, dir_fd=dir_fd)


def clear(directory: Optional[str] = None) -> int:
    """Removes every entry (whatever state it is in), the trash, stale
    temporaries and the stats; returns how many entries went. Raises
    OSError only when the directory itself cannot be opened."""
    directory = directory or cache_dir()
    if not directory or not os.path.isdir(directory):
        return 0
    root = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    removed = 0
    try:
        now = time.time()
        for name in os.listdir(root):
            is_key = bool(_KEY.match(name))
            if not (is_key or name.startswith(".trash-") or ".tmp-" in name):
                continue
            try:
                st = os.stat(name, dir_fd=root, follow_symlinks=False)
                if ".tmp-" in name and now - st.st_mtime < STALE_TMP_SECONDS:
                    continue  # a live writer's
                # Renamed aside first, as the runtime does: a reader holding
                # the entry's descriptor sees it vanish whole.
                trash = (name if name.startswith(".trash-") else
                         f".trash-{name}-{os.getpid()}-{uuid.uuid4().hex[:12]}")
                if trash != name:
                    os.rename(name, trash, src_dir_fd=root, dst_dir_fd=root)
                removed += is_key
                _remove_at(root, trash)
            except OSError:
                continue
        _unlink_stats(root)
    finally:
        os.close(root)
    return removed


def _unlink_stats(root: int) -> None:
    """stats.json, under the runtime's lock (never a link's target)."""
    try:
        lock = os.open(".stats.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW |
                       os.O_NONBLOCK | os.O_CLOEXEC, 0o600, dir_fd=root)
    except OSError as e:
        if e.errno != errno.ELOOP:
            raise
        os.unlink(".stats.lock", dir_fd=root)  # a planted link: drop it
        lock = None
    try:
        if lock is not None and stat.S_ISREG(os.fstat(lock).st_mode):
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            os.unlink("stats.json", dir_fd=root)
        except FileNotFoundError:
            pass
    finally:
        if lock is not None:
            os.close(lock)


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


def _refusal(directory: str) -> str:
    """Why the runtime would not use `directory`, or ""."""
    try:
        return distrust(os.stat(directory))
    except OSError:
        return ""


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tile.cache",
                                description="Inspect tile's kernel cache.")
    p.add_argument("--dir", help="cache directory (default: TILE_CACHE_DIR "
                   "or ~/.cache/tile)")
    sub = p.add_subparsers(dest="command", required=True)
    ls = sub.add_parser("list", help="entries, most recently used last")
    ls.add_argument("--verify", action="store_true",
                    help="check every entry as the runtime does (keyed "
                    "checksum of the metadata, size and SHA-256 of each file)")
    st = sub.add_parser("stats", help="hits, misses, writes, evictions")
    st.add_argument("--json", action="store_true")
    sub.add_parser("clear", help="delete every entry and the stats")
    args = p.parse_args(argv)
    directory = args.dir or cache_dir()
    if not directory:
        print("no persistent cache: $HOME is unusable, so each process "
              "uses a private temporary one; set TILE_CACHE_DIR")
        return 0
    refused = _refusal(directory)
    if refused and args.command != "clear":
        print(f"warning: tile does not use the cache {directory}: {refused}",
              file=sys.stderr)

    from . import tuning_cache
    if args.command == "list":
        found = entries(directory, verify=args.verify)
        for e in found:
            state = f"  BROKEN: {e.problem}" if e.problem else ""
            print(f"{e.key[:16]}  {e.kernel:<24.24} {e.target:<8.16} "
                  f"{e.payload_kind:<7.16}"
                  f"{_human(e.bytes):>10}  {_ago(e.last_use)}{state}")
        print(f"{len(found)} entries, {_human(sum(e.bytes for e in found))}"
              f" in {directory}")
        tuned = tuning_cache.entries(directory)
        for name, entry, problem in tuned:
            print(f"tuning {name[:16]}  " + (tuning_cache.describe(entry) if entry
                                               else f"BROKEN: {problem}"))
        if tuned:
            print(f"{len(tuned)} autotuning entries")
        return 0
    if args.command == "stats":
        s = stats(directory)
        found = entries(directory)
        s.update(entries=len(found), bytes=sum(e.bytes for e in found),
                 max_bytes=max_bytes(), directory=directory,
                 tuning_entries=len(tuning_cache.entries(directory)))
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
        print(f"tuning     {s['tuning_entries']} autotuning entries")
        return 0
    try:
        n = clear(directory)
        tuned = tuning_cache.clear(directory)
    except OSError as e:
        print(f"cannot clear {directory}: {e.strerror or e}", file=sys.stderr)
        return 1
    print(f"removed {n} entries and {tuned} autotuning entries from {directory}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
