"""What each seed patch claims, read from the seed patch itself, checked on a built tree.

The seed patches as posted (patches/seeds/: the nine-patch RFC and commit
0bd476e6c671) say what a port must give: `+EXPORT_SYMBOL_GPL(x)` is the
claim "x is exported, GPL-only"; a `TRACE_EVENT` whose `TP_ARGS` gains a
parameter is the claim "the tracepoint's parameters are these, the new one
at this position with this type". The upstream commit 0bd476e6 deletes two
`EXPORT_SYMBOL_GPL()` lines, so its revert claims both exports back, as
they were before it. Claims come from the patch text, never from a table
here, so they cannot drift from the seed.

The v2 series (patches/v2, ours: no posted seed) is read the same way, its
seed ids prefixed "v2-" ("v2-4/8"): the committed 6.1 patches are the
posting, and each line's build (6.1, and the 6.12 port) is checked against
them. Besides exports and tracepoints it claims namespaced exports
(`EXPORT_SYMBOL_NS_GPL(x, NS)`: the namespace must be in the build),
static-call exports (`EXPORT_STATIC_CALL_GPL(f)`: the key `__SCK__f` and the
trampoline `__SCT__f`, from the module that owns them) and struct members a
header gains (`unsigned long limit` in `struct dirty_throttle_control`:
pahole's reading of vmlinux's DWARF).

Each claim is checked on the built tree, from two artifacts for an export
(Module.symvers and vmlinux's `__ksymtab`/`__ksymtab_gpl`, each read by
symcheck on its own) and from vmlinux's DWARF for a tracepoint
(`__traceiter_<event>`'s parameters, symcheck's libdw reader). Every claim
is a Check of kind "seed" with a stable id; a port that drifts from its
seed disagrees, and a claim symcheck cannot answer disagrees too.
"""

import re
import subprocess

from ..prepare import symcheck
from ..progress import say
from ..model.enums import Source
from ..model.results import Check
from ..errors import HarnessError
from . import seedlines
from .seedparse import spelled, typed

# ---------------------------------------------------------------- artifacts

def _classes(path):
    """{symbol: export macro} of one artifact (a Module.symvers or a vmlinux) alone."""
    return {s: c for s, (c, _) in _owned(path).items()}


def _owned(path):
    """{symbol: (export macro, owner)} of one artifact; the owner is "vmlinux" or the
    module path Module.symvers names ("arch/x86/kvm/kvm")."""
    data = symcheck.run_json(["exports", str(path)])
    return {e["symbol"]: (spelled(e["class"], e.get("namespace")), e.get("module") or "vmlinux")
            for e in data["exports"]}


def _module_classes(tree_src, modules):
    """{symbol: export macro} of the exports of each module (a path below tree_src without
    .ko) read from that .ko's own __ksymtab/__ksymtab_gpl by `symcheck module`."""
    out = {}
    for m in sorted(modules):
        ko = tree_src / f"{m}.ko"
        if not ko.is_file():
            continue            # its claims find nothing: they disagree
        for e in symcheck.run_json(["module", str(ko)]).get("exports") or ():
            out[e["symbol"]] = spelled(e["class"], e.get("namespace"))
    return out


def _traceiters(src, events):
    """{event: [(name, type), ...]} of __traceiter_<event> in vmlinux's DWARF, without
    the leading `void *__data`; an event symcheck does not report is absent."""
    data = symcheck.run_json(["seed-report", "--symbols", "task_prio", str(src)])
    dwarf = data["builds"][0].get("dwarf") or {}
    out = {}
    for ev, tp in (dwarf.get("tracepoints") or {}).items():
        if ev in events and tp and tp.get("function", "").startswith("__traceiter_"):
            out[ev] = [(p["name"], p["type"]) for p in tp["params"][1:]]
    return out


_INTEGER_WORDS = ("unsigned", "signed", "long", "short", "char", "int")


def _ctype(kind):
    """One spelling of an integer type: DWARF's 'long unsigned int' is 'unsigned long'."""
    words = kind.split()
    if not words or any(w not in _INTEGER_WORDS for w in words):
        return " ".join(words)
    sign = [w for w in words if w in ("unsigned", "signed")]
    size = [w for w in words if w in ("long", "short", "char")]
    return " ".join(sign + size + ([] if size else ["int"]))


def _members_of(vmlinux, structs):
    """{"struct.member": "type member"} of each struct in `structs` as pahole reads it
    from vmlinux's DWARF (a reader of its own: not symcheck, not the compiler's headers)."""
    out = {}
    for struct in sorted(structs):
        p = subprocess.run(["pahole", "-C", struct, str(vmlinux)], capture_output=True,
                           text=True, timeout=300)
        for m in re.finditer(r"^\t(.+?[\s*])(\w+)(?:\[\d*\])?;", p.stdout, re.M):
            kind = m.group(1).strip()
            stars = kind.count("*")
            base = _ctype(kind.replace("*", " "))
            out[f"{struct}.{m.group(2)}"] = typed(base + " " + "*" * stars, m.group(2))
    return out


def _found(claim, symvers, ksymtab, tps, members=None):
    if claim.what == "export":
        return {Source.SYMVERS: symvers.get(claim.subject),
                Source.KSYMTAB: ksymtab.get(claim.subject)}
    if claim.what == "member":
        return {Source.PAHOLE: (members or {}).get(claim.subject)}
    params = tps.get(claim.subject)
    if params is None:
        return {Source.DWARF: None}
    if claim.what == "tp-args":
        return {Source.DWARF: ", ".join(n for n, _ in params)}
    if claim.position > len(params):
        return {Source.DWARF: None}
    name, kind = params[claim.position - 1]
    return {Source.DWARF: typed(kind, name)}


def check_rows(claim_list, symvers, ksymtab, tps, members=None):
    """The Check rows of `claim_list` against what the artifacts gave."""
    rows = []
    for c in claim_list:
        found = _found(c, symvers, ksymtab, tps, members)
        sources = {Source.SEED_PATCH: c.expected, **found}
        rows.append(Check("seed", c.key, sources,
                          all(v == c.expected for v in found.values()),
                          info={"seed": c.seed, "claim": c.text},
                          label=f"{c.seed}: {c.text}"))
    return rows


def checks(tree_src, seeds, skip=(), line=None):
    """Check rows for every claim of the seeds a variant carries, on its built tree
    (a directory with Module.symvers and vmlinux) of kernel line `line`
    (seedlines.py: what that line changed). `skip`: seeds whose claims are
    waived (superseded upstream)."""
    wanted = [c for s in seeds if s not in skip for c in seedlines.line_claims(s, line)]
    if not wanted:
        return []
    symvers_path, vmlinux = tree_src / "Module.symvers", tree_src / "vmlinux"
    for p in (symvers_path, vmlinux):
        if not p.is_file():
            raise HarnessError("verify", f"seed claims: {p} is missing")
    events = {c.subject for c in wanted if c.what.startswith("tp-")}
    tps = _traceiters(tree_src, events) if events else {}
    structs = {c.subject.split(".")[0] for c in wanted if c.what == "member"}
    members = _members_of(vmlinux, structs) if structs else {}
    owned = _owned(symvers_path)
    symvers = {s: c for s, (c, _) in owned.items()}
    # an export a module owns (the KVM static-call keys: kvm.ko) is in that module's ksymtab
    modules = {owned[c.subject][1] for c in wanted
               if c.what == "export" and owned.get(c.subject, ("", "vmlinux"))[1] != "vmlinux"}
    ksymtab = {**_module_classes(tree_src, modules), **_classes(vmlinux)}
    return check_rows(wanted, symvers, ksymtab, tps, members)


def variant_checks(tree, variant, waived):
    """The claim checks of every seed `variant` carries, on its built `tree`; the claims
    of the seeds in `waived` (seeds.superseded(): superseded upstream) are not
    checked (their rows in the report say why)."""
    rows = checks(tree.src, variant.seeds, skip=waived, line=variant.kernel_line)
    if rows:
        bad = sum(r.disagrees for r in rows)
        say("seeds", f"{variant.name}: {len(rows) - bad}/{len(rows)} seed claims hold "
                     "in Module.symvers, __ksymtab and DWARF")
    return rows
