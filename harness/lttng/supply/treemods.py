"""The tree's own modules an LTTng module needs (lttng-probe-kvm-x86 needs kvm.ko,
which needs irqbypass.ko): found through each module's `depends=` (symcheck
module) and the tree's modules.order, so that the guest can load the probe."""

from pathlib import Path

from ...prepare import symcheck
from ...errors import HarnessError


def _name(path):
    """A module's name as depends= spells it (kvm-intel.ko -> kvm_intel)."""
    return Path(path).name.split(".")[0].replace("-", "_")


def tree_modules(tree_src):
    """{module name: path of its .ko below tree_src} from the tree's modules.order."""
    order = Path(tree_src) / "modules.order"
    if not order.is_file():
        return {}
    out = {}
    for line in order.read_text().split():
        ko = line[:-2] + ".ko" if line.endswith(".o") else line
        out[_name(ko)] = ko
    return out


def depends(ko):
    """The module names ko's .modinfo depends= lists."""
    info = symcheck.run_json(["module", str(ko)]).get("modinfo") or {}
    return [_name(d) for d in info.get("depends") or ()]


def needed(kos, tree_src, deps=depends):
    """The tree modules (paths below tree_src, in dependency order, each once) that the
    modules `kos` need and do not provide themselves; HarnessError naming a dependency
    neither the set nor the tree has (the guest could not load that module)."""
    own = {_name(k) for k in kos}
    tree = tree_modules(tree_src)
    out, seen = [], set()

    def visit(name, by):
        if name in own or name in seen:
            return
        seen.add(name)
        if name not in tree:
            raise HarnessError("lttng", f"{Path(by).name} depends on {name}, which "
                               f"neither LTTng nor the tree's modules.order provides")
        path = Path(tree_src) / tree[name]
        for d in deps(path):
            visit(d, path)
        out.append(tree[name])

    for k in sorted(kos):
        for d in deps(k):
            visit(d, k)
    return out
