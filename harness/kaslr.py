"""KASLR: the slide between where vmlinux was linked and where the guest runs it."""

import functools
import subprocess

from .errors import HarnessError


@functools.lru_cache(maxsize=None)
def linked_text(vmlinux):
    """Link-time address of _text, from vmlinux's symbol table (nm)."""
    try:
        out = subprocess.run(["nm", "--defined-only", str(vmlinux)], capture_output=True,
                             text=True, check=True, timeout=120).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise HarnessError("verify", f"nm {vmlinux}: {e}") from e
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] == "_text":
            return int(parts[0], 16)
    raise HarnessError("verify", f"{vmlinux}: no _text symbol")


def slide(vmlinux, guest_text):
    """Runtime _text (the guest's /proc/kallsyms) minus link-time _text."""
    if guest_text is None:
        raise HarnessError("verify", "the guest reported no _text address (ktext line)")
    s = guest_text - linked_text(vmlinux)
    # x86_64 KASLR moves the kernel by whole 2 MiB steps (CONFIG_PHYSICAL_ALIGN).
    if s % (2 << 20):
        raise HarnessError("verify", f"KASLR slide {s:#x} is not a multiple of 2 MiB: "
                           "the guest's _text does not belong to this vmlinux")
    return s
