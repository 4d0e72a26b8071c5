"""The ustack sampler's checks: the user stack the module captured of the guest
program harness/guest/assets/ustack.c.

Oracles: the program's own return addresses (__builtin_return_address(), in
the order the calls nest), the module's frames in its memory (read by gdb),
and eu-addr2line naming each frame from the program's ELF on the host.
"""

from .enums import Source
from .model import Check, hex_text

# harness/guest/assets/ustack-frames.h (in ustack.c): main() calls level1(),
# level1() level2(), level2() level3(), which reads the module's file. The return address the
# program records at depth d lies in the function named here; frame 0 is
# level3's own syscall.
USTACK_CALLERS = {0: "level3", 1: "level2", 2: "level1", 3: "main"}


def compare_ustack(data, truth, names=None):
    """The program's own return addresses must follow each other in the module's frames;
    the frames in module memory equal its text; eu-addr2line names them."""
    found = []
    frames = []
    pid = None
    for e in sorted(data.ustack_expect, key=lambda e: e.depth):
        pid = e.pid
        frames = [f.ip for f in sorted(data.frame, key=lambda f: f.idx) if f.pid == e.pid]
        idx = frames.index(e.ret) if e.ret in frames else None
        found.append((e, idx))
    # found, and in the order the calls nest
    hit = [idx for _, idx in found if idx is not None]
    in_order = hit == sorted(hit) and len(set(hit)) == len(hit)
    values = [Check("ustack", f"ret/{e.depth}",
                    {Source.MODULE: hex_text(frames[idx]) if idx is not None else None,
                     Source.PROGRAM: hex_text(e.ret)},
                    idx is not None and in_order, info={"frame": idx},
                    label=f"return address {e.depth}")
              for e, idx in found]
    if values:
        r = truth.results
        mine = " ".join(hex_text(f) for f in frames)
        theirs = " ".join(hex_text(f) for f in r.frames)
        values.append(Check("ustack", "frames", {Source.MODULE: mine, Source.MEMORY: theirs},
                            r.frames_pid == pid and mine == theirs,
                            label="frames in module memory"))
    if names is not None:
        for idx, want in USTACK_CALLERS.items():
            ip = frames[idx] if idx < len(frames) else None
            got = names.get(ip) if ip is not None else None
            values.append(Check("ustack", f"fn/{idx}",
                                {Source.MODULE: hex_text(ip), Source.EU_ADDR2LINE: got,
                                 Source.PROGRAM: want},
                                got == want, label=f"frame {idx} function"))
    return values
