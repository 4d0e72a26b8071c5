"""LTTng's userspace probes (uprobe_register/uprobe_unregister, which LTTng
2.13.9 resolves by name on some kernels): lttng-init puts one on level2() of the
ustack program, which its thread enters once. The event's ip and count are
checked against the program's own symbol table, read on the host by binutils'
nm (sessiond reads the same .symtab in the guest with its own ELF reader: same
data, not the same code). The kernel rewinds the trap's ip to the probed
address before the handlers run (handle_swbp()), so the ip is level2's."""

from ...proc import tool_output
from ...checks.confusions import pair
from ...model.enums import Source

FUNCTION = "level2"


def functions(program):
    """{name: address} of the text symbols of a (static, not PIE) program."""
    out = tool_output("lttng", ["nm", program])
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tT":
            syms.setdefault(parts[2], int(parts[0], 16))
    return syms


def rows(ctx, syms):
    """The lttng:uprobe/level2 row of an Inputs (rows/inputs.py); `syms`: functions()."""
    expect = ctx.guest.ustack_expect
    tid = expect[0].pid if expect else None
    events = ctx.summary.uprobe
    mine = [e for e in events if e.tid == tid]
    want = syms.get(FUNCTION)
    refused = any(c.name == "uprobe" and c.added == 0 for c in ctx.guest.context)
    ips = sorted({e.ip for e in mine if e.ip is not None})
    got = " ".join(f"{i:#x}" for i in ips) + f" x{len(mine)}" if mine else None
    sources = {Source.LTTNG_UPROBE: got,
               Source.PROGRAM_SYMBOLS: f"{want:#x} x1" if want is not None else None}
    right = want is not None and ips == [want] and len(mine) == 1 == len(events)
    neighbours = [syms[f] for f in ("level1", "level3") if f in syms]
    info = {"tid": tid, "events": len(events), "refused": refused,
            "confusions": {
                "the neighbouring function's": pair(want, neighbours[0] if neighbours else None),
                "the trap's ip (one byte on)": pair(want, want + 1 if want is not None else None)}}
    return [ctx.expect("uprobe").row(f"uprobe/{FUNCTION}", bool(events), right, sources, info)]
