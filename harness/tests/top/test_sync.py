"""One list, checked wherever it is spelled (issue 38 item 7; the idiom of bpftool's
test_bpftool_synctypes.py): the README's and the docs' copies of the stage table,
the lap list, the probe module's modes, the command-line options and the cache's
directories, each against the code that defines it.

Each check is a function from the texts to a list of problems (empty: in sync), so
that the tests below also run it on a doctored copy and see the drift named."""

import argparse
import ast
import re

from harness import __main__ as cli
from harness import paths, steps
from harness.prepare import cache, variants

README = paths.REPO / "README.md"
PIPELINE = paths.REPO / "docs" / "pipeline.md"
CACHE_MD = paths.REPO / "docs" / "cache.md"
COSTS_MD = paths.REPO / "docs" / "costs.md"
MAKEFILE = paths.REPO / "Makefile"
PROBE_README = paths.REPO / "probe-module" / "README.md"
KBUILD = paths.REPO / "probe-module" / "Kbuild"
PROBE_MAKEFILE = paths.REPO / "probe-module" / "Makefile"


def md_table(text, header):
    """The body rows (lists of stripped cells) of the first table whose header line
    matches the regex `header`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(header, line))
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def backticked(cell):
    return re.findall(r"`([^`]+)`", cell)


# ------------------------------------------------------------ stage table

def packages(root=paths.REPO / "harness"):
    """harness/'s packages: its folders with an __init__.py (tests/ has none)."""
    return sorted(f"harness/{d.name}/" for d in root.iterdir() if (d / "__init__.py").is_file())


def stage_problems(readme, pkgs, repo=paths.REPO, timed=steps.TIMED):
    """The README's stage table against the packages, the folders and the laps."""
    rows = md_table(readme, r"\|\s*stage\s*\|\s*folder\s*\|\s*laps\s*\|")
    problems, folders, laps = [], set(), []
    for stage, folder, lap, _what in rows:
        for f in backticked(folder):
            folders.add(f)
            if not (repo / f).is_dir():
                problems.append(f"stage {stage}: folder {f} does not exist")
        laps += [x.strip() for x in lap.split(",") if x.strip()]
    problems += [f"package {p} has no row in the stage table" for p in pkgs if p not in folders]
    if sorted(laps) != sorted(timed):
        problems.append(f"the laps column lists {sorted(laps)}, harness/steps.py times "
                        f"{sorted(timed)}")
    return problems


# ------------------------------------------------------------ lap lists

def lap_list(text):
    """The comma-separated step names after the first mention of harness/steps.py
    (`harness/steps.py`: a, b, c; or [`harness/steps.py`](...): a, b, c)."""
    m = re.search(r"harness/steps\.py`(?:\]\([^)]*\))?:\s*([a-z_,\s]+?)\s*[;)]", text)
    return [x.strip() for x in m.group(1).split(",")] if m else None


def lap_problems(readme, pipeline, timed=steps.TIMED, guest=steps.GUEST):
    problems = []
    for name, text, want in (("README.md", readme, list(timed)),
                             ("docs/pipeline.md", pipeline, list(guest))):
        got = lap_list(text)
        if got != want:
            problems.append(f"{name} lists the laps {got}, harness/steps.py {want}")
    return problems


# ------------------------------------------------------------ KSYMLAB_MODE

def mode_lists(readme, probe_readme, kbuild, makefile):
    """Every place a list of the probe module's modes is spelled, as name -> list."""
    def spelled(text):
        m = re.search(r"KSYMLAB_MODE=([a-z0-9]+(?:\|[a-z0-9]+)+)", text)
        return m.group(1).split("|") if m else None
    table = md_table(probe_readme, r"\|\s*mode\s*\|\s*kernel\s*\|")
    return {"README.md": spelled(readme),
            "probe-module/README.md": [backticked(r[0])[0] for r in table],
            "probe-module/Kbuild": re.findall(r"ifeq \(\$\(KSYMLAB_MODE\),(\w+)\)", kbuild),
            "probe-module/Makefile": spelled(makefile)}


def mode_problems(lists, modes=variants.MODES):
    return [f"{name} lists the modes {got}, harness/prepare/variants.py MODES {list(modes)}"
            for name, got in lists.items() if got != list(modes)]


# ------------------------------------------------------------ options

def documented_options(readme):
    """command -> set of --options, from the README's "Options and exit status" block."""
    block = readme.split("## Options and exit status", 1)[1].split("`--help`", 1)[0]
    out, cmd = {}, None
    for line in block.splitlines():
        m = re.match(r"\s*/usr/bin/python3 -m harness ([\w-]+)", line)
        if m:
            cmd = m.group(1)
            out.setdefault(cmd, set())
        if cmd:
            out[cmd] |= set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", line.split("#")[0]))
    return out


def parser_options(commands=cli.COMMANDS):
    """command -> set of the --options its argparse subparser takes (--help aside)."""
    out = {}
    for name, c in commands.items():
        p = argparse.ArgumentParser(add_help=False)
        c.add_args(p)
        out[name] = {s for a in p._actions for s in a.option_strings if s.startswith("--")}
    return out


def option_problems(documented, parsed):
    problems = [f"the README documents `harness {c}`, which is no command"
                for c in sorted(set(documented) - set(parsed))]
    problems += [f"command `harness {c}` is not in the README's block"
                 for c in sorted(set(parsed) - set(documented))]
    for c in sorted(set(documented) & set(parsed)):
        problems += [f"`harness {c} {o}` is documented but argparse has no such option"
                     for o in sorted(documented[c] - parsed[c])]
    problems += [f"`harness run {o}` is not documented in the README"
                 for o in sorted(parsed.get("run", set()) - documented.get("run", set()))]
    return problems


# ------------------------------------------------------------ cache directories

CACHE_NAMES = {"cache", "cache_dir", "cache_root"}


def _is_cache(node):
    """`cache`, `x.cache`, `Path(cache)` or `paths.cache_root()`: the cache's root."""
    if isinstance(node, ast.Name):
        return node.id in CACHE_NAMES
    if isinstance(node, ast.Attribute):
        return node.attr in CACHE_NAMES
    if isinstance(node, ast.Call):
        f = node.func
        if isinstance(f, ast.Name) and f.id == "Path" and node.args:
            return _is_cache(node.args[0])
        return isinstance(f, ast.Attribute) and f.attr == "cache_root"
    return False


def _literal(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def code_cache_dirs(source):
    """The top-level cache directories one module's code names: `<cache root> / "x"`
    and `cache.lock_path(cache, "x", key)`."""
    out = set()
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Div) and _is_cache(n.left):
            out.add(_literal(n.right))
        elif isinstance(n, ast.Call) and getattr(n.func, "attr", getattr(n.func, "id", "")) \
                == "lock_path" and len(n.args) > 1:
            out.add(_literal(n.args[1]))
    return out - {None}


def harness_cache_dirs(root=paths.REPO / "harness"):
    found = {k.split("/")[0] for k in cache.KINDS}      # "lttng/modules" lives in lttng/
    for f in root.rglob("*.py"):
        if "tests" not in f.relative_to(root).parts:
            found |= code_cache_dirs(f.read_text())
    return found


def documented_cache_dirs(cache_md):
    """The first path component of each `where` of docs/cache.md's table."""
    rows = md_table(cache_md, r"\|\s*kind\s*\|\s*where\s*\|")
    return {backticked(r[1])[0].split("/")[0] for r in rows if backticked(r[1])}


def cache_problems(documented, code):
    return ([f"the cache directory {d}/ is not in docs/cache.md's table"
             for d in sorted(code - documented)] +
            [f"docs/cache.md lists {d}/, which no code creates" for d in sorted(documented - code)])


# ------------------------------------------------------------ costs

COSTS_HEADER = r"\|\s*command\s*\|\s*tests\s*\|\s*cold\s*\|"
FIGURE = re.compile(r"(—|[\d,.]+ (s|GiB|MiB)|[\d,]+)?")


def cost_problems(readme, costs_md, makefile):
    """The README's costs table against costs.md's "Current" one and the Makefile:
    the same rows, one per command, each a make target (or the edit loop), each
    figure a number with its unit or "—" (not measured)."""
    rows = md_table(readme, COSTS_HEADER)
    current = costs_md.split("## Current", 1)[1].split("\n## ", 1)[0]
    problems = [] if rows == md_table(current, COSTS_HEADER) else \
        ["the README's costs table differs from docs/costs.md's Current table"]
    commands = [r[0] for r in rows]
    problems += [f"{c} has {commands.count(c)} rows" for c in sorted(set(commands))
                 if commands.count(c) > 1]
    targets = set(re.findall(r"^([a-z-]+):", makefile, re.M))
    for cmd, *figures in rows:
        m = re.fullmatch(r"`make ([a-z-]+)`", cmd)
        if cmd != "edit loop" and not (m and m.group(1) in targets):
            problems.append(f"{cmd} is no make target")
        problems += [f"{cmd}: {f!r} is neither a figure nor —" for f in figures
                     if not FIGURE.fullmatch(f)]
    return problems


# ------------------------------------------------------------ the tests

def test_the_stage_table_is_the_packages():
    assert stage_problems(README.read_text(), packages()) == []


def test_a_missing_row_a_wrong_folder_and_a_lost_lap_are_found():
    text = README.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| cluster | ")]
    assert len(rows) == 1
    assert stage_problems(text.replace(rows[0] + "\n", ""), packages()) == \
        ["package harness/cluster/ has no row in the stage table"]
    moved = text.replace("| oracles | `harness/oracles/`", "| oracles | `harness/oracle/`")
    assert stage_problems(moved, packages()) == \
        ["stage oracles: folder harness/oracle/ does not exist",
         "package harness/oracles/ has no row in the stage table"]
    lost = text.replace("| lttng, suite |", "| lttng |")
    assert len(stage_problems(lost, packages())) == 1
    assert "harness/steps.py times" in stage_problems(lost, packages())[0]


def test_the_lap_lists_are_the_step_list():
    assert lap_problems(README.read_text(), PIPELINE.read_text()) == []
    # the lists as written out by hand (steps.py's order), not read from steps.py
    assert lap_list(PIPELINE.read_text()) == ["module", "initramfs", "boot", "gdb",
                                              "guest_rest", "drgn", "compare", "lttng", "suite"]


def test_a_lap_list_without_suite_is_found():
    text = PIPELINE.read_text()
    assert ", lttng, suite" in text
    problems = lap_problems(README.read_text(), text.replace(", lttng, suite", ", lttng"))
    assert len(problems) == 1 and problems[0].startswith("docs/pipeline.md lists the laps")


def texts():
    return (README.read_text(), PROBE_README.read_text(), KBUILD.read_text(),
            PROBE_MAKEFILE.read_text())


def test_every_mode_list_is_variants_modes():
    assert mode_problems(mode_lists(*texts())) == []
    assert list(variants.MODES) == ["exports", "kallsyms", "kprobe", "v2"]


def test_a_mode_list_without_v2_is_found():
    readme, probe, kbuild, makefile = texts()
    readme = readme.replace("KSYMLAB_MODE=exports|kallsyms|kprobe|v2",
                            "KSYMLAB_MODE=exports|kallsyms|kprobe")
    kbuild = re.sub(r"else ifeq \(\$\(KSYMLAB_MODE\),v2\)", "else", kbuild)
    got = mode_problems(mode_lists(readme, probe, kbuild, makefile))
    assert [p.split(" lists")[0] for p in got] == ["README.md", "probe-module/Kbuild"]


def test_the_documented_options_are_argparse():
    documented = documented_options(README.read_text())
    assert option_problems(documented, parser_options()) == []
    assert {"--variants", "--kernel", "--no-lttng", "--cluster"} <= documented["run"]
    assert set(documented) == {"run", "build", "key", "variants", "cache", "show", "cluster-certs",
                               "session"}


def test_an_undocumented_and_a_stale_option_are_found():
    text = README.read_text()
    assert " [--kaslr]" in text
    doctored = text.replace(" [--kaslr]", " [--kaslr-seed N]")
    assert option_problems(documented_options(doctored), parser_options()) == [
        "`harness run --kaslr-seed` is documented but argparse has no such option",
        "`harness session --kaslr-seed` is documented but argparse has no such option",
        "`harness run --kaslr` is not documented in the README"]


def test_docs_cache_lists_the_cache_directories():
    code = harness_cache_dirs()
    # written out: what the code creates under $KSYMLAB_CACHE today
    assert code == {"trees", "modules", "initramfs", "guest", "lttng", "apt", "ccache",
                    "tarballs", "cluster-jobs", "kernel-src"}
    assert cache_problems(documented_cache_dirs(CACHE_MD.read_text()), code) == []


def test_a_new_cache_directory_and_a_stale_row_are_found():
    code = "def f(cache):\n    return Path(cache) / \"sboms\" / \"x\"\n"
    assert code_cache_dirs(code) == {"sboms"}
    assert code_cache_dirs("out = paths.cache_root() / 'jobs'\nlock_path(cache, 'k', 1)\n") \
        == {"jobs", "k"}
    text = CACHE_MD.read_text()
    rows = [line for line in text.splitlines() if line.startswith("| cluster job directories |")]
    assert len(rows) == 1
    documented = documented_cache_dirs(text.replace(rows[0] + "\n", ""))
    assert cache_problems(documented, harness_cache_dirs() | {"sboms"}) == [
        "the cache directory cluster-jobs/ is not in docs/cache.md's table",
        "the cache directory sboms/ is not in docs/cache.md's table"]
    assert cache_problems(documented | {"old"}, documented) == \
        ["docs/cache.md lists old/, which no code creates"]


def test_the_costs_tables_agree_one_row_per_command():
    readme = README.read_text()
    assert cost_problems(readme, COSTS_MD.read_text(), MAKEFILE.read_text()) == []
    assert [r[0] for r in md_table(readme, COSTS_HEADER)] == \
        ["`make unit`", "`make run`", "`make check`", "edit loop"]


def test_a_drifted_costs_row_is_found():
    readme, costs_md, makefile = README.read_text(), COSTS_MD.read_text(), MAKEFILE.read_text()
    row = next(line for line in readme.splitlines() if line.startswith("| `make check` |"))
    # a second machine's figure pasted beside the table's own
    twice = readme.replace(row, row + "\n" + row.replace("| — |", "| 2,033 s |", 1))
    assert cost_problems(twice, costs_md, makefile) == [
        "the README's costs table differs from docs/costs.md's Current table",
        "`make check` has 2 rows"]
    unit = next(line for line in readme.splitlines() if line.startswith("| `make unit` |"))
    cell = (unit, "| `make unit` | about 950 |" + unit.split("|", 3)[3])
    assert cost_problems(readme.replace(*cell), costs_md.replace(*cell), makefile) == \
        ["`make unit`: 'about 950' is neither a figure nor —"]
    gone = readme.replace("| `make run` |", "| `make bench-all` |")
    assert "`make bench-all` is no make target" in cost_problems(gone, costs_md, makefile)
