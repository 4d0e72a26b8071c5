"""The module's symbol resolution: each address it resolved, and symcheck's
findings on its .ko.

Oracles: gdb's address from vmlinux (with the KASLR slide) and /proc/kallsyms
(the same data kallsyms_lookup_name() reads); symcheck reads the module and
the tree on the host.
"""

from ..prepare import symcheck
from .confusions import pair
from ..model.enums import Source
from ..model.results import Check, hex_text


def compare_symbols(data, truth):
    # /proc/kallsyms may list a static name twice; any match will do.
    kallsyms = {}
    following = {}
    for k in data.kallsyms:
        kallsyms.setdefault(k.name, set()).add(k.addr)
        following[k.addr] = k.next
    resolver = min(kallsyms.get("kallsyms_lookup_name", ()), default=None)
    out = []
    for s in data.symbol:
        # truth.symbols maps every name gdb was asked for (None: not in vmlinux)
        gdb_addr = truth.symbols.get(s.name)
        resolved = s.method != "unresolved"
        in_kallsyms = s.addr in kallsyms.get(s.name, ())
        listed = " ".join(hex_text(a) for a in sorted(kallsyms.get(s.name, ()))) or None
        out.append(Check(
            "symbol", s.name,
            {Source.MODULE: hex_text(s.addr), Source.GDB: hex_text(gdb_addr),
             Source.PROC_KALLSYMS: hex_text(s.addr) if in_kallsyms else listed},
            # an unresolved symbol (address 0) agrees when it is absent or a
            # degraded sampler says so; the sampler list reports that case
            (gdb_addr is not None and gdb_addr == s.addr and in_kallsyms) if resolved else None,
            info=_info(s.method, _confusions(gdb_addr, following, resolver)),
            reason=None if resolved else "unresolved: the sampler that needs it reports itself"))
    return out


def _confusions(right, following, resolver):
    """gdb's address against what a lookup one /proc/kallsyms entry off, or one that
    kept kallsyms_lookup_name's own address, would give (checks/confusions.py)."""
    if right is None:
        return {}
    out = {"next symbol": pair(hex_text(right), hex_text(following.get(right))),
           "the resolver's address": pair(hex_text(right), hex_text(resolver))}
    return {k: e for k, e in out.items() if e[1] is not None}


def _info(method, confusions):
    return {"method": method, **({"confusions": confusions} if confusions else {})}


def calltypes_row(kind, key, calltypes):
    """One row: no by-name resolution whose type the module and the kernel disagree on
    (symcheck calltypes: the kernel's DWARF against the module's receiver). `calltypes` is
    harness.prepare.symcheck.calltypes_summary's shape."""
    bad = [f"{i['module']} {i['name']}: {i['problem']} ({i.get('detail')})"
           for i in calltypes.get("items", []) if i["status"] == "mismatch"]
    return Check(kind, key, {Source.SYMCHECK_CALLTYPES: symcheck.calltypes_text(calltypes),
                             Source.EXPECTED: "0 mismatch"},
                 not bad and calltypes.get("mismatch", 0) == 0,
                 info={"mismatches": bad[:10]},
                 label="call types of by-name resolutions",
                 reason=None if not bad else "; ".join(bad)[:300])


def compare_symcheck(findings, mode):
    """symcheck on the module: nothing missing against its own tree; kallsyms-style
    resolution flagged exactly in the modes that use it; no by-name call whose type the
    module and the kernel disagree on."""
    audit_expected = mode not in ("exports", "v2")
    rows = [
        Check("symcheck", "check", {Source.MODULE: len(findings["check"]), Source.EXPECTED: 0},
              not findings["check"],
              info={"detail": "; ".join(f["message"] for f in findings["check"])[:300]},
              label="check findings"),
        Check("symcheck", "audit",
              {Source.MODULE: ", ".join(f["what"] for f in findings["audit"]) or "none",
               Source.EXPECTED: "flagged" if audit_expected else "none"},
              bool(findings["audit"]) == audit_expected,
              label="audit flags kallsyms-style resolution"),
    ]
    if "calltypes" in findings:
        rows.append(calltypes_row("symcheck", "calltypes", findings["calltypes"]))
    return rows
