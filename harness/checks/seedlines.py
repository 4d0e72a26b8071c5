"""What a later kernel line changed in a seed patch's claims and evidence.

A seed's claims are read from the patch as posted (seedparse.py) and checked on
every tree that carries it (seedclaims.py). A later kernel can make a claim
moot, because upstream did the same thing another way, or move it to another
symbol, because the function it exports is gone. For such a line the table
below names the claims that are not checked there, the claims checked instead
(each read in that line's tree, so a wrong reading fails like any claim), the
evidence rows renamed or dropped, and why; the report's seed row says it.
"""

from dataclasses import dataclass

from .seedparse import GPL, Claim, claims as posted_claims, spelled


@dataclass(frozen=True)
class LineChange:
    line: str                       # kernel line ("7.2")
    seed: str                       # "3/9"
    why: str                        # what the kernel changed, with its upstream commits
    dropped: tuple = ()             # claim keys not checked on the line
    added: tuple = ()               # Claims checked instead
    renamed: tuple = ()             # (evidence id as posted, id on the line)
    dropped_ids: tuple = ()         # evidence ids that cannot exist on the line


BDP_72 = "wb, dtc, dirty_ratelimit, task_ratelimit, dirtied, period, pause, start_time"

CHANGES = (
    LineChange(
        "7.2", "3/9",
        "balance_dirty_pages takes the dirty throttle control and reads dtc->limit "
        "since v6.15 (f1ab2831e2a4, 6cc4c3aa714b): only global_dirty_state gets the domain",
        dropped=("3/9/tracepoint/balance_dirty_pages/args",
                 "3/9/tracepoint/balance_dirty_pages/param1"),
        added=(Claim("3/9", "tp-args", "balance_dirty_pages", BDP_72),),
        dropped_ids=("bpf:arg12/arg1-domain",)),
    LineChange(
        "7.2", "6/9",
        "7.2 has no get_pfnblock_flags_mask(): get_pageblock_migratetype() calls "
        "get_pfnblock_migratetype(), which applies the isolate bit, and the port exports it",
        dropped=("6/9/export/get_pfnblock_flags_mask",),
        added=(Claim("6/9", "export", "get_pfnblock_migratetype", GPL),),
        renamed=(("symbol:get_pfnblock_flags_mask", "symbol:get_pfnblock_migratetype"),)),
    # the v2 series (patches/7.2/v2/series)
    LineChange(
        "7.2", "v2-1/8",
        "upstream since v6.15 (f1ab2831e2a4): not in the 7.2 series; its claims are read "
        "in the 7.2 tree as it is"),
    LineChange(
        "7.2", "v2-2/8",
        "upstream since v6.15 (6cc4c3aa714b): not in the 7.2 series; its claim is read "
        "in the 7.2 tree as it is"),
    LineChange(
        "7.2", "v2-5/8",
        "7.2 has no get_pfnblock_flags_mask(): the series exports get_pfnblock_migratetype(), "
        "which get_pageblock_migratetype() calls and which applies the isolate bit",
        dropped=("v2-5/8/export/get_pfnblock_flags_mask",),
        added=(Claim("v2-5/8", "export", "get_pfnblock_migratetype",
                     spelled(GPL, "TRACER_INTERNALS")),),
        renamed=(("symbol:get_pfnblock_flags_mask", "symbol:get_pfnblock_migratetype"),)),
)


def change(seed, line):
    """The LineChange of `seed` on kernel line `line`, or None."""
    for c in CHANGES:
        if c.seed == seed and c.line == line:
            return c
    return None


def line_claims(seed, line):
    """The claims of `seed` checked on a tree of kernel line `line`."""
    c = change(seed, line)
    base = posted_claims(seed)
    if c is None:
        return base
    return tuple(x for x in base if x.key not in c.dropped) + c.added


def evidence_ids(seed, line, ids):
    """The evidence ids `ids` of `seed` as they are named on kernel line `line`."""
    c = change(seed, line)
    if c is None:
        return list(ids)
    names = dict(c.renamed)
    return [names.get(i, i) for i in ids if i not in c.dropped_ids]
