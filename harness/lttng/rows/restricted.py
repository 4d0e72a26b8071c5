"""Exports only LTTng may use (issue 41): on a tree whose tracer exports are
EXPORT_SYMBOL_FOR_MODULES(sym, PATTERN) (the variant's [lttng] restricted_to),
what the module loader does with modules of other names. The LTTng guest loads
three test modules that call one of those exports (harness/prepare/formods.py):

- ksymlab_formods, outside the pattern: refused, with the loader's
  "module uses symbol (SYM) from namespace module:PATTERN, but does not import it."
- ksymlab_formods_import, outside it but importing the namespace: refused with
  "module tries to import module namespace: module:PATTERN".
- lttng_impostor, inside it: loads and calls the export (it prints how many
  user stack entries it saved). A name is not an identity.

One more row: LTTng's own modules that link to a restricted export (their
undefined symbols, read on the host) are all loaded in the guest.

The expected outcomes are the loader's rule read in the 7.2 tree
(kernel/module/main.c: verify_module_namespace(), the import_ns check of
check_modinfo()), written here; the restricted exports are the tree's
Module.symvers rows in namespace module:PATTERN."""

import subprocess
from pathlib import Path

from ...model.enums import Source
from ...model.results import Check
from ...prepare.formods import ROLES

CALLED = "stack_trace_save_user"     # what harness/guest/assets/formods/formods.c calls


def restricted_exports(tree_src, pattern):
    """The symbols Module.symvers exports in namespace module:<pattern>."""
    path = Path(tree_src) / "Module.symvers"
    out = []
    for line in path.read_text().splitlines() if path.is_file() else ():
        f = line.split("\t")
        if len(f) == 5 and f[4] == f"module:{pattern}":
            out.append(f[1])
    return sorted(out)


def expected(role, pattern):
    """(loads, the phrase its kernel line must hold) for a test module's role."""
    if role == "impostor":
        return True, f"{CALLED} saved"
    if role == "import":
        return False, f"module tries to import module namespace: module:{pattern}"
    return False, (f"module uses symbol ({CALLED}) from namespace module:{pattern}, "
                   "but does not import it.")


def _outcome(guest, name):
    k = [x for x in guest.formods if x.name == name]
    if not k:
        return None
    return "loaded" if k[-1].loaded == 1 else "refused: " + (" ".join(k[-1].text) or "(no message)")


def _kernel_line(guest, name, phrase):
    """The module's dmesg line holding `phrase` (from the module's name on), else its last."""
    lines = [" ".join(x.text) for x in guest.formodsmsg if x.name == name]
    lines = [ln[ln.find(f"{name}: "):] if f"{name}: " in ln else ln for ln in lines]
    hit = [ln for ln in lines if phrase in ln]
    return (hit or lines or [None])[-1]


def module_rows(pattern, exports, guest):
    listed = {m.name for m in guest.module}
    for role, (name, _) in ROLES.items():
        loads, phrase = expected(role, pattern)
        outcome = _outcome(guest, name)
        line = _kernel_line(guest, name, phrase)
        sources = {Source.EXPECTED: "loaded" if loads else "refused",
                   Source.GUEST_MODPROBE: outcome,
                   Source.GUEST: line,
                   Source.GUEST_LSMOD: name if name in listed else None,
                   Source.SYMVERS: ", ".join(exports) or None}
        said = outcome is not None and outcome.startswith("loaded") == loads
        agree = (CALLED in exports and said and line is not None and phrase in line
                 and (name in listed) == loads)
        if CALLED not in exports:
            reason = f"the tree does not restrict {CALLED} to module:{pattern}"
        elif outcome is None:
            reason = "the guest did not load the test module"
        else:
            reason = None if agree else f"expected {sources[Source.EXPECTED]} with '{phrase}'"
        yield Check("lttng", f"restricted/{role}", sources, agree,
                    {"module": name, "pattern": pattern, "phrase": phrase}, reason,
                    label=f"{name} ({role}) under exports for module:{pattern}")


def lttng_users(build_dir, exports):
    """LTTng's modules (by their /proc/modules name) with an undefined restricted export."""
    out = set()
    for ko in sorted(Path(build_dir, "ko").glob("*.ko")):
        p = subprocess.run(["nm", "-u", str(ko)], capture_output=True, text=True)
        if set(p.stdout.split()) & set(exports):
            out.add(ko.stem.replace("-", "_"))
    return sorted(out)


def rows(pattern, tree_src, build_dir, guest):
    """The restricted-export rows of an LTTng boot, none when the tree restricts nothing."""
    if not pattern:
        return ()
    exports = restricted_exports(tree_src, pattern)
    users = lttng_users(build_dir, exports)
    listed = sorted(u for u in users if u in {m.name for m in guest.module})
    links = Check("lttng", "restricted/lttng-links",
                  {Source.LTTNG_BUILD: ", ".join(users) or None,
                   Source.GUEST_LSMOD: ", ".join(listed) or None},
                  bool(users) and listed == users,
                  {"exports": exports},
                  None if users and listed == users else
                  "an LTTng module that links to a restricted export is not loaded",
                  label=f"LTTng's modules link to the exports for module:{pattern}")
    return (links, *module_rows(pattern, exports, guest))
