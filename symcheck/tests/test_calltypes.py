"""symcheck calltypes: the kernel's DWARF type of every name a module set resolves at run time
against the type the module stores the address in.

The oracle is hand-written: each fixture under tests/fixtures/calltypes/ states in "expect:" lines
the verdict its C declarations call for (kernel.c declares the kernel side), and the doctored
modules carry the plausible bugs (a parameter too many, a wrong return type, a data symbol called
as a function, ...). The bad-input tests doctor the files themselves."""
import json
import os
import re
import shutil
import struct
import subprocess

import pytest

from symcheck_testlib import FIX, HERE, symcheck, elf_sections

SRC = os.path.join(HERE, "fixtures", "calltypes")
KOS = os.path.join(FIX, "calltypes")
VMLINUX = os.path.join(KOS, "vmlinux")
SOURCES = sorted(f[:-2] for f in os.listdir(SRC) if f.endswith(".c") and f != "kernel.c")


def ko(name):
    return os.path.join(KOS, name + ".ko")


def modname(src):
    with open(os.path.join(SRC, src + ".c")) as f:
        return re.search(r'FAKE_MODINFO\("([^"]+)"\)', f.read()).group(1)


def expectations(src):
    """{(module, name): (status, problem)} from the fixture's expect: lines."""
    out = {}
    with open(os.path.join(SRC, src + ".c")) as f:
        for line in f:
            m = re.match(r"\s*\*?\s*expect: (\S+) (\S+)(?: (\S+))?\s*$", line)
            if m:
                out[(modname(src), m.group(1))] = (m.group(2), m.group(3))
    return out


def calltypes(*args, rc):
    r = symcheck("--json", "calltypes", *args)
    assert r.returncode == rc, (r.returncode, r.stderr)
    assert r.stderr == ""
    return json.loads(r.stdout)


def verdicts(doc):
    return {(i["module"], i["name"]): (i["status"], i["problem"]) for i in doc["items"]}


def test_every_fixture_gets_the_verdict_its_declarations_call_for():
    want = {}
    for src in SOURCES:
        want.update(expectations(src))
    assert len(want) >= 15
    doc = calltypes(*[ko(s) for s in SOURCES], VMLINUX, rc=1)
    assert verdicts(doc) == want
    counts = {s: sum(1 for v in want.values() if v[0] == s)
              for s in ("match", "qualifiers", "mismatch", "unchecked")}
    assert {k: doc[k] for k in counts} == counts
    assert doc["modules"] == len(SOURCES)


def test_the_types_shown_are_the_declared_ones():
    doc = calltypes(ko("good"), ko("extra_param"), ko("kind_confusion"), VMLINUX, rc=1)
    items = {(i["module"], i["name"]): i for i in doc["items"]}
    prio = items[("good", "task_prio")]
    assert prio["kernel_type"] == "int (const struct task_struct *)"
    assert prio["module_type"] == "int (struct task_struct *)"
    assert prio["receiver"] == "task_prio_sym" and prio["kernel_kind"] == "function"
    wb = items[("good", "global_wb_domain")]
    assert wb["receiver"] == "wb_sym" and wb["kernel_kind"] == "object"   # a static local (wb_sym.N)
    assert items[("good", "alloc_thing")]["kernel_type"] == "void * (gfp_t)"
    extra = items[("extra_param", "irq_to_desc")]
    assert extra["module_type"] == "struct irq_desc * (unsigned int, int)"
    assert "takes 1 parameter(s), the module passes 2" in extra["detail"]
    assert items[("kind_confusion", "block_class")]["kernel_type"] == "struct class"
    assert items[("good", "irq_to_desc")]["detail"] is None


@pytest.mark.parametrize("src", ["extra_param", "wrong_return", "kind_confusion"])
def test_each_doctored_module_alone_fails(src):
    doc = calltypes(ko(src), VMLINUX, rc=1)
    assert verdicts(doc) == expectations(src)


def test_a_clean_module_exits_0_and_the_text_names_every_status():
    r = symcheck("calltypes", ko("good"), VMLINUX)
    assert r.returncode == 0, r.stderr
    assert "task_prio" in r.stdout and "qualifiers (param-type)" in r.stdout
    assert "9 by-name resolution(s) in 1 module(s): 7 match, 1 differ in qualifiers only, " \
           "0 mismatched, 1 unchecked" in r.stdout


def test_a_name_handed_to_another_modules_resolver_needs_that_module_in_the_set():
    assert calltypes(ko("caller"), VMLINUX, rc=0)["items"] == []
    doc = calltypes(ko("caller"), ko("resolver"), VMLINUX, rc=1)
    assert verdicts(doc) == {**expectations("caller"), **expectations("resolver")}
    item = next(i for i in doc["items"] if i["module"] == "ct_caller")
    assert item["via"] == "ct_lookup_name (ct_resolver)"


def test_tree_mode_reads_every_module_under_the_directory(tmp_path):
    for s in ("good", "wrong_return"):
        shutil.copy(ko(s), tmp_path / (s + ".ko"))
    doc = calltypes("--tree", tmp_path, VMLINUX, rc=1)
    assert verdicts(doc) == {**expectations("good"), **expectations("wrong_return")}


def test_a_build_directory_means_its_vmlinux(tmp_path):
    shutil.copy(VMLINUX, tmp_path / "vmlinux")
    assert verdicts(calltypes(ko("extra_param"), tmp_path, rc=1)) == expectations("extra_param")


def test_a_module_without_dwarf_is_unchecked_not_passed(tmp_path):
    stripped = tmp_path / "wrong_return.ko"
    subprocess.run(["objcopy", "--strip-debug", ko("wrong_return"), stripped], check=True)
    doc = calltypes(stripped, VMLINUX, rc=0)
    assert {v for v in verdicts(doc).values()} == {("unchecked", "no-module-dwarf")}
    assert doc["unchecked"] == 2 and doc["mismatch"] == 0


def one_line_error(args, needle):
    r = symcheck("calltypes", *args)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert r.stdout == ""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("symcheck: ") and needle in lines[0], r.stderr


def test_bad_input_is_one_line_and_exit_2(tmp_path):
    nodwarf = tmp_path / "vmlinux"
    subprocess.run(["objcopy", "--strip-debug", VMLINUX, nodwarf], check=True)
    one_line_error([ko("good"), nodwarf], "no DWARF (.debug_info)")
    one_line_error([ko("good"), tmp_path / "missing"], "missing")
    one_line_error([ko("good")], "expected FILE.ko")
    one_line_error([ko("good"), tmp_path], "vmlinux")          # a directory without vmlinux
    one_line_error(["--tree", tmp_path], "expected FILE.ko")
    one_line_error([ko("good"), "--bogus", VMLINUX], "unknown option --bogus")


def doctor_debug_reloc(src, dst, new_type=None, new_offset=None):
    """Copy src to dst with the first relocation of .rela.debug_info changed."""
    data = bytearray(open(src, "rb").read())
    off = elf_sections(src)[".rela.debug_info"][0]
    r_offset, r_info, r_addend = struct.unpack_from("<QQq", data, off)
    if new_type is not None:
        r_info = (r_info & ~0xffffffff) | new_type
    if new_offset is not None:
        r_offset = new_offset
    struct.pack_into("<QQq", data, off, r_offset, r_info, r_addend)
    open(dst, "wb").write(bytes(data))


def test_a_corrupt_debug_relocation_is_one_line(tmp_path):
    doctor_debug_reloc(ko("good"), tmp_path / "a.ko", new_type=2)          # R_X86_64_PC32
    one_line_error([tmp_path / "a.ko", VMLINUX], "unsupported relocation type 2")
    doctor_debug_reloc(ko("good"), tmp_path / "b.ko", new_offset=1 << 40)
    one_line_error([tmp_path / "b.ko", VMLINUX], "out of range")


def test_the_help_lists_the_command():
    r = symcheck("--help")
    assert "calltypes FILE.ko [FILE.ko...] BUILD" in r.stdout


def test_members_of_static_structures_and_arrays_are_receivers():
    doc = calltypes(ko("aggregate"), VMLINUX, rc=0)
    assert verdicts(doc) == expectations("aggregate")
    assert {i["name"]: i["receiver"] for i in doc["items"]} == {
        "task_prio": "ops.prio", "irq_to_desc": "ops.descs[1]", "block_class": "table[2].addr"}
