"""The harness's layers: a package (or top-level module) imports only from its own
layer or the ones below it, and no two packages import each other.

test_imports.py keeps the graph of *modules* acyclic; this keeps the graph of
*packages* ordered, which a module-level check cannot see (four package pairs
imported each other while every module cycle was gone: review of 50becbe).
Imports inside functions count: the graph is test_imports.import_graph.

The order, bottom first. A new package or top-level module must be placed here.
"""


from harness import paths
from harness.tests.top.test_imports import import_graph

HARNESS = paths.REPO / "harness"

LAYERS = (
    # util: no stage knowledge; exit statuses, paths, process groups, progress
    # lines, the step names, markdown tables
    {"errors", "paths", "proc", "progress", "steps", "mdtables"},
    {"model"},          # Check, VariantResult, Agreement, Source, Label
    {"prepare"},        # kernel trees, module, initramfs, cache, variants, pins
    {"options"},        # a run's options (reads the variants)
    {"guest"},          # QEMU, the data port, the scenario, the vmcore
    {"oracles"},        # gdb, drgn, addr2line, the task_prio() model
    {"checks"},         # the rows: module against oracles, labels, seeds
    {"lttng"},          # the real client: its supply, boot, rows and suite
    {"report"},         # renders what the judge decided
    # one variant's job (run_job), the phases after every job (the suite's
    # retry) and the judge: what the local pool and the cluster child share
    {"variantjob", "postphases", "judge"},
    {"cluster"},        # variant jobs on Dask workers
    {"run"},            # the orchestrator
    {"tools", "session", "__main__"},   # session: gdb on a live guest, the job path's rows
)


def unit_of(module):
    """harness.checks.prio -> "checks"; harness.run -> "run"; harness -> None."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def layer_of(layers):
    return {unit: i for i, units in enumerate(layers) for unit in units}


def violations(graph, layers):
    """Every import that goes up a layer, every unit no layer names, and every
    pair of units that import each other, as lines of text."""
    rank = layer_of(layers)
    out, unit_edges = [], {}
    for module, edges in sorted(graph.items()):
        a = unit_of(module)
        if a is None:
            continue
        if a not in rank:
            out.append(f"{module}: {a} is in no layer (place it in LAYERS)")
            continue
        for target, where in sorted(edges.items()):
            b = unit_of(target)
            if b is None or b == a:
                continue
            unit_edges.setdefault((a, b), where[0])
            if b in rank and rank[b] > rank[a]:
                out.append(f"{module} -> {target} goes up from {a} to {b} ({where[0]})")
    for (a, b), where in sorted(unit_edges.items()):
        if a < b and (b, a) in unit_edges:
            out.append(f"{a} and {b} import each other ({where}; {unit_edges[(b, a)]})")
    return out


def test_every_package_imports_only_its_layer_and_below():
    graph = import_graph(HARNESS, "harness")
    units = {unit_of(m) for m in graph} - {None}
    assert {"prepare", "guest", "oracles", "checks", "lttng", "report", "model"} <= units
    assert units <= set(layer_of(LAYERS)), sorted(units - set(layer_of(LAYERS)))
    found = violations(graph, LAYERS)
    assert not found, "\n".join(found)


def _package(root, files):
    for rel, text in files.items():
        f = root / "pkg" / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    return import_graph(root / "pkg", "pkg")


PLANTED_LAYERS = ({"low"}, {"mid"}, {"high"})


def test_an_upward_import_inside_a_function_is_found(tmp_path):
    graph = _package(tmp_path, {
        "__init__.py": "", "low/__init__.py": "", "mid/__init__.py": "",
        "high/__init__.py": "", "high/a.py": "from ..mid import b\n",
        "mid/b.py": "def f():\n    from ..high import a\n    return a\n"})
    found = violations(graph, PLANTED_LAYERS)
    assert any("pkg.mid.b -> pkg.high.a goes up from mid to high" in f for f in found), found
    assert any("high and mid import each other" in f for f in found), found


def test_two_packages_of_one_layer_that_import_each_other_are_found(tmp_path):
    graph = _package(tmp_path, {
        "__init__.py": "", "low/__init__.py": "", "low/x.py": "from ..side import y\n",
        "side/__init__.py": "", "side/y.py": "from ..low import x\n"})
    found = violations(graph, ({"low", "side"},))
    assert found == ["low and side import each other (pkg/low/x.py:1; pkg/side/y.py:1)"], found


def test_a_package_in_no_layer_and_a_clean_graph(tmp_path):
    graph = _package(tmp_path, {
        "__init__.py": "", "low/__init__.py": "", "low/x.py": "import os\n",
        "mid/__init__.py": "", "mid/y.py": "from ..low import x\n",
        "new/__init__.py": ""})
    assert violations(graph, PLANTED_LAYERS) == [
        "pkg.new: new is in no layer (place it in LAYERS)"]
    graph.pop("pkg.new")
    assert violations(graph, PLANTED_LAYERS) == []
