"""Run host commands with their output kept in a log file."""

import subprocess
import time

from .errors import HarnessError


def _tail(log, n=5):
    try:
        lines = [l for l in log.read_text(errors="replace").splitlines() if l.strip()]
    except OSError:
        return ""
    return " | ".join(lines[-n:])


def run_logged(step, argv, log, cwd=None, env=None, beat=None, beat_every=20.0, timeout=None):
    """Run argv, appending stdout+stderr to `log`; raise HarnessError(step) on failure.

    `beat(log)` is called every `beat_every` seconds so long steps show progress.
    """
    log.parent.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    with open(log, "ab") as out:
        out.write(("$ " + " ".join(str(a) for a in argv) + "\n").encode())
        out.flush()
        try:
            p = subprocess.Popen([str(a) for a in argv], cwd=cwd, env=env, stdout=out,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                 start_new_session=True)
        except OSError as e:
            raise HarnessError(step, f"cannot run {argv[0]}: {e.strerror}", log) from e
        try:
            while True:
                try:
                    rc = p.wait(timeout=beat_every)
                    break
                except subprocess.TimeoutExpired:
                    if timeout and time.monotonic() - start > timeout:
                        raise HarnessError(step, f"{argv[0]} took longer than {timeout} s", log)
                    if beat:
                        beat(log)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
    if rc != 0:
        raise HarnessError(step, f"{' '.join(str(a) for a in argv[:3])} exited {rc}: {_tail(log)}", log)
    return time.monotonic() - start
