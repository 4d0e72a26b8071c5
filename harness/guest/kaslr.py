"""KASLR: the slide between where vmlinux was linked and where the guest runs it."""

import functools
import subprocess

from ..errors import HarnessError


def symbol_addresses(vmlinux, names):
    """Link-time addresses of `names` in vmlinux's symbol table (nm); a missing
    name is an error."""
    try:
        out = subprocess.run(["nm", "--defined-only", str(vmlinux)], capture_output=True,
                             text=True, check=True, timeout=120).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise HarnessError("verify", f"nm {vmlinux}: {e}") from e
    found = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] in names:
            found.setdefault(parts[2], int(parts[0], 16))
    missing = [n for n in names if n not in found]
    if missing:
        raise HarnessError("verify", f"{vmlinux}: no {', '.join(missing)} symbol")
    return found


@functools.lru_cache(maxsize=None)
def linked_text(vmlinux):
    """Link-time address of _text, from vmlinux's symbol table (nm)."""
    return symbol_addresses(vmlinux, ("_text",))["_text"]


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
