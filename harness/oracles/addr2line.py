"""Name user-space addresses with elfutils' eu-addr2line, on the host."""

import shutil
import subprocess

from ..errors import HarnessError


def function_names(binary, addrs):
    """{address: function name or None} for the addresses in `binary` (not PIE)."""
    addrs = sorted(set(a for a in addrs if a is not None))
    if not addrs:
        return {}
    if shutil.which("eu-addr2line") is None:
        raise HarnessError("deps", "eu-addr2line not found; install elfutils")
    try:
        p = subprocess.run(["eu-addr2line", "-f", "-e", str(binary), *(hex(a) for a in addrs)],
                           capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as e:
        raise HarnessError("verify", f"eu-addr2line {binary}: {e}") from e
    lines = p.stdout.splitlines()
    # -f prints two lines per address: the function, then file:line.
    if p.returncode != 0 or len(lines) != 2 * len(addrs):
        raise HarnessError("verify", f"eu-addr2line {binary} exited {p.returncode}: "
                           f"{(p.stderr or p.stdout).strip()[:200]}")
    return {a: (None if lines[2 * i] == "??" else lines[2 * i]) for i, a in enumerate(addrs)}
