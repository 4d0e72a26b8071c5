"""symcheck on the LTTng build a variant booted (issue 13 item 6), as lttng rows.

`symcheck audit --tree <build>/ko` lists what the modules resolve by name,
following the resolver lttng-wrapper exports to the modules that hand it names;
`symcheck check --tree <build>/ko <tree>` checks every import against the
variant's tree; `symcheck calltypes --tree <build>/ko <tree>` compares the type
each looked-up address is stored as with the kernel's DWARF. Rows:
  symcheck/by-name/<name>  each name the seed series covers: resolved by name
                           on a build with the kallsyms wrapper, by nothing on
                           one built with CONFIG_LTTNG_KALLSYMS=n (`exports`),
                           nor by a release that no longer looks it up
                           (coverage.NOT_LOOKED_UP: task_prio in 2.13.18)
  symcheck/flagged         modules flagged: none without the wrapper's lookups
  symcheck/check           0 findings against the variant's tree
  symcheck/calltypes       no by-name call whose type LTTng and the kernel disagree on
"""

from ...prepare import symcheck
from ...model.results import Check
from ...checks.symbols import calltypes_row
from .coverage import NOT_LOOKED_UP

# The names the seed series gives LTTng another way (export, tracepoint argument).
COVERED = ("task_prio", "stack_trace_save_user", "get_pfnblock_flags_mask", "block_class",
           "disk_type", "global_wb_domain")
# Where the kernel declares get_pfnblock_migratetype() (v6.17 and later: 7.2), the
# flags reader is static and LTTng 2.16 looks that name up instead (its
# wrapper/page_alloc.c); the probe module's Kbuild makes the same test.
PAGEBLOCK_HEADER = "include/linux/pageblock-flags.h"


def covered(tree_src=None):
    """COVERED as LTTng names them on the kernel of `tree_src` (None: COVERED)."""
    header = tree_src / PAGEBLOCK_HEADER if tree_src is not None else None
    if header is None or "get_pfnblock_migratetype" not in header.read_text(errors="replace"):
        return COVERED
    return tuple("get_pfnblock_migratetype" if n == "get_pfnblock_flags_mask" else n
                 for n in COVERED)


def read(build_dir, tree):
    """symcheck's audit, check and calltypes (report shape) documents for the .ko files of
    `build_dir`."""
    symcheck.ensure_built()
    ko = str(build_dir / "ko")
    return (symcheck.run_json(["audit", "--tree", ko]),
            symcheck.run_json(["check", "-q", "--tree", ko, str(tree.src)]),
            symcheck.calltypes_summary(symcheck.run_json(["calltypes", "--tree", ko,
                                                          str(tree.src)])))


def by_name(audit):
    """name -> [module (via resolver)] of every by-name finding of the audit."""
    out = {}
    for m in audit.get("modules", []):
        for f in m.get("findings", []):
            if f.get("kind") == "by-name":
                out.setdefault(f["what"], []).append(f"{m['name']} via {f.get('via')}")
    return out


def rows(audit, check, kallsyms, calltypes, version, tree_src=None):
    """The lttng rows of symcheck's view of one build of LTTng `version`; `kallsyms`:
    the build keeps the wrapper's lookups (False: CONFIG_LTTNG_KALLSYMS=n);
    `calltypes`: the build's calltypes summary, one more row when given; `tree_src`:
    the kernel tree it was built against (covered())."""
    found = by_name(audit)
    gone = NOT_LOOKED_UP.get(version, {})
    out = []
    for name in covered(tree_src):
        where = found.get(name)
        looked_up = kallsyms and name not in gone
        ok = bool(where) == looked_up
        if ok:
            reason = None
        elif looked_up:
            reason = (f"symcheck finds no by-name lookup of {name} in a build with the "
                      "kallsyms wrapper")
        elif name in gone:
            reason = f"{name} is resolved by name, but LTTng {version} has it {gone[name]}"
        else:
            reason = f"{name} is still resolved by name without the kallsyms wrapper"
        out.append(Check("lttng", f"symcheck/by-name/{name}",
                         {"symcheck audit": "; ".join(where) if where else "not by name",
                          "expected": "by name" if looked_up else "not by name"},
                         ok, {"not_looked_up": gone[name]} if name in gone else {}, reason))
    flagged = sorted(audit.get("flagged", []))
    ok = bool(flagged) == kallsyms
    out.append(Check("lttng", "symcheck/flagged",
                     {"symcheck audit": ", ".join(flagged) or "none",
                      "expected": "flagged" if kallsyms else "none"},
                     ok, {"modules": len(audit.get("modules", []))},
                     None if ok else "symcheck audit disagrees with the build's kallsyms switch"))
    findings = [f"{m['name']}: {f.get('kind')} {f.get('symbol') or f.get('what') or ''}".strip()
                for m in check.get("modules", []) for f in m.get("findings", [])]
    total = check.get("findings_total", len(findings))
    out.append(Check("lttng", "symcheck/check",
                     {"symcheck check": total, "expected": 0}, total == 0 and not findings,
                     {"modules": len(check.get("modules", [])), "findings": findings[:10]},
                     None if total == 0 and not findings else
                     "LTTng's imports do not all match the variant's tree"))
    if calltypes is not None:
        out.append(calltypes_row("lttng", "symcheck/calltypes", calltypes))
    return out


def summary(audit, check, calltypes=None):
    """The report's facts: what symcheck saw in this build."""
    out = {"modules": len(audit.get("modules", [])), "flagged": sorted(audit.get("flagged", [])),
           "by_name": {k: v for k, v in sorted(by_name(audit).items())},
           "check_findings": check.get("findings_total", 0)}
    if calltypes is not None:
        out["calltypes"] = calltypes
    return out
