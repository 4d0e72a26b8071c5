"""check runs its modules on a worker pool (SYMCHECK_JOBS threads, default the online CPUs)
and writes them in file order: the output, the errors on stderr and the exit status must not
depend on the number of threads. Oracle: the same run with SYMCHECK_JOBS=1 (and, for the
distro set, the serial implementation's output kept by tests/golden.sh; see README)."""
import json
import os
import shutil
import subprocess

import pytest

from symcheck_testlib import (BIN, CACHE, FIX, compress, fetched_line,
                               parse_depmod, run, tool)

AUDIT = [os.path.join(FIX, "audit", n + ".ko") for n in ("chain", "caller", "resolver", "kp_instr", "kp_trick")]


def symcheck_jobs(jobs, *args):
    env = dict(os.environ, SYMCHECK_JOBS=str(jobs))
    return subprocess.run([BIN, *map(str, args)], env=env, capture_output=True, timeout=600)


def same_for_all_jobs(*args, jobs=(1, 2, 3, 8)):
    runs = [symcheck_jobs(j, *args) for j in jobs]
    first = runs[0]
    for j, r in zip(jobs[1:], runs[1:]):
        assert (r.returncode, r.stdout, r.stderr) == (first.returncode, first.stdout, first.stderr), \
            f"SYMCHECK_JOBS={j} differs from SYMCHECK_JOBS={jobs[0]} for {args}"
    return first


def mixed_tree(distro, base, n=40):
    """n distro modules installed plain, .xz and .zst, plus one garbage .ko and one truncated
    .ko.xz (each reported on stderr at its place, the run ending with status 2)."""
    moddir = os.path.join(base, "lib", "modules", distro.version, "kernel")
    step = max(1, len(distro.modules) // n)
    for i, m in enumerate(distro.modules[::step][:n]):
        dst = os.path.join(moddir, os.path.relpath(m, distro.modules_dir))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        ext = ("", ".xz", ".zst")[i % 3]
        if ext:
            compress(m, dst + ext, ext[1:])
        else:
            shutil.copyfile(m, dst)
    os.makedirs(os.path.join(moddir, "zz"), exist_ok=True)
    with open(os.path.join(moddir, "aa-garbage.ko"), "wb") as f:
        f.write(b"not an ELF file at all\n")
    good = compress(distro.modules[0], os.path.join(moddir, "zz", "cut.ko.xz"), "xz")
    with open(good, "r+b") as f:
        f.truncate(os.path.getsize(good) // 2)
    return os.path.dirname(moddir)


@pytest.mark.parametrize("mode", [[], ["-q"], ["--json"]], ids=["text", "quiet", "json"])
def test_tree_output_independent_of_threads(distro, tmp_path, mode):
    tree = mixed_tree(distro, tmp_path)
    r = same_for_all_jobs("check", *mode, "--tree", tree, distro.build)
    assert r.returncode == 2
    err = r.stderr.decode().splitlines()
    assert len(err) == 2 and "aa-garbage.ko: not an ELF file" in err[0] and "cut.ko.xz: xz: truncated input" in err[1]
    if mode == ["--json"]:
        doc = json.loads(r.stdout)
        files = [m["file"] for m in doc["modules"]]
        assert files == sorted(files) and len(files) == 40


def test_set_exports_independent_of_threads():
    """A set whose modules export to each other (the audit fixtures), as files and reversed."""
    build = os.path.join(FIX, "fake_build")
    for mods in (AUDIT, AUDIT[::-1]):
        same_for_all_jobs("--json", "check", *mods, build)
        same_for_all_jobs("check", *mods, build)


def test_whole_distro_set_independent_of_threads(distro):
    same_for_all_jobs("--json", "check", "--tree", distro.modules_dir, distro.build, jobs=(1, 2))


# Debian 12's 6.12 kernel as installed (4,230 .ko.xz): what `make bench` times against depmod.
DISTRO612 = os.path.join(CACHE, "distro-6.12")


@pytest.fixture(scope="module")
def distro612():
    return fetched_line("6.12")[1]


@pytest.mark.e2e
def test_distro_612_tree_clean_like_depmod(distro612, tmp_path):
    ver = distro612
    src = os.path.join(DISTRO612, "root", "lib", "modules", ver)
    moddir = os.path.join(tmp_path, "lib", "modules", ver)
    os.makedirs(moddir)
    subprocess.check_call(["cp", "-al", os.path.join(src, "kernel"), os.path.join(moddir, "kernel")])
    for f in ("modules.order", "modules.builtin", "modules.builtin.modinfo"):
        shutil.copyfile(os.path.join(src, f), os.path.join(moddir, f))
    symvers = os.path.join(DISTRO612, "build", "Module.symvers")
    d = run([tool("depmod"), "-b", str(tmp_path), "-e", "-E", symvers, ver])
    assert d.returncode == 0 and parse_depmod(d.stderr) == set(), d.stderr[-2000:]
    r = same_for_all_jobs("check", "-q", "--tree", moddir, symvers, jobs=(1, 2))
    assert r.returncode == 0 and r.stdout.decode() == "4230 module(s) checked, 0 finding(s)\n"


# (files of the set before caller.ko, distro modules after it) -> the provider: what the serial
# implementation (before issue 24's pool and hash index) gave, read from its output.
TWICE = [(("stub", "resolver"), 0, "resolver"), (("resolver", "stub"), 0, "stub"),
         (("stub", "resolver"), 70, "stub"), (("resolver", "stub"), 70, "resolver")]


@pytest.mark.parametrize("order,padding,provider", TWICE)
def test_set_export_named_twice_as_before(order, padding, provider, distro):
    """stub.ko and resolver.ko both export fake_lookup_name, which the build lacks: both join the
    set's exports and the provider is the one binary search of the sorted set hits, which depends
    on the set's size; kept as it was, for every thread count, with binary search (3 modules) and
    with the hash index (73 modules: INDEX_MIN_MODULES)."""
    mods = [os.path.join(FIX, "audit", n + ".ko") for n in order + ("caller",)] + distro.modules[:padding]
    r = same_for_all_jobs("--json", "check", *mods, os.path.join(FIX, "fake_build"))
    caller = [m for m in json.loads(r.stdout)["modules"] if m["name"] == "caller"][0]
    sym = [s for s in caller["symbols"] if s["name"] == "fake_lookup_name"][0]
    assert sym["provider"].endswith("audit/" + provider) and sym["status"] == "ok"


def test_set_crcs_make_a_module_without_versions_a_finding(tmp_path):
    """A build without CRCs: the module without __versions is clean against it alone, but the
    set's exports bring CRCs, so it is checked again after they join (no-versions-section)."""
    (tmp_path / "Module.symvers").write_text("0x00000000\tunrelated\tvmlinux\tEXPORT_SYMBOL\t\n")
    clean = tmp_path / "clean.ko"
    src = tmp_path / "clean.c"
    src.write_text('extern int printk(const char *, ...);\n'
                   'static const char mi[] __attribute__((used, section(".modinfo"))) = "license=GPL";\n'
                   'int init_module(void) { return printk("hi"); }\n')
    subprocess.check_call(["gcc", "-c", "-O2", "-o", str(clean), str(src)])
    resolver = os.path.join(FIX, "audit", "resolver.ko")
    alone = same_for_all_jobs("check", "-q", str(clean), str(tmp_path))
    assert b"no-versions-section" not in alone.stdout
    r = same_for_all_jobs("check", "-q", str(clean), resolver, str(tmp_path))
    assert b"clean.ko: no-versions-section" in r.stdout, r.stdout
