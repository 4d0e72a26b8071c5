"""The restricted-export test modules (issue 41): one source
(harness/guest/assets/formods) built under three names against a tree whose
tracer exports are EXPORT_SYMBOL_FOR_MODULES(sym, "lttng*"), for the LTTng
guest to load (harness/lttng/rows/restricted.py judges what the loader did).

- other: ksymlab_formods, a name outside the pattern. modpost refuses to build
  it ("uses symbol ... from namespace module:lttng*, but does not import it");
  KBUILD_NSDEPS=1 (what `make nsdeps` runs, modpost -N) turns that into a
  warning, so the loader gets a module modpost would have stopped.
- impostor: lttng_impostor, a name inside the pattern: built like any module.
- import: ksymlab_formods_import, outside the pattern but importing the
  namespace. modpost refuses the import itself ("explicitly importing namespace
  ... is not allowed"), so the source imports "module_lttng*" (built with
  KBUILD_NSDEPS=1 as that is no import of module:lttng*) and the built module's
  .modinfo gets the ':' written in (a copy; the cached build stays)."""

from pathlib import Path

from . import module as modulemod
from .. import paths
from ..errors import HarnessError

SRC = paths.GUEST / "formods"
GUEST_DIR = "/lib/modules/formods"
# role -> (module name, make arguments)
ROLES = {"other": ("ksymlab_formods", ("KBUILD_NSDEPS=1",)),
         "impostor": ("lttng_impostor", ()),
         "import": ("ksymlab_formods_import", ("KBUILD_NSDEPS=1",))}
IMPORT_AS_BUILT = b"import_ns=module_lttng*\0"
IMPORT_DOCTORED = b"import_ns=module:lttng*\0"


def doctor_import(ko):
    """The .ko with its import of "module_lttng*" made "module:lttng*" (same length):
    written once beside the cached build as <name>.import.ko."""
    out = ko.with_suffix(".import.ko")
    if out.exists():
        return out
    data = ko.read_bytes()
    if data.count(IMPORT_AS_BUILT) != 1:
        raise HarnessError("module", f"{ko}: expected one {IMPORT_AS_BUILT[:-1].decode()} "
                                     f"in .modinfo, found {data.count(IMPORT_AS_BUILT)}")
    tmp = out.with_suffix(".tmp")
    tmp.write_bytes(data.replace(IMPORT_AS_BUILT, IMPORT_DOCTORED))
    tmp.replace(out)
    return out


def build_all(tree, cache):
    """{guest path: host .ko} of the three modules, built (or cached) for `tree`."""
    out = {}
    for role, (name, make_args) in ROLES.items():
        ko = Path(modulemod.build(tree, role, cache, SRC, f"{name}.ko", make_args))
        if role == "import":
            ko = doctor_import(ko)
        out[f"{GUEST_DIR}/{name}.ko"] = ko
    return out
