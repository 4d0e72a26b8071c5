"""Typed, immutable results: a Check per compared value, a VariantResult per variant.

A Check is selected by its id, "<kind>:<key>", never by its display label:
seeds.py and crossvariant.py name the ids they need, so renaming a label
cannot drop a check. The columns a report shows are the keys of `sources`,
each a Source, and its verdict is an Agreement (harness/model/enums.py).
"""

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Mapping, Optional

from .enums import Agreement, Source


def frozen(mapping):
    """A read-only copy of `mapping`, so a published result cannot change."""
    return MappingProxyType(dict(mapping or {}))


def hex_text(v):
    """An address as a row's source value: "0x1f" (None stays None)."""
    return f"0x{v:x}" if v is not None else None


# What a row's info["oracles"] says of a source. SAME_FUNCTION: it reads
# through the very kernel function the module calls, so it shares a bug there:
# /proc/<pid>/stat field 18 is task_prio() (fs/proc/array.c do_task_stat()),
# /proc/pagetypeinfo counts with get_pageblock_migratetype() ->
# get_pfnblock_flags_mask() (mm/vmstat.c), /proc/vmstat's dirty thresholds
# come from global_dirty_limits(), which fires global_dirty_state (mm/vmstat.c
# vmstat_start()). (harness/checks/labels.py labels every source for the
# two-oracle rule.)
SAME_FUNCTION = "same function"
INDEPENDENT = "independent"


def _plain(x):
    """JSON-ready copy of nested read-only mappings and tuples (a Source key
    becomes its plain text)."""
    if isinstance(x, Mapping):
        return {str(k) if isinstance(k, Source) else k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


@dataclass(frozen=True)
class Check:
    """One compared value. Built with `agreement` True, False or None (or an
    Agreement) and `sources` keyed by Source names; a name that is not a
    Source is a ValueError here, a verdict that is not a bool a TypeError."""
    kind: str
    key: str                        # stable within its kind; seeds and rules select by it
    sources: Mapping[Source, Any]   # source -> value it gave (None: it gave none)
    agreement: Agreement            # UNCHECKED: no oracle covers the value
    info: Mapping[str, Any] = field(default_factory=dict)   # describes, never compared
    reason: Optional[str] = None    # why this row may differ or degrade
    label: Optional[str] = None     # display text, defaults to the key

    def __post_init__(self):
        object.__setattr__(self, "sources",
                           frozen({Source(k): v for k, v in (self.sources or {}).items()}))
        object.__setattr__(self, "agreement", Agreement.of(self.agreement))
        object.__setattr__(self, "info", frozen(self.info))

    @property
    def id(self):
        return f"{self.kind}:{self.key}"

    @property
    def agrees(self):
        return self.agreement is Agreement.AGREE

    @property
    def disagrees(self):
        return self.agreement is Agreement.DISAGREE

    @property
    def unchecked(self):
        return self.agreement is Agreement.UNCHECKED

    def get(self, source):
        return self.sources.get(source)

    def to_json(self):
        return {"id": self.id, "kind": self.kind, "key": self.key,
                "label": self.label or self.key, "info": _plain(self.info),
                "sources": _plain(self.sources), "agree": self.agreement.to_json(),
                "reason": self.reason}


@dataclass(frozen=True)
class StepError:
    """A step that failed: its exit status and, for a guest fault, the console excerpt."""
    step: str
    message: str
    exit_status: int
    verdict: str                    # panic, oops, warning, hang, reboot, timeout, ... or error
    log: Optional[str] = None
    excerpt: Optional[str] = None

    def to_json(self):
        out = {"step": self.step, "message": self.message, "exit_status": self.exit_status,
               "log": self.log, "verdict": self.verdict}
        if self.excerpt:
            out["excerpt"] = self.excerpt
        return out


@dataclass(frozen=True)
class VariantResult:
    """What one variant's run produced; built once, then only read."""
    name: str
    description: str
    module_mode: str
    series: tuple = ()
    tree_key: Optional[str] = None
    symbols: tuple = ()             # Check rows of kind "symbol"
    values: tuple = ()              # every other Check row
    samplers: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple = ()
    guest_errors: tuple = ()
    timings: Mapping[str, float] = field(default_factory=dict)
    error: Optional[StepError] = None
    facts: Mapping[str, Any] = field(default_factory=dict)  # accel, kaslr, guest_kernel, ...
    seeds: tuple = ()               # the seed patches this variant's series carries
    kernel_line: str = ""
    role: str = ""                  # its row in the kernel x variant matrix
    worker: str = "local"           # where it ran: "local" or a Dask worker's address

    def __post_init__(self):
        for name in ("samplers", "timings", "facts"):
            object.__setattr__(self, name, frozen(getattr(self, name)))
        for name in ("series", "symbols", "values", "notes", "guest_errors", "seeds"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    def rows(self):
        return self.symbols + self.values

    def by_id(self):
        return {c.id: c for c in self.rows()}

    def of_kind(self, kind):
        return [c for c in self.values if c.kind == kind]

    @property
    def ran(self):
        """The guest ran and was compared (a failed step may have none)."""
        return self.error is None and bool(self.values)

    @property
    def counts(self):
        rows = self.rows()
        return {"symbols": len(self.symbols),
                "symbols_agree": sum(c.agrees for c in self.symbols),
                "values": len(self.values),
                "values_agree": sum(c.agrees for c in self.values),
                "values_disagree": sum(c.disagrees for c in self.values),
                "unchecked": sum(c.unchecked for c in rows)}

    @property
    def verdict(self):
        ok = (self.error is None and bool(self.symbols) and bool(self.values)
              and not self.guest_errors
              and not any(c.disagrees for c in self.rows()))
        return "pass" if ok else "fail"

    def to_json(self):
        out = {"description": self.description, "module_mode": self.module_mode,
               "series": list(self.series), "tree_key": self.tree_key,
               "verdict": self.verdict,
               "error": self.error.to_json() if self.error else None,
               "symbols": [c.to_json() for c in self.symbols],
               "values": [c.to_json() for c in self.values],
               "kernel_line": self.kernel_line, "role": self.role or self.name,
               "seeds": list(self.seeds), "worker": self.worker,
               "samplers": _plain(self.samplers), "notes": list(self.notes),
               "counts": self.counts, "timings": _plain(self.timings)}
        out.update(_plain(self.facts))
        return out
