"""The ustack sampler's checks: the user stack the module captured of the guest
program harness/guest/assets/ustack.c.

The program makes its system call from a thread that is not its process's
leader (so a sampler that records the thread group id instead of the thread
id captures nothing under the right pid), and before it walks its own
frame-pointer chain to the outermost frame (so the whole captured stack is
compared, not only the frames the program knows: a sampler that drops the
outermost frame, or adds one, is caught).

Oracles: the program's own return addresses (__builtin_return_address(), in
the order the calls nest), its frame-pointer walk (user-space code of its own,
ustack-frames.h, sharing none with the kernel's walk it checks), the module's
frames in its memory (read by gdb), and eu-addr2line naming each frame from
the program's ELF on the host.
"""

from .confusions import pair
from ..model.enums import Source
from ..model.results import Check, hex_text

# harness/guest/assets/ustack-frames.h: ustack_thread() calls level1(), level1()
# level2(), level2() level3(), which reads the module's file. The return address
# the program records at depth d lies in the function named here; frame 0 is
# level3's own syscall; glibc's start_thread() runs the thread and is the
# outermost frame of the chain (glibc itself is built without frame pointers).
USTACK_CALLERS = {0: "level3", 1: "level2", 2: "level1", 3: "ustack_thread",
                  4: "start_thread"}


def addresses(ips):
    """Frames as one line of hex addresses, as every ustack row shows them."""
    return " ".join(hex_text(ip) for ip in ips)


def neighbours(walk, ret):
    """A return address against the frames next to it in the program's walk
    (checks/confusions.py); {} when the walk lacks it."""
    if ret not in walk:
        return {}
    i = walk.index(ret)
    out = {"previous frame": pair(ret, walk[i - 1] if i > 0 else None)}
    out["next frame"] = pair(ret, walk[i + 1] if i + 1 < len(walk) else None)
    return out


def stack_confusions(pid, tgid, walk):
    """The whole stack's confusions, [right, confused] each: the thread against its
    group, the walk against itself without the outermost frame."""
    return {"tgid for pid": pair(pid, tgid),
            "one frame less": pair(addresses(walk), addresses(walk[:-1]))}


def compare_ustack(data, truth, names=None):
    """The program's own return addresses must follow each other in the module's frames;
    the module's whole stack equals the program's walk; the frames in module memory
    equal its text; eu-addr2line names them."""
    found = []
    frames = []
    pid = tgid = None
    for e in sorted(data.ustack_expect, key=lambda e: e.depth):
        pid, tgid = e.pid, e.tgid
        frames = [f.ip for f in sorted(data.frame, key=lambda f: f.idx) if f.pid == e.pid]
        idx = frames.index(e.ret) if e.ret in frames else None
        found.append((e, idx))
    # found, and in the order the calls nest
    hit = [idx for _, idx in found if idx is not None]
    in_order = hit == sorted(hit) and len(set(hit)) == len(hit)
    walk = [w.ip for w in sorted(data.ustack_walk, key=lambda w: w.idx) if w.pid == pid]
    values = [Check("ustack", f"ret/{e.depth}",
                    {Source.MODULE: hex_text(frames[idx]) if idx is not None else None,
                     Source.PROGRAM: hex_text(e.ret)},
                    idx is not None and in_order,
                    info={"frame": idx, "confusions": neighbours(walk, e.ret)},
                    label=f"return address {e.depth}")
              for e, idx in found]
    if values:
        mine = addresses(frames)
        # A thread that is its own leader could not tell pid from tgid: the row says so.
        values.append(Check("ustack", "stack",
                            {Source.MODULE: mine or None,
                             Source.PROGRAM_WALK: addresses(walk) or None},
                            bool(walk) and frames == walk and pid != tgid,
                            info={"pid": pid, "tgid": tgid, "frames": len(frames),
                                  "walked": len(walk),
                                  "confusions": stack_confusions(pid, tgid, walk)},
                            reason=None if pid != tgid else
                            "the program's stack thread is its process's leader",
                            label="whole stack (the program's own frame-pointer walk)"))
        r = truth.results
        theirs = addresses(r.frames)
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
