"""The BPF checks: which balance_dirty_pages arguments a raw-tracepoint
program can read (the seed series' 13-argument tracepoint), that argument 1
is &global_wb_domain, and the value of argument 13.

Oracles: the variant's expectation (bpf_max_arg, domain_arg), gdb's address
of global_wb_domain and its jiffies_64 at the snapshot, and the program's own
bpf_jiffies64() in the same run.
"""

from ..model.enums import Source
from ..model.results import Check, hex_text
from .writeback import UINT_MAX


def compare_bpf(data, truth, variant):
    """Which balance_dirty_pages arguments a raw-tracepoint program can read."""
    if variant is None:
        return []
    values = []
    for b in data.bpf:
        arg = b.arg
        readable = b.result == "ok"
        expected = arg <= variant.bpf_max_arg
        detail = b.result if readable else f"{b.result} errno {b.errno}"
        values.append(Check("bpf", f"arg{arg}/readable",
                            {Source.MODULE: detail,
                             Source.EXPECTED: "ok" if expected else "rejected"},
                            readable == expected, info={"verifier": b.verifier},
                            reason=None if expected else
                            f"the variant expects arguments 1..{variant.bpf_max_arg} "
                            "readable (the verifier's 12-argument bound, or a "
                            "tracepoint with fewer arguments)",
                            label=f"raw_tp reads argument {arg}"))
        if readable:
            values.append(Check("bpf", f"arg{arg}/ran",
                                {Source.MODULE: b.hits, Source.EXPECTED: "> 0"},
                                b.hits > 0, label=f"argument {arg} program ran"))
            if variant.domain_arg:
                dom = truth.global_wb_domain
                values.append(Check("bpf", f"arg{arg}/arg1-domain",
                                    {Source.MODULE: hex_text(b.arg1), Source.GDB: hex_text(dom)},
                                    dom is not None and b.arg1 == dom,
                                    label="argument 1 is &global_wb_domain"))
    return values


# include/linux/jiffies.h: INITIAL_JIFFIES ((unsigned long)(unsigned int)(-300*HZ))
def initial_jiffies(hz):
    return (-300 * hz) & UINT_MAX


def compare_bpf_arg13(data, truth):
    """Argument 13 of balance_dirty_pages is start_time, the jiffies at which
    balance_dirty_pages() began (include/trace/events/writeback.h; the seed
    series puts &global_wb_domain first, so 13 arguments in all). Read by the
    program in the same run as bpf_jiffies64(), it must lie between boot
    (INITIAL_JIFFIES, HZ from the tree's .config) and that instant, which lies
    before gdb's jiffies_64 at the snapshot: no timing bound, only order."""
    values = []
    hz = truth.config_hz
    low = initial_jiffies(hz) if hz else None
    top = truth.jiffies
    for b in data.bpf:
        if b.arg != 13 or b.result != "ok":
            continue
        v, now = b.value, b.jiffies
        ok = None not in (v, now, low, top) and low <= v <= now <= top
        values.append(Check("bpf", "arg13/value",
                            {Source.PROGRAM: v, Source.PROGRAM_JIFFIES: now,
                             Source.GDB_INITIAL_JIFFIES: low, Source.GDB_JIFFIES: top}, ok,
                            info={"meaning": "balance_dirty_pages start_time (jiffies)",
                                  "hz": hz},
                            label="argument 13 is start_time: boot <= it <= the program's "
                                  "jiffies <= gdb's"))
    return values
