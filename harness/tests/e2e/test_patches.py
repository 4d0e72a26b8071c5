"""Patches and module sources: checkpatch --strict clean, and every series applies with git am.

Three kernel lines, each with its own tarball, patch root and checkpatch:
6.1 (patches/<series>/), 6.12 (patches/6.12/<series>/) and 7.2 (patches/7.2/<series>/).
"""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.prepare import kernel, ksource, variants
from harness import paths

pytestmark = pytest.mark.e2e

SERIES = ["exports", "kallsyms", "bpf13"]
# every line's series (v2 since its 6.12 port too; 7.2: no bpf13, patches/7.2/exports/series)
LINE_SERIES = {"6.1": SERIES + ["v2"], "6.12": SERIES + ["v2"],
               "7.2": ["exports", "kallsyms", "v2"]}

# kernel line -> (Debian source tarball, patch root); 7.2's tarball is fetched by
# its pin into the cache (harness/prepare/ksource.py) on first use
LINES = {
    "6.1": (Path("/usr/src/linux-source-6.1.tar.xz"), paths.REPO / "patches"),
    "6.12": (Path("/usr/src/linux-source-6.12.tar.xz"), paths.REPO / "patches" / "6.12"),
    "7.2": (None, paths.REPO / "patches" / "7.2"),
}


def tarball(line):
    given = LINES[line][0]
    if given is not None:
        return given
    v = ksource.resolve(variants.VARIANTS[f"stock-{line}"], paths.cache_root())
    return ksource.ensure(v, paths.cache_root())


def series_patches(line, series):
    """The patches of <patch root>/<series>/series, read as a variant reads them."""
    return variants.Variant(name=series, module_mode="exports", description="",
                            series_name=series, patches_root=LINES[line][1]).patches()


_trees = {}


def tree(line):
    """A built stock tree of that line from the cache (extracted tarball, no .git:
    checkpatch's usual setting), built on first use."""
    if line not in _trees:
        _trees[line] = kernel.prepare(variants.select(["stock"], LINES[line][1])[0],
                                      paths.cache_root(), tarball(line))
    return _trees[line]


def checkpatch(tree, *args):
    return subprocess.run(["perl", "scripts/checkpatch.pl", "--strict", *args], cwd=tree.src,
                          capture_output=True, text=True, timeout=600)


def all_patches():
    out = set()
    for line in LINES:
        for s in LINE_SERIES[line]:
            out.update((line, p.resolve()) for p in series_patches(line, s))
    return sorted(out)


@pytest.mark.parametrize("line,patch", all_patches(),
                         ids=lambda x: x.name if isinstance(x, Path) else x)
def test_patch_is_checkpatch_clean(line, patch):
    p = checkpatch(tree(line), str(patch))
    assert "total: 0 errors, 0 warnings, 0 checks" in p.stdout, p.stdout[-3000:]


@pytest.mark.parametrize("line", LINES)
def test_module_sources_are_checkpatch_clean(line):
    files = sorted(str(f) for d in (paths.PROBE_MODULE, paths.GUEST / "shirq",
                                         paths.GUEST / "disks")
                   for f in d.iterdir() if f.suffix in (".c", ".h"))
    p = checkpatch(tree(line), "--no-tree", "-f", *files)
    totals = re.findall(r"^total: .*$", p.stdout, re.M)
    assert len(totals) == len(files)
    assert all(t.startswith("total: 0 errors, 0 warnings, 0 checks") for t in totals), p.stdout


def touched_files(patches):
    files = set()
    for p in patches:
        files.update(re.findall(r"^--- a/(\S+)$", p.read_text(), re.M))
    return files


_pristine = {}


def pristine(line, tmp_path_factory):
    """The files any series of that line modifies, from its tarball in one pass:
    git am needs no more."""
    if line not in _pristine:
        source = tarball(line)
        files = set()
        for s in LINE_SERIES[line]:
            files |= touched_files(series_patches(line, s))
        out = tmp_path_factory.mktemp(f"pristine-{line}")
        top = subprocess.run(["tar", "-tf", str(source)], capture_output=True,
                             text=True, check=True).stdout.split("/", 1)[0]
        subprocess.run(["tar", "-xf", str(source), "-C", str(out),
                        "--strip-components=1", *[f"{top}/{f}" for f in sorted(files)]],
                       check=True)
        _pristine[line] = out
    return _pristine[line]


@pytest.mark.parametrize("line,series", [(line, s) for line in LINES
                                         for s in LINE_SERIES[line]])
def test_series_applies_with_git_am(tmp_path, tmp_path_factory, line, series):
    patches = series_patches(line, series)
    repo = tmp_path / "linux"
    shutil.copytree(pristine(line, tmp_path_factory), repo)
    git = ["git", "-c", "user.name=ksymlab test", "-c", "user.email=test@ksymlab.invalid"]
    subprocess.run(git + ["init", "-q"], cwd=repo, check=True)
    subprocess.run(git + ["add", "-f", "."], cwd=repo, check=True)
    subprocess.run(git + ["commit", "-q", "-m", "base"], cwd=repo, check=True)
    p = subprocess.run(git + ["am", "-q", *map(str, patches)], cwd=repo,
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    log = subprocess.run(["git", "log", "--format=%an|%s"], cwd=repo, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert len(log) == len(patches) + 1
    if series == "exports":
        # the ported RFC patches keep their author
        assert all(l.startswith("Mathieu Desnoyers|") for l in log[:-1])


@pytest.mark.parametrize("line", LINES)
def test_stock_series_is_empty(line):
    assert series_patches(line, "stock") == []
