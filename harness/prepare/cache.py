"""The size of the build cache: last use, sizes, holds and least-recently-used eviction.

Entries are kernel trees (<cache>/trees/<key>/), probe-module builds
(<cache>/modules/<key>/) and initramfs images (<cache>/initramfs/<key>.cpio).
Each has a lock file beside it (<kind>/<key>.lock, never deleted: a process
that opened it must lock the same inode as everyone else):

  - building an entry holds it exclusively; using one (a build reading a
    complete tree, a run booting it, a derivation copying its base) holds it
    shared for as long as it is used (entry() finds or builds one);
  - eviction takes it exclusively and without waiting: an entry anyone holds
    is skipped, never removed.

Beside each entry: <key>.used, touched on every use (its mtime is the last
use), and <key>.info, JSON with the size in bytes measured once when the
entry was completed (and the variant). ccache keeps its own cap
(CCACHE_MAXSIZE) and is not managed here.

The cap is KSYMLAB_CACHE_MAX (bytes, or with a K/M/G/T suffix, binary; "0"
or "off" for none), default 30 GiB: both kernel lines' default variants and
the debug tree take about 19 GiB, and a cap below the working set would
evict a tree a later run needs. Eviction runs after a new entry is
completed, and on `python3 -m harness cache prune`.
"""

import contextlib
import errno
import fcntl
import json
import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import HarnessError
from ..proc import delete_aside
from ..progress import say

KINDS = ("trees", "modules", "initramfs")
DEFAULT_MAX = 30 << 30
_UNITS = {"": 1, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text):
    """'20G', '512M', '1073741824' -> bytes; '0', 'off', 'none' -> None (no cap)."""
    t = str(text).strip().upper().removesuffix("IB").removesuffix("B") or "0"
    if t in ("0", "OFF", "NONE"):
        return None
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGT]?)", t)
    if not m:
        raise HarnessError("usage", f"cache size {text!r}: want bytes or a number with "
                                    "K, M, G or T (e.g. 20G), or off")
    return int(float(m.group(1)) * _UNITS[m.group(2)])


def cap_from_env(env=None):
    env = os.environ if env is None else env
    v = env.get("KSYMLAB_CACHE_MAX")
    return DEFAULT_MAX if v is None or v == "" else parse_size(v)


def human(n):
    if n is None:
        return "?"
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


# Where an entry's files are.

def entry_path(cache, kind, key):
    d = Path(cache) / kind
    return d / f"{key}.cpio" if kind == "initramfs" else d / key


def lock_path(cache, kind, key):
    return Path(cache) / kind / f"{key}.lock"


def _side(cache, kind, key, what):
    return Path(cache) / kind / f"{key}.{what}"


def is_complete(cache, kind, key):
    p = entry_path(cache, kind, key)
    if kind == "trees":
        return (p / "manifest.json").is_file()
    if kind == "modules":
        return (p / "done").is_file()
    return p.is_file()


def measure(path):
    """Bytes on disk under `path`, a file with n hard links counting 1/n (the tarball
    files derived trees share), so the sizes of all entries add up to the disk they
    use. A symlinked entry counts as the link only."""
    path = Path(path)
    try:
        st = path.lstat()
    except OSError:
        return 0
    total = st.st_blocks * 512
    if not path.is_dir() or path.is_symlink():
        return total
    seen = set()
    for dirpath, dirs, files in os.walk(path):
        for name in dirs + files:
            try:
                st = os.lstat(os.path.join(dirpath, name))
            except OSError:
                continue
            if st.st_nlink > 1 and not os.path.isdir(os.path.join(dirpath, name)):
                if st.st_ino in seen:
                    continue
                seen.add(st.st_ino)
                total += st.st_blocks * 512 // st.st_nlink
            else:
                total += st.st_blocks * 512
    return total


def _read_info(cache, kind, key):
    try:
        return json.loads(_side(cache, kind, key, "info").read_text())
    except (OSError, ValueError):
        return {}


def _write_info(cache, kind, key, info):
    f = _side(cache, kind, key, "info")
    tmp = f.with_name(f"{f.name}.tmp{os.getpid()}-{threading.get_ident()}")
    tmp.write_text(json.dumps(info) + "\n")
    tmp.replace(f)


def touch_used(kind_dir, key):
    """Record a use of the entry `key` under `kind_dir` (the mtime of <key>.used)."""
    f = Path(kind_dir) / f"{key}.used"
    try:
        f.touch()
        os.utime(f)
    except OSError:
        pass


# Holding entries.

class Holds:
    """Shared locks on cache entries, released together."""

    def __init__(self):
        self._files = {}
        self._mutex = threading.Lock()

    def add(self, cache, kind, key):
        """Hold one complete entry; a HarnessError if it is no longer there."""
        lp = lock_path(cache, kind, key)
        ident = str(lp.resolve() if lp.exists() else lp)
        with self._mutex:
            if ident in self._files:
                return
        lp.parent.mkdir(parents=True, exist_ok=True)
        f = open(lp, "a")
        fcntl.flock(f, fcntl.LOCK_SH)
        if not is_complete(cache, kind, key):
            f.close()
            raise HarnessError("cache", f"{kind} entry {key} was evicted before it could be "
                                        "held; run again")
        with self._mutex:
            if ident in self._files:
                f.close()
            else:
                self._files[ident] = f

    def __len__(self):
        return len(self._files)

    def close(self):
        with self._mutex:
            files, self._files = list(self._files.values()), {}
        for f in files:
            f.close()


_sessions = []
_sessions_mutex = threading.Lock()


@contextlib.contextmanager
def session():
    """Hold every cache entry this process uses (builds or finds) until the block ends.

    Used by `harness run` and `harness build`: an entry built or used early in a
    run is not evicted when a later one completes, nor by another process."""
    h = Holds()
    with _sessions_mutex:
        _sessions.append(h)
    try:
        yield h
    finally:
        with _sessions_mutex:
            _sessions.remove(h)
        h.close()


def _entry_of(path):
    """(cache, kind, key) of an entry's path: a tree root or its linux/, a module
    directory or its .ko, an initramfs .cpio."""
    p = Path(path)
    for cand in (p, p.parent):
        if cand.parent.name in KINDS:
            kind = cand.parent.name
            key = cand.name.removesuffix(".cpio") if kind == "initramfs" else cand.name
            return cand.parent.parent, kind, key
    raise ValueError(f"{path}: not a cache entry")


@contextlib.contextmanager
def hold(entries):
    """Hold the cache entries at `entries` (paths, see _entry_of) while the block runs."""
    h = Holds()
    try:
        for e in entries:
            h.add(*_entry_of(e))
        yield h
    finally:
        h.close()


def used(kind, cache, key):
    """An entry is being used: record it, and hold it in every active session."""
    touch_used(Path(cache) / kind, key)
    with _sessions_mutex:
        active = list(_sessions)
    for h in active:
        h.add(cache, kind, key)


def completed(kind, cache, key, variant=None):
    """A new entry is complete: measure its size once and record it."""
    info = {"size": measure(entry_path(cache, kind, key)), "completed": time.time()}
    if variant:
        info["variant"] = variant
    _write_info(cache, kind, key, info)
    touch_used(Path(cache) / kind, key)


# Finding or building one entry.

class EntryLock:
    """The lock of one entry while the block of entry() runs."""

    def __init__(self, f, missing):
        self._f = f
        self.missing = missing      # True: held exclusively, to be built by this process

    def built(self, kind=None, cache=None, key=None, variant=None):
        """Call once the new entry's completion marker is written.

        With `kind` (one of KINDS) its size is recorded (completed()) while the lock
        is still exclusive. Then the lock becomes shared, so that readers, and this
        process's own session, may hold the entry: used() under the exclusive lock
        would wait for this very lock. Then, with `kind`, the use is recorded
        (used()). LTTng builds are no kind of this cache: they pass none and only
        downgrade."""
        if kind is not None:
            completed(kind, cache, key, variant)
        fcntl.flock(self._f, fcntl.LOCK_SH)
        if kind is not None:
            used(kind, cache, key)


@contextlib.contextmanager
def entry(lock, complete):
    """Find or build one entry under its lock file `lock`; `complete()` says whether the
    entry exists complete (its completion marker is written).

    The lock is taken shared; when the entry is not complete, flock converts it to
    exclusive, which drops the shared lock first and then waits for every other
    holder (a process building the entry, every run holding it); then completeness
    is checked again, as another process may have built the entry meanwhile. The
    block sees `e.missing`:
      False: the entry is complete, use it. The lock is shared (downgraded again
             when another process built the entry while this one waited).
      True:  this process holds the entry exclusively and builds it: it removes what
             an earlier, stopped build left, builds, writes the completion marker
             last and then calls e.built().
    Leaving the block, by return or exception, releases the lock. An exception during
    the build leaves the entry without its marker: never used as complete, and
    removed by its next builder (or by eviction)."""
    lock = Path(lock)
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as f:
        fcntl.flock(f, fcntl.LOCK_SH)
        if not complete():
            fcntl.flock(f, fcntl.LOCK_EX)
            if complete():
                # Built by another process while this one waited: shared again, or
                # the session's used() would wait on this very lock for good.
                fcntl.flock(f, fcntl.LOCK_SH)
        yield EntryLock(f, not complete())


# Listing and eviction.

@dataclass
class Entry:
    kind: str
    key: str
    path: Path
    variant: str
    size: Optional[int]
    last_used: float
    complete: bool
    held: bool = False


def _variant_of(cache, kind, key, info):
    if info.get("variant"):
        return info["variant"]
    if kind == "trees":
        try:
            return json.loads((entry_path(cache, kind, key) / "manifest.json").read_text()
                              ).get("variant", "?")
        except (OSError, ValueError):
            return "?"
    return "?"


def _lock_now(f):
    """Take the exclusive lock on the open file `f` without waiting; False when held."""
    try:
        fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as e:
        if e.errno in (errno.EAGAIN, errno.EACCES):
            return False
        raise
    return True


def _probe_held(cache, kind, key):
    """Does anyone hold the entry (or build it)? Tries the exclusive lock without waiting."""
    lp = lock_path(cache, kind, key)
    if not lp.exists():
        return False
    with open(lp, "a") as f:
        return not _lock_now(f)


def entries(cache, measure_missing=True, probe=True):
    """Every entry of the cache, oldest use first. An entry without a recorded size (built
    before sizes were recorded) is measured now and the size kept beside it."""
    cache = Path(cache)
    out = []
    for kind in KINDS:
        d = cache / kind
        if not d.is_dir():
            continue
        for p in sorted(d.iterdir()):
            if p.name.startswith(".") or p.suffix in (".lock", ".used", ".info", ".record") \
                    or ".tmp" in p.name:
                continue
            if kind == "initramfs":
                if p.suffix != ".cpio":
                    continue
                key = p.name.removesuffix(".cpio")
            else:
                if not (p.is_dir() or p.is_symlink()):
                    continue
                key = p.name
            info = _read_info(cache, kind, key)
            complete = is_complete(cache, kind, key)
            size = info.get("size")
            if size is None and measure_missing and complete:
                size = measure(p)
                try:
                    _write_info(cache, kind, key, {**info, "size": size})
                except OSError:
                    pass
            stamp = _side(cache, kind, key, "used")
            try:
                last = stamp.stat().st_mtime
            except OSError:
                try:
                    last = p.lstat().st_mtime
                except OSError:
                    continue
            out.append(Entry(kind, key, p, _variant_of(cache, kind, key, info), size, last,
                             complete, _probe_held(cache, kind, key) if probe else False))
    out.sort(key=lambda e: (e.last_used, e.kind, e.key))
    return out


def _remove_path(p):
    """Rename aside, then delete without waiting (proc.delete_aside: a kernel tree takes
    seconds); a symlinked entry loses only its link."""
    p = Path(p)
    if p.is_symlink() or p.is_file():
        p.unlink(missing_ok=True)
    elif p.exists():
        delete_aside(p)


def try_evict(cache, entry):
    """Remove one entry if nobody holds it: True when removed, False when held."""
    lp = lock_path(cache, entry.kind, entry.key)
    lp.parent.mkdir(parents=True, exist_ok=True)
    with open(lp, "a") as f:
        if not _lock_now(f):
            return False
        _remove_path(entry.path)
        _remove_path(_side(cache, entry.kind, entry.key, "record"))   # derive._adopt
        for what in ("info", "used"):
            _side(cache, entry.kind, entry.key, what).unlink(missing_ok=True)
        return True


def prune(cache, cap, report=None):
    """Evict least recently used entries until the total is at most `cap` bytes (None: no
    cap). Returns (evicted, skipped_held, total_after)."""
    report = report or (lambda msg: say("cache", msg))
    es = entries(cache, probe=False)
    total = sum(e.size or 0 for e in es)
    evicted, skipped = [], []
    if cap is None or total <= cap:
        return evicted, skipped, total
    for e in es:
        if total <= cap:
            break
        if try_evict(cache, e):
            total -= e.size or 0
            evicted.append(e)
            report(f"evicted {e.kind[:-1] if e.kind != 'initramfs' else 'initramfs'} "
                   f"{e.key} ({e.variant}, {human(e.size)}, last used "
                   f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(e.last_used))})")
        else:
            skipped.append(e)
    if total > cap:
        report(f"still {human(total)} over the cap of {human(cap)}: "
               f"{len(skipped)} entr{'y is' if len(skipped) == 1 else 'ies are'} in use")
    return evicted, skipped, total


def after_new_entry(cache):
    """Called once a new entry is complete (and still held by its builder)."""
    try:
        cap = cap_from_env()
    except HarnessError as e:
        say("cache", f"ignoring KSYMLAB_CACHE_MAX: {e.message}")
        return
    prune(cache, cap)


def clear(cache):
    """Evict every entry nobody holds; (evicted, skipped)."""
    evicted, skipped = [], []
    for e in entries(cache, measure_missing=False, probe=False):
        (evicted if try_evict(cache, e) else skipped).append(e)
    return evicted, skipped


def main(cache, action, cap):
    """`python3 -m harness cache [list|prune|clear]`; returns the exit status."""
    cache = Path(cache)
    if action == "prune":
        ev, sk, total = prune(cache, cap, report=print)
        print(f"{len(ev)} evicted, {len(sk)} held and kept; {human(total)} of "
              f"{human(cap) if cap else 'no cap'}")
        return 0
    if action == "clear":
        ev, sk = clear(cache)
        print(f"cleared {len(ev)} entr{'y' if len(ev) == 1 else 'ies'}")
        for e in sk:
            print(f"kept {e.kind} {e.key} ({e.variant}): held by a running build or run")
        return 0
    es = entries(cache)
    print(f"{'kind':9} {'key':20} {'variant':10} {'size':>10}  {'last used':16} held")
    for e in sorted(es, key=lambda e: (e.kind, -e.last_used)):
        state = "yes" if e.held else ("no" if e.complete else "incomplete")
        print(f"{e.kind:9} {e.key:20} {e.variant[:10]:10} {human(e.size):>10}  "
              f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(e.last_used)):16} {state}")
    total = sum(e.size or 0 for e in es)
    print(f"total {human(total)} in {len(es)} entries, cap {human(cap) if cap else 'none'} "
          f"(KSYMLAB_CACHE_MAX); {cache}; ccache not counted")
    return 0
