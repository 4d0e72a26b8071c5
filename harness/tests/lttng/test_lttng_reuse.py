"""What an LTTng build read from the tree (harness/lttng/supply/reuse.py): recorded from the
build's Kbuild dependency files and its own build tests, and compared with a later
tree; a difference in anything LTTng reads must forbid reuse, a difference in
anything else must not."""

import json
import os

from harness.lttng.supply import reuse

SYMVERS = ("0x1234abcd\ttask_prio\tvmlinux\tEXPORT_SYMBOL_GPL\t\n"
           "0x0badf00d\tget_pfnblock_flags_mask\tvmlinux\tEXPORT_SYMBOL_GPL\t\n")


def tree(tmp_path, name="linux"):
    t = tmp_path / name
    for rel, text in {"include/linux/sched.h": "struct task_struct;\n",
                      "include/linux/kconfig.h": "#define IS_ENABLED(x) x\n",
                      "include/trace/events/writeback.h": "struct wb_domain *domain,\n",
                      "kernel/sched/core.c": "int task_prio(void) { return 0; }\n",
                      "fs/mount.h": "struct mount;\n",
                      "fs/ext4/ext4.h": "struct ext4_sb_info;\n",
                      "Makefile": "VERSION = 6\n", ".config": "CONFIG_SMP=y\n",
                      "Module.symvers": SYMVERS}.items():
        (t / rel).parent.mkdir(parents=True, exist_ok=True)
        (t / rel).write_text(text)
    return t


def lttng_work(tmp_path, t):
    """A finished LTTng work directory: one object's .cmd (fixdep's format) and a Kbuild
    that tests the tree the way lttng-modules' does."""
    w = tmp_path / "work"
    (w / "src" / "probes").mkdir(parents=True)
    (w / "src" / "probes" / ".lttng-probe-sched.o.cmd").write_text(
        f"cmd_{w}/src/probes/lttng-probe-sched.o := gcc -Wp,-MMD -nostdinc -I./include\n"
        f"\nsource_{w}/src/probes/lttng-probe-sched.o := {w}/src/probes/lttng-probe-sched.c\n"
        f"\ndeps_{w}/src/probes/lttng-probe-sched.o := \\\n"
        "  include/linux/kconfig.h \\\n"
        "    $(wildcard include/config/CPU_BIG_ENDIAN) \\\n"
        f"  {t}/include/linux/sched.h \\\n"
        f"  {w}/src/probes/lttng-tracepoint-event.h \\\n"
        "  /usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h \\\n"
        f"\n{w}/src/probes/lttng-probe-sched.o: $(deps_{w}/src/probes/lttng-probe-sched.o)\n")
    (w / "src" / "Kbuild").write_text(
        "ifneq ($(wildcard $(srctree)/fs/mount.h),)\n  ccflags-y += -DMOUNT\nendif\n"
        "ext4 = $(wildcard $(srctree)/fs/ext4/*.h)\n"
        "missing = $(wildcard $(srctree)/arch/x86/kvm/lapic.h)\n"
        "tp := $(shell grep -s -F 'struct wb_domain *domain,' "
        "$(srctree)/include/trace/events/writeback.h)\n"
        "symvers = $(objtree)/Module.symvers\n")
    return w


def recorded(tmp_path):
    t = tree(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    n = reuse.record(out, lttng_work(tmp_path, t), t)
    return t, out, n


def test_the_record_holds_what_the_build_read_from_the_tree(tmp_path):
    t, out, n = recorded(tmp_path)

    got = json.loads((out / reuse.MANIFEST).read_text())
    assert {"include/linux/kconfig.h", "include/linux/sched.h", "fs/mount.h", "fs/ext4/*.h",
            "arch/x86/kvm/lapic.h", "include/trace/events/writeback.h", "Module.symvers",
            "Makefile", ".config"} <= set(got)
    assert got["arch/x86/kvm/lapic.h"] is None            # tested and absent
    assert "kernel/sched/core.c" not in got               # never read by LTTng
    assert not [k for k in got if "lttng" in k or k.startswith(("/", "usr"))]
    assert n == len(got)
    assert reuse.changed(out, t) == []


def test_a_change_to_what_lttng_reads_forbids_reuse(tmp_path):
    t, out, _ = recorded(tmp_path)
    cases = [("include/linux/sched.h", "struct task_struct { int prio; };\n"),
             ("include/linux/kconfig.h", "#define IS_ENABLED(x) (x)\n"),
             ("include/trace/events/writeback.h", "struct bdi_writeback *wb,\n"),
             ("arch/x86/kvm/lapic.h", "struct kvm_lapic;\n"),        # a test's file appears
             ("fs/ext4/extents.h", "struct ext4_extent;\n"),         # a glob gains a match
             (".config", "CONFIG_SMP=n\n"),
             ("Module.symvers", SYMVERS.replace("0x1234abcd", "0x1234abce")),    # a CRC
             ("Module.symvers", SYMVERS.splitlines(True)[1])]        # an export removed
    for rel, text in cases:
        p = t / rel
        old = p.read_text() if p.exists() else None
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
        assert reuse.changed(out, t) == [rel if rel != "fs/ext4/extents.h" else "fs/ext4/*.h"]
        if old is None:
            p.unlink()
        else:
            p.write_text(old)
    (t / "fs" / "mount.h").unlink()                                  # a test's file goes
    assert reuse.changed(out, t) == ["fs/mount.h"]


def test_a_change_lttng_does_not_read_allows_reuse(tmp_path):
    t, out, _ = recorded(tmp_path)
    (t / "kernel" / "sched" / "core.c").write_text("int task_prio(void) { return 1; }\n")
    # the inner loop's edit: an export's type (modpost's GPL check; LTTng is GPL)
    (t / "Module.symvers").write_text(SYMVERS.replace("EXPORT_SYMBOL_GPL", "EXPORT_SYMBOL"))
    assert reuse.changed(out, t) == []
    assert reuse.changed(tmp_path, t) is None                        # no record there


def test_find_takes_the_newest_finished_build_with_equal_inputs(tmp_path):
    t, rec, _ = recorded(tmp_path)
    cache = tmp_path / "cache"
    modules = cache / "lttng" / "modules"
    for key, done in (("old", True), ("new", True), ("unfinished", True), ("half", False)):
        (modules / key).mkdir(parents=True)
        (modules / key / reuse.MANIFEST).write_text((rec / reuse.MANIFEST).read_text())
        if done:
            (modules / key / "done").write_text(key + "\n")
        reuse.register(cache, "base", key)
    os.utime(reuse.donors_dir(cache, "base") / "old", (1, 1))
    (modules / "unfinished" / "done").unlink()
    (modules / "norecord").mkdir()              # newest, finished, but recorded nothing
    (modules / "norecord" / "done").write_text("norecord\n")
    reuse.register(cache, "base", "norecord")
    assert reuse.find(cache, "base", t)[0] == "new"
    assert reuse.find(cache, "other", t) == (None, [])
    (t / "include" / "linux" / "sched.h").write_text("changed\n")
    assert reuse.find(cache, "base", t) == (None, ["include/linux/sched.h"])


def test_reuse_can_be_turned_off():
    assert reuse.enabled({}) and not reuse.enabled({"KSYMLAB_LTTNG_REUSE": "0"})
