"""Patches and module sources: checkpatch --strict clean, and every series applies with git am."""

import re
import shutil
import subprocess

import pytest

from harness import kernel, paths, variants

pytestmark = pytest.mark.e2e

SERIES = ["exports", "kallsyms", "bpf13"]


@pytest.fixture(scope="module")
def tree():
    """A built tree from the cache (extracted tarball, no .git: checkpatch's usual setting)."""
    return kernel.prepare(variants.VARIANTS["stock"], paths.cache_root(), paths.default_tarball())


def checkpatch(tree, *args):
    return subprocess.run(["perl", "scripts/checkpatch.pl", "--strict", *args], cwd=tree.src,
                          capture_output=True, text=True, timeout=600)


def all_patches():
    files = set()
    for s in SERIES:
        files.update(p.resolve() for p in variants.VARIANTS[s].patches())
    return sorted(files)


@pytest.mark.parametrize("patch", all_patches(), ids=lambda p: p.name)
def test_patch_is_checkpatch_clean(tree, patch):
    p = checkpatch(tree, str(patch))
    assert "total: 0 errors, 0 warnings, 0 checks" in p.stdout, p.stdout[-3000:]


def test_module_sources_are_checkpatch_clean(tree):
    files = sorted(str(f) for f in paths.PROBE_MODULE.iterdir() if f.suffix in (".c", ".h"))
    p = checkpatch(tree, "--no-tree", "-f", *files)
    totals = re.findall(r"^total: .*$", p.stdout, re.M)
    assert len(totals) == len(files)
    assert all(t.startswith("total: 0 errors, 0 warnings, 0 checks") for t in totals), p.stdout


def touched_files(patches):
    files = set()
    for p in patches:
        files.update(re.findall(r"^--- a/(\S+)$", p.read_text(), re.M))
    return files


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """The files any series modifies, from the tarball in one pass: git am needs no more."""
    files = set()
    for s in SERIES:
        files |= touched_files(variants.VARIANTS[s].patches())
    out = tmp_path_factory.mktemp("pristine")
    top = subprocess.run(["tar", "-tf", str(paths.default_tarball())], capture_output=True,
                         text=True, check=True).stdout.split("/", 1)[0]
    subprocess.run(["tar", "-xf", str(paths.default_tarball()), "-C", str(out),
                    "--strip-components=1", *[f"{top}/{f}" for f in sorted(files)]], check=True)
    return out


@pytest.mark.parametrize("series", SERIES)
def test_series_applies_with_git_am(tmp_path, pristine, series):
    patches = variants.VARIANTS[series].patches()
    repo = tmp_path / "linux"
    shutil.copytree(pristine, repo)
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
