"""report.md's section on the call types of by-name resolutions: every item of
`symcheck calltypes` on each variant's probe module and LTTng build (facts
`symcheck.calltypes` and `lttng.symcheck.calltypes` of report.json)."""

from .. import mdtables
from ..prepare.symcheck import CALLTYPE_COUNTS

HEAD = ["variant", "build", "module", "name", "status", "receiver", "kernel declares",
        "module uses"]


def builds(v):
    """(build label, calltypes summary) of one variant's report entry."""
    out = []
    probe = (v.get("symcheck") or {}).get("calltypes")
    if probe is not None:
        out.append(("probe module", probe))
    lt = (v.get("lttng") or {}).get("symcheck") or {}
    if lt.get("calltypes") is not None:
        series = (v.get("lttng") or {}).get("series")
        out.append((f"LTTng ({series})" if series else "LTTng", lt["calltypes"]))
    return out


def _status(item):
    return item["status"] + (f" ({item['problem']})" if item.get("problem") else "")


def markdown(report, out):
    rows, totals = [], {}
    for name, v in report.get("variants", {}).items():
        for build, ct in builds(v):
            for k in CALLTYPE_COUNTS:
                totals[k] = totals.get(k, 0) + ct.get(k, 0)
            rows += [[name, build, i.get("module"), f"`{i['name']}`", _status(i), i.get("receiver"),
                      i.get("kernel_type"), i.get("module_type")] for i in ct.get("items", [])]
    if not totals:
        return
    out += ["## Call types of by-name resolutions", "",
            "A call through an address looked up by name has no modversions CRC. `symcheck "
            "calltypes` compares, for every name a build resolves at run time, the kernel's DWARF "
            "type with the DWARF type of the variable the module stores the address in. A "
            "`mismatch` fails the run; `qualifiers` (const/volatile only) and `unchecked` (no "
            "typed variable receives the address: the reason is in report.json) are listed. "
            f"In this run: {totals['match']} match, {totals['qualifiers']} qualifiers, "
            f"{totals['mismatch']} mismatch, {totals['unchecked']} unchecked.", ""]
    if rows:
        mdtables.table(out, HEAD, rows)
    else:
        out += ["No build of this run resolves a name at run time.", ""]
