import dataclasses
import os

import pytest

from harness.prepare import derive, kernel, treecopy, variants
from harness.prepare.config import check_config
from harness.prepare.tree import tree_key
from harness.errors import HarnessError
from harness import paths


def known(patches):
    """Every built-in variant, reading its series from the copy `patches`."""
    return {v.name: v for v in variants.select(list(variants.VARIANTS), patches)}


def test_key_is_stable_and_tracks_series(patches, tmp_path):
    tarball = tmp_path / "linux.tar.xz"
    tarball.write_bytes(b"not really a tarball")
    v = known(patches)["exports"]
    k1 = tree_key(v, tarball)
    assert k1 == tree_key(v, tarball)
    assert k1 != tree_key(known(patches)["kallsyms"], tarball)
    patch = patches / "exports" / (patches / "exports" / "series").read_text().split()[0]
    patch.write_text(patch.read_text() + "\n")
    assert tree_key(v, tarball) != k1


def test_key_tracks_tarball(patches, tmp_path):
    a, b = tmp_path / "a.tar.xz", tmp_path / "b.tar.xz"
    a.write_bytes(b"a")
    b.write_bytes(b"b")
    v = variants.VARIANTS["exports"]
    assert tree_key(v, a) != tree_key(v, b)


def test_missing_tarball_is_an_extract_error(tmp_path):
    with pytest.raises(HarnessError) as e:
        tree_key(variants.VARIANTS["exports"], tmp_path / "nope.tar.xz")
    assert e.value.step == "extract" and e.value.exit_status == 10


def test_series_naming_a_missing_patch(patches, tmp_path):
    (patches / "exports" / "series").write_text("0099-does-not-exist.patch\n")
    with pytest.raises(HarnessError) as e:
        known(patches)["exports"].patches()
    assert e.value.step == "patch" and "0099-does-not-exist.patch" in e.value.message


def test_check_config_reports_dropped_options():
    frag = "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"x\"\n"
    good = "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_C=\"x\"\n"
    assert check_config(frag, good) == []
    bad = check_config(frag, "CONFIG_B=y\nCONFIG_C=\"y\"\n")
    assert bad == ["CONFIG_A=y requested, .config has CONFIG_A=n",
                   "CONFIG_B=n requested, .config has CONFIG_B=y",
                   'CONFIG_C="x" requested, .config has CONFIG_C="y"']


def _dot_config(tmp_path, text):
    (tmp_path / ".config").write_text(text)
    return tmp_path


def test_check_fragments_lets_a_later_fragment_take_an_option_back(tmp_path):
    # base.config asks for the 32-bit ABI, nocompat.config (merged after it) takes it back,
    # as merge_config.sh does: the no-COMPAT tree passes, a tree that kept COMPAT does not
    from harness.prepare.config import check_fragments
    base = variants.VARIANTS["stock"]
    assert base.fragments == ("base.config",)
    assert "CONFIG_IA32_EMULATION=y" in (paths.KCONFIG / "base.config").read_text()
    nocompat = dataclasses.replace(base, fragments=("base.config", "nocompat.config"))
    rest = "".join(f"{line}\n" for line in (paths.KCONFIG / "base.config").read_text()
                   .splitlines() if line.startswith("CONFIG_") and "COMPAT" not in
                   line and "IA32" not in line)
    off = rest + "# CONFIG_IA32_EMULATION is not set\n# CONFIG_COMPAT is not set\n"
    on = rest + "CONFIG_IA32_EMULATION=y\nCONFIG_COMPAT=y\n"
    check_fragments(nocompat, _dot_config(tmp_path, off), tmp_path / "log")
    check_fragments(base, _dot_config(tmp_path, on), tmp_path / "log")
    for v, text in ((nocompat, on), (base, off)):
        with pytest.raises(HarnessError) as e:
            check_fragments(v, _dot_config(tmp_path, text), tmp_path / "log")
        assert e.value.step == "configure" and "CONFIG_IA32_EMULATION" in e.value.message


def test_unknown_variant_is_usage_error():
    with pytest.raises(HarnessError) as e:
        variants.select(["exports", "nope"])
    assert e.value.exit_status == 2


# Derived builds: which cached tree a variant may start from.

def fake_tree(cache, variant, tarball, complete=True):
    """A cached tree directory for `variant`, with a manifest when `complete`."""
    key = tree_key(variant, tarball)
    (cache / "trees" / key / "linux").mkdir(parents=True)
    if complete:
        (cache / "trees" / key / "manifest.json").write_text(
            f'{{"key": "{key}", "variant": "{variant.name}"}}\n')
    return key


def test_base_is_longest_cached_prefix(patches, cache, tarball):
    V = known(patches)
    stock = fake_tree(cache, V["stock"], tarball)
    exports = fake_tree(cache, V["exports"], tarball)
    base = derive.find_base(V["bpf13"], tarball, cache)
    assert (base.key, base.variant, base.n_patches) == (exports, "exports", 7)
    assert base.src == cache / "trees" / exports / "linux"
    base = derive.find_base(V["kallsyms"], tarball, cache)
    assert (base.key, base.n_patches) == (stock, 0)
    assert derive.find_base(V["stock"], tarball, cache) is None      # no proper prefix of nothing
    # a variant is never its own base
    assert derive.find_base(V["exports"], tarball, cache).key == stock


def test_incomplete_tree_is_never_a_base(patches, cache, tarball):
    V = known(patches)
    stock = fake_tree(cache, V["stock"], tarball)
    fake_tree(cache, V["exports"], tarball, complete=False)
    assert derive.find_base(V["bpf13"], tarball, cache).key == stock
    (cache / "trees" / stock / "manifest.json").unlink()
    assert derive.find_base(V["bpf13"], tarball, cache) is None


def test_different_fragments_or_tarball_never_a_base(patches, cache, tarball, tmp_path):
    V = known(patches)
    fake_tree(cache, V["stock"], tarball)
    fake_tree(cache, V["exports"], tarball)
    # debug has the exports series but adds debug.config: neither tree fits
    assert derive.find_base(V["debug"], tarball, cache) is None
    other = tmp_path / "other.tar.xz"
    other.write_bytes(b"another tarball")
    assert derive.find_base(V["bpf13"], other, cache) is None
    # a stock tree with debug's fragments is a base for debug
    stock_debug = variants.Variant("stock", "kprobe", "", series_name="stock",
                                   fragments=V["debug"].fragments, patches_root=patches)
    key = fake_tree(cache, stock_debug, tarball)
    assert derive.find_base(V["debug"], tarball, cache).key == key


def test_no_base_when_remaining_patch_touches_kconfig(patches, cache, tarball):
    V = known(patches)
    fake_tree(cache, V["exports"], tarball)
    extra = patches / "bpf13" / "0009-kconfig.patch"
    extra.write_text("diff --git a/kernel/bpf/Kconfig b/kernel/bpf/Kconfig\n"
                     "--- a/kernel/bpf/Kconfig\n+++ b/kernel/bpf/Kconfig\n")
    series = patches / "bpf13" / "series"
    series.write_text(series.read_text() + "0009-kconfig.patch\n")
    assert derive.find_base(V["bpf13"], tarball, cache) is None
    assert derive._config_inputs_touched([extra]) == ["kernel/bpf/Kconfig"]
    assert derive._config_inputs_touched(V["exports"].patches()) == []


def test_build_order_puts_bases_first(patches):
    order = kernel.build_order(variants.select(variants.DEFAULT, patches))
    assert [v.name for v in order] == ["stock", "kallsyms", "exports", "bpf13"]
    order = kernel.build_order(variants.select(["bpf13", "debug", "exports"], patches))
    assert [v.name for v in order] == ["debug", "exports", "bpf13"]


def test_objtool_cmd_paths_follow_the_copy(tmp_path):
    old = tmp_path / "trees" / "aaaa" / "linux"
    new = tmp_path / "trees" / "bbbb" / "linux"
    obj = new / "tools" / "objtool"
    (obj / "arch" / "x86").mkdir(parents=True)
    cmd = obj / ".check.o.cmd"
    cmd.write_text(f"cmd_{old}/tools/objtool/check.o := gcc -I{old}/tools/include -c check.c\n"
                   f"deps_{old}/tools/objtool/check.o := \\\n  {old}/tools/include/x.h\n")
    nested = obj / "arch" / "x86" / ".decode.o.cmd"
    nested.write_text(f"cmd_{old}/tools/objtool/arch/x86/decode.o := gcc\n")
    source = obj / "check.c"                     # not a build record: left alone
    source.write_text(f"/* {old} */\n")
    untouched = obj / ".elf.o.cmd"
    untouched.write_text("cmd_elf.o := gcc\n")
    os.utime(cmd, ns=(1_000_000_000, 1_234_567_891_000))
    done = treecopy.rewrite_tool_paths(new, old, new)
    assert sorted(done) == sorted([cmd, nested])
    assert str(old) not in cmd.read_text() and cmd.read_text().count(str(new)) == 4
    assert nested.read_text() == f"cmd_{new}/tools/objtool/arch/x86/decode.o := gcc\n"
    assert source.read_text() == f"/* {old} */\n"
    assert untouched.read_text() == "cmd_elf.o := gcc\n"
    assert cmd.stat().st_mtime_ns == 1_234_567_891_000     # make must not see a new record


def test_copy_failure_is_a_build_error_and_removes_the_tree(cache):
    trees = cache / "trees"
    (trees / "base").mkdir(parents=True)
    (trees / "base" / "manifest.json").write_text("{}")      # complete, but linux/ is missing
    root = trees / "derived"
    root.mkdir()
    base = derive.Base("base", "stock", trees / "base" / "linux", 0)
    with pytest.raises(HarnessError) as e:
        treecopy.copy_base(base, root, root / "linux")
    assert e.value.step == "build" and "copying base tree base (stock)" in e.value.message
    assert len(e.value.one_line().splitlines()) == 1
    assert not root.exists()


def test_vanished_base_is_not_copied(cache):
    trees = cache / "trees"
    (trees / "base" / "linux").mkdir(parents=True)           # no manifest: being removed
    root = trees / "derived"
    root.mkdir()
    base = derive.Base("base", "stock", trees / "base" / "linux", 0)
    assert treecopy.copy_base(base, root, root / "linux") is None
    assert not (root / "linux").exists()


def test_extract_keeps_the_member_list_in_its_own_file(tmp_path):
    """tar -v's list goes to --index-file, not the step log; the list equals tar -t's."""
    import subprocess
    from harness.prepare import tree
    top = tmp_path / "src" / "linux-6.1"
    (top / "kernel" / "sched").mkdir(parents=True)
    (top / "empty").mkdir()
    (top / "Makefile").write_text("all:\n")
    (top / "kernel" / "sched" / "core.c").write_text("int x;\n")
    (top / "link").symlink_to("Makefile")
    tarball = tmp_path / "linux.tar.xz"
    subprocess.run(["tar", "-C", top.parent, "-cJf", tarball, top.name], check=True)
    members = tmp_path / "cache" / "tarballs" / "abc.members"
    root = tmp_path / "cache" / "trees" / "k"
    tree.extract(tarball, root / "linux", root / "extract.log", members)
    assert (root / "linux" / "kernel" / "sched" / "core.c").read_text() == "int x;\n"
    assert members.read_text() == "Makefile\nkernel/sched/core.c\nlink\n"
    assert sorted(p.name for p in members.parent.iterdir()) == ["abc.members"]
    log = (root / "extract.log").read_text().splitlines()
    assert len(log) == 1 and log[0].startswith("$ tar -xf ") and "--index-file=" in log[0]
    fresh = tmp_path / "other-cache"
    assert treecopy.tarball_members(fresh, tarball) == frozenset(members.read_text().split())
    # listed once: the next extract is not verbose
    tree.extract(tarball, root / "again", root / "again.log", members)
    assert "-v" not in (root / "again.log").read_text().split()
