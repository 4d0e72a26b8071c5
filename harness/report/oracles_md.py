"""report.md's Oracles section: each source labelled by what it shares with the
module (harness/checks/labels.py), then each variant's vmcore."""

from .. import mdtables
from ..checks.labels import REQUIRED, table


def markdown(report):
    """The section's lines: the label table, then each variant's vmcore."""
    out = ["## Oracles", "",
           "Each source labelled by what it shares with the module. Only independent "
           f"sources count: every value kind needs {REQUIRED} that agree (rows of kind "
           "`oracles`). `drgn` is the vmcore QEMU wrote while gdb held the guest at the "
           "snapshot (`harness/oracles/drgn.py`).", ""]
    mdtables.table(out, ["source", "label", "shares with the module", "counts"],
                   [[f"`{t['source']}`", t["label"], t["shares"], "yes" if t["counts"] else "no"]
                    for t in report.get("oracles") or table()])
    rows = []
    for name, v in report.get("variants", {}).items():
        vc = v.get("vmcore")
        if not vc:
            continue
        size = f"{vc['bytes'] / 2**20:.1f}" if vc.get("bytes") is not None else ""
        rows.append([name, vc.get("format"), size, vc.get("seconds"), vc.get("drgn_seconds"),
                     vc.get("error") or vc.get("drgn_error") or "read"])
    if rows:
        mdtables.table(out, ["variant", "vmcore format", "MiB", "dump s", "drgn s", "drgn"],
                       rows)
    return out
