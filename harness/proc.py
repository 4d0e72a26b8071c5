"""Run host commands with their output kept in a log file."""

import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

from .errors import HarnessError

# Set on Ctrl-C or SIGTERM: every wait loop of every worker thread ends its
# child's process group and raises, and no new guest or build starts.
STOP = threading.Event()


def stop_on_signal(signum, frame):
    """SIGINT/SIGTERM handler: every worker's wait loop sees STOP and ends its
    child's process group; the main thread unwinds, so QEMU and gdb are stopped
    by their context managers."""
    STOP.set()
    raise KeyboardInterrupt


PR_SET_PDEATHSIG = 1        # include/uapi/linux/prctl.h


def die_with_parent(sig=signal.SIGTERM):
    """Have the kernel send `sig` to this process when the thread that started it
    ends (a killed Dask worker): its handler then stops our builds and guests."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG)")


def check_stop(step):
    if STOP.is_set():
        raise HarnessError(step, "interrupted")


def _tail(log, n=5):
    try:
        lines = [l for l in log.read_text(errors="replace").splitlines() if l.strip()]
    except OSError:
        return ""
    return " | ".join(lines[-n:])


class StepTimeout(HarnessError):
    """run_logged()'s `timeout` passed and the command was stopped: a caller that
    tells a timeout from a failure (a stalled mirror from a missing package) catches
    this one."""


def run_logged(step, argv, log, cwd=None, env=None, beat=None, beat_every=20.0, timeout=None):
    """Run argv, appending stdout+stderr to `log`; raise HarnessError(step) on failure.

    `beat(log)` is called every `beat_every` seconds so long steps show progress.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with open(log, "ab") as out:
        out.write(("$ " + " ".join(str(a) for a in argv) + "\n").encode())
        out.flush()
        check_stop(step)
        try:
            p = subprocess.Popen([str(a) for a in argv], cwd=cwd, env=env, stdout=out,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 start_new_session=True)
        except OSError as e:
            raise HarnessError(step, f"cannot run {argv[0]}: {e.strerror}", log) from e
        try:
            next_beat = start + beat_every
            while True:
                try:
                    rc = p.wait(timeout=0.5)
                    break
                except subprocess.TimeoutExpired:
                    check_stop(step)
                    if timeout and time.monotonic() - start > timeout:
                        raise StepTimeout(step, f"{argv[0]} took longer than {timeout} s", log)
                    if beat and time.monotonic() >= next_beat:
                        next_beat += beat_every
                        beat(log)
        finally:
            # The child leads its own process group: stop the whole group
            # (make's sub-makes and compilers), not only the leader.
            stop_group(p)
    if rc != 0:
        raise HarnessError(step, f"{' '.join(str(a) for a in argv[:3])} exited {rc}: {_tail(log)}", log)
    return time.monotonic() - start


def _group_alive(pgid):
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def stop_group(p, grace=5.0):
    """SIGTERM, then SIGKILL, the process group `p` leads (started with
    start_new_session=True), and wait until none of it is left: a caller may
    remove the directory the group was writing to."""
    pgid = p.pid
    for sig, wait in ((signal.SIGTERM, grace), (signal.SIGKILL, 30.0)):
        if p.poll() is not None and not _group_alive(pgid):
            return
        try:
            os.killpg(pgid, sig)
        except ProcessLookupError:
            pass
        end = time.monotonic() + wait
        while time.monotonic() < end:
            if p.poll() is not None and not _group_alive(pgid):
                return
            time.sleep(0.05)


def delete_aside(path):
    """Rename the directory `path` aside at once and delete it in an `rm -rf` of its
    own session, which the caller does not wait for and which outlives it (rmtree
    here when rm cannot start); what an interrupted rm leaves, discard() sweeps."""
    trash = path.parent / f".trash-{path.name}-{os.getpid()}-{time.monotonic_ns()}"
    os.rename(path, trash)
    try:
        subprocess.Popen(["rm", "-rf", "--one-file-system", str(trash)],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
    except OSError:
        shutil.rmtree(trash, ignore_errors=True)


def discard(path):
    """Remove the directory `path` of an incomplete step.

    It is first renamed aside, so a new attempt can use the name at once even
    if something of an earlier, killed run still held a file open there;
    leftovers of earlier discards beside it are swept on the way.
    """
    path = Path(path)
    parent = path.parent
    if path.exists() or path.is_symlink():
        trash = parent / f".trash-{path.name}-{os.getpid()}-{time.monotonic_ns()}"
        os.rename(path, trash)
    for old in parent.glob(".trash-*"):
        shutil.rmtree(old, ignore_errors=True)


def tool_output(step, argv, timeout=None):
    """stdout of a short host tool (nm, strip), run to completion; a failure to start,
    a non-zero exit or `timeout` seconds is HarnessError(step) naming the tool and the
    last line of its stderr (the reason), never a CalledProcessError."""
    argv = [str(a) for a in argv]
    try:
        p = subprocess.run(argv, capture_output=True, text=True, errors="replace",
                           stdin=subprocess.DEVNULL, timeout=timeout)
    except OSError as e:
        raise HarnessError(step, f"cannot run {argv[0]}: {e.strerror}") from e
    except subprocess.TimeoutExpired as e:
        raise HarnessError(step, f"{argv[0]} took longer than {timeout} s") from e
    if p.returncode != 0:
        lines = [l for l in p.stderr.splitlines() if l.strip()]
        why = lines[-1].strip() if lines else "no message"
        raise HarnessError(step, f"{' '.join(argv[:2])} exited {p.returncode}: {why}")
    return p.stdout
