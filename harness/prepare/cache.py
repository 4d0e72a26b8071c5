"""The size of the build cache: last use, sizes, holds and least-recently-used eviction.

Entries are kernel trees (<cache>/trees/<key>/), probe-module builds
(<cache>/modules/<key>/), initramfs images (<cache>/initramfs/<key>.cpio), and
LTTng's: its builds, images, unpacked packages, lttng-tools builds, the private
apt configurations (<cache>/apt/<suite>/), and the cluster's job directories
(cachelayout.KINDS says where each lives and what completes it). Each has a
lock file beside it (<kind>/<key>.lock, never deleted: a process that opened it
must lock the same inode as everyone else; a cluster job directory has none,
it is in use while its worker lives):

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
or "off" for none), default 40 GiB: `make check`'s working set (three kernel
lines, the debug and no-COMPAT trees, LTTng builds) is 30 GiB or more, and a cap
below the working set evicts a tree a later test needs (stop 51's CI). Eviction runs after a new entry is
completed, and on `python3 -m harness cache prune`.
"""

import contextlib
import errno
import fcntl
import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from ..errors import HarnessError
from ..proc import delete_aside
from ..progress import say
from .cachelayout import (DEFAULT_MAX, KIND, KINDS, cap_from_env, entry_of, entry_path,  # noqa: F401 - the cache's API
                          human, is_complete, key_of, lock_path, measure, owner_alive,
                          parse_size, read_info, side, touch_used, write_info)


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


@contextlib.contextmanager
def hold(entries):
    """Hold the cache entries at `entries` (paths, see cachelayout.entry_of) while the block runs."""
    h = Holds()
    try:
        for e in entries:
            h.add(*entry_of(e))
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
    write_info(cache, kind, key, info)
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
        (used()). Without `kind` (a lock that guards no entry of KINDS) it only
        downgrades."""
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
    """Does anyone hold the entry (or build it)? Tries the exclusive lock without waiting;
    a cluster job directory is held while its worker lives."""
    if not KIND[kind].locked:
        return owner_alive(key)
    lp = lock_path(cache, kind, key)
    if not lp.exists():
        return False
    with open(lp, "a") as f:
        return not _lock_now(f)


def _last_use(cache, kind, key, p):
    """The mtime of <key>.used, else of the entry itself; None when it is gone."""
    for f in (side(cache, kind, key, "used"), p):
        try:
            return f.lstat().st_mtime
        except OSError:
            continue
    return None


def _size(cache, kind, key, p, info, measure_missing, complete):
    """The recorded size; measured now (and recorded) when there is none, or each time
    for a kind whose entries grow after completion (a private apt's lists, a job)."""
    if KIND[kind].remeasured:
        return measure(p) if measure_missing else None
    size = info.get("size")
    if size is None and measure_missing and complete:
        size = measure(p)
        try:
            write_info(cache, kind, key, {**info, "size": size})
        except OSError:
            pass
    return size


def _kind_entries(cache, kind, measure_missing, probe):
    d = cache / kind
    if not d.is_dir():
        return
    for p in sorted(d.iterdir()):
        key = key_of(kind, p)
        if key is None:
            continue
        info = read_info(cache, kind, key)
        complete = is_complete(cache, kind, key)
        last = _last_use(cache, kind, key, p)
        if last is None:
            continue
        yield Entry(kind, key, p, _variant_of(cache, kind, key, info),
                    _size(cache, kind, key, p, info, measure_missing, complete), last,
                    complete, _probe_held(cache, kind, key) if probe else False)


def entries(cache, measure_missing=True, probe=True):
    """Every entry of the cache (of every kind of KINDS), oldest use first. An entry
    without a recorded size (built before sizes were recorded) is measured now and the
    size kept beside it."""
    cache = Path(cache)
    out = [e for kind in KINDS for e in _kind_entries(cache, kind, measure_missing, probe)]
    out.sort(key=lambda e: (e.last_used, e.kind, e.key))
    return out


def _remove_path(p):
    """Rename aside, then delete without waiting (proc.delete_aside: a kernel tree takes
    seconds); a symlinked entry loses only its link. Gone meanwhile is removed: a dead
    worker's job directory is also swept by the next cluster job (cluster/job.py)."""
    p = Path(p)
    if p.is_symlink() or p.is_file():
        p.unlink(missing_ok=True)
    elif p.exists():
        try:
            delete_aside(p)
        except FileNotFoundError:
            pass


def _remove(cache, entry):
    _remove_path(entry.path)
    _remove_path(side(cache, entry.kind, entry.key, "record"))   # derive._adopt
    for what in ("info", "used"):
        side(cache, entry.kind, entry.key, what).unlink(missing_ok=True)


def try_evict(cache, entry):
    """Remove one entry if nobody holds it: True when removed, False when held."""
    if not KIND[entry.kind].locked:
        if owner_alive(entry.key):
            return False
        _remove(cache, entry)
        return True
    lp = lock_path(cache, entry.kind, entry.key)
    lp.parent.mkdir(parents=True, exist_ok=True)
    with open(lp, "a") as f:
        if not _lock_now(f):
            return False
        _remove(cache, entry)
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
            report(f"evicted {KIND[e.kind].label} "
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
    print(f"{'kind':15} {'key':20} {'variant':10} {'size':>10}  {'last used':16} held")
    for e in sorted(es, key=lambda e: (e.kind, -e.last_used)):
        state = "yes" if e.held else ("no" if e.complete else "incomplete")
        print(f"{e.kind:15} {e.key:20} {e.variant[:10]:10} {human(e.size):>10}  "
              f"{time.strftime('%Y-%m-%d %H:%M', time.localtime(e.last_used)):16} {state}")
    total = sum(e.size or 0 for e in es)
    print(f"total {human(total)} in {len(es)} entries, cap {human(cap) if cap else 'none'} "
          f"(KSYMLAB_CACHE_MAX); {cache}; ccache not counted")
    return 0
