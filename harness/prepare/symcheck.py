"""symcheck's findings on a variant's probe module (check against its tree, audit, and the
call types of what it resolves by name)."""

import fcntl
import json
import subprocess

from .. import paths
from ..errors import HarnessError
from ..progress import say

SYMCHECK = paths.REPO / "symcheck" / "symcheck"


def ensure_built():
    """Build symcheck once, before any variant needs it.

    run() calls this before the variants start; the lock also keeps two
    harness processes (or a test beside a run) from racing in symcheck/build.
    """
    src = paths.REPO / "symcheck"
    try:
        lock = open(src / ".build.lock", "w")
    except OSError as e:
        # e.g. a worker started as a user who does not own the checkout (docs/cluster.md)
        raise HarnessError("symcheck", f"cannot build symcheck in {src}: {e.strerror}: "
                           "the checkout must be writable by the user who runs the harness") \
            from None
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        p = subprocess.run(["make", "-s", "-C", str(src)], capture_output=True, text=True,
                           stdin=subprocess.DEVNULL)
    if p.returncode != 0 or not SYMCHECK.exists():
        raise HarnessError("symcheck", "cannot build symcheck: "
                           + (p.stderr.strip().splitlines() or ["?"])[-1])


def _json(argv):
    p = subprocess.run([str(SYMCHECK), "--json", *argv], capture_output=True, text=True,
                       timeout=120)
    if p.returncode not in (0, 1):          # 1 means findings; 2 is an error
        raise HarnessError("verify", f"symcheck {argv[0]}: {p.stderr.strip()}")
    try:
        return json.loads(p.stdout)
    except ValueError as e:
        raise HarnessError("verify", f"symcheck {argv[0]}: output is not JSON ({e})") from e


CALLTYPE_COUNTS = ("match", "qualifiers", "mismatch", "unchecked")


def calltypes_summary(doc):
    """The report's shape of a `symcheck calltypes` document: the counts and every item."""
    keep = ("module", "name", "status", "problem", "receiver", "kernel_type", "module_type",
            "detail")
    return {**{k: doc.get(k, 0) for k in CALLTYPE_COUNTS},
            "items": [{k: i.get(k) for k in keep} for i in doc.get("items", [])]}


def calltypes_text(summary):
    """'3 match, 1 qualifiers, 0 mismatch, 2 unchecked' (the row's value)."""
    return ", ".join(f"{summary.get(k, 0)} {k}" for k in CALLTYPE_COUNTS)


def findings(ko, tree):
    """Return {'check': [...], 'audit': [...], 'calltypes': {...}, 'needs': N} for one module
    (symcheck built)."""
    check = _json(["check", str(ko), str(tree.src)])
    audit = _json(["audit", str(ko)])
    calltypes = calltypes_summary(_json(["calltypes", str(ko), str(tree.src)]))
    mod = check["modules"][0]
    out = {
        "needs": len(mod["symbols"]),
        "gpl_only_needed": sorted(s["name"] for s in mod["symbols"]
                                  if s.get("class") == "EXPORT_SYMBOL_GPL"),
        "check": mod["findings"],
        "audit": audit["findings"],
        "calltypes": calltypes,
    }
    say("symcheck", f"{tree.variant}: {out['needs']} symbols needed, "
                    f"{len(out['check'])} check findings, {len(out['audit'])} audit flags, "
                    f"call types: {calltypes_text(calltypes)}")
    return out


def run_json(argv):
    """symcheck --json ARGV... (symcheck built): its JSON document; exit 2 is a verify error."""
    return _json(argv)
