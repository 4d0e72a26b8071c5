"""Exports restricted to LTTng's names (issue 41): the rows that judge what the
loader did with the three test modules, the LTTng modules that link to the
restricted exports, the doctored import and the variant key."""

import subprocess

import pytest

from harness.errors import HarnessError
from harness.lttng.boot import guestlines
from harness.lttng.rows import restricted
from harness.prepare import formods, variants

PAT = "lttng*"
SYMVERS = ("0x0\tstack_trace_save_user\tvmlinux\tEXPORT_SYMBOL_GPL\tmodule:lttng*\n"
           "0x0\tirq_walk_actions\tvmlinux\tEXPORT_SYMBOL_GPL\tmodule:lttng*\n"
           "0x0\tget_task_policy\tvmlinux\tEXPORT_SYMBOL_GPL\tmodule:kvm\n"
           "0x0\tstack_trace_save\tvmlinux\tEXPORT_SYMBOL_GPL\t\n")
# what the 7.2 loader prints (kernel/module/main.c) and the test module's own line
OTHER = ("formods name=ksymlab_formods loaded=0 insmod: can't insert "
         "'/lib/modules/formods/ksymlab_formods.ko': Invalid argument\n"
         "formodsmsg name=ksymlab_formods [ 4.5] ksymlab_formods: module uses symbol "
         "(stack_trace_save_user) from namespace module:lttng*, but does not import it.\n")
IMPOSTOR = ("formods name=lttng_impostor loaded=1\n"
            "formodsmsg name=lttng_impostor [ 4.6] lttng_impostor: stack_trace_save_user saved 4 entries\n"
            "module name=lttng_impostor size=1 addr=0\n")
IMPORT = ("formods name=ksymlab_formods_import loaded=0 insmod: can't insert "
          "'/lib/modules/formods/ksymlab_formods_import.ko': Operation not permitted\n"
          "formodsmsg name=ksymlab_formods_import [ 4.7] ksymlab_formods_import: module tries "
          "to import module namespace: module:lttng*\n")
LTTNG = "module name=lttng_tracer size=1 addr=0\nmodule name=lttng_statedump size=1 addr=0\n"


def guest(text):
    return guestlines.parse(text + guestlines.END + "\n")


def tree(tmp_path, symvers=SYMVERS):
    (tmp_path / "Module.symvers").write_text(symvers)
    return tmp_path


def lbuild(tmp_path, users=("lttng-tracer", "lttng-statedump"), others=("lttng-probe-sched",)):
    """An LTTng build dir whose ko/ holds objects compiled here: `users` call a restricted
    export (an undefined symbol nm reports), `others` do not."""
    ko = tmp_path / "lbuild" / "ko"
    ko.mkdir(parents=True)
    for name in users + others:
        src = tmp_path / f"{name}.c"
        call = "stack_trace_save_user(0, 0)" if name in users else "stack_trace_save(0, 0, 0)"
        src.write_text("extern unsigned stack_trace_save_user(unsigned long *, unsigned);\n"
                       "extern unsigned stack_trace_save(unsigned long *, unsigned, unsigned);\n"
                       f"unsigned f(void) {{ return {call}; }}\n")
        subprocess.run(["cc", "-c", "-o", ko / f"{name}.ko", src], check=True)
    return tmp_path / "lbuild"


def by_key(rows):
    return {r.key: r for r in rows}


def test_no_pattern_no_rows(tmp_path):
    assert restricted.rows("", tree(tmp_path), lbuild(tmp_path), guest(OTHER)) == ()


def test_the_three_outcomes_and_lttng_linking_agree(tmp_path):
    rows = by_key(restricted.rows(PAT, tree(tmp_path), lbuild(tmp_path),
                                  guest(LTTNG + OTHER + IMPOSTOR + IMPORT)))
    assert sorted(rows) == ["restricted/import", "restricted/impostor", "restricted/lttng-links",
                            "restricted/other"]
    assert all(r.agrees for r in rows.values()), {k: r.reason for k, r in rows.items()}
    assert rows["restricted/other"].get("guest") == (
        "ksymlab_formods: module uses symbol (stack_trace_save_user) from namespace "
        "module:lttng*, but does not import it.")
    assert rows["restricted/impostor"].get("guest lsmod") == "lttng_impostor"
    assert rows["restricted/lttng-links"].get("lttng build") == "lttng_statedump, lttng_tracer"
    assert rows["restricted/other"].get("symvers") == "irq_walk_actions, stack_trace_save_user"


@pytest.mark.parametrize("text,key", [
    # a loader that matched exact names only: the impostor refused
    (OTHER + IMPORT + IMPOSTOR.replace("loaded=1", "loaded=0").replace(
        "module name=lttng_impostor size=1 addr=0\n", ""), "restricted/impostor"),
    # the export left unrestricted (EXPORT_SYMBOL_GPL): the other name loads
    (IMPOSTOR + IMPORT + "formods name=ksymlab_formods loaded=1\nmodule name=ksymlab_formods "
     "size=1 addr=0\nformodsmsg name=ksymlab_formods [ 1.0] ksymlab_formods: "
     "stack_trace_save_user saved 4 entries\n", "restricted/other"),
    # refused, but for the other role's reason (the messages swapped)
    (IMPOSTOR + IMPORT + OTHER.replace("module uses symbol (stack_trace_save_user) from "
     "namespace module:lttng*, but does not import it.",
     "module tries to import module namespace: module:lttng*"), "restricted/other"),
    # the import honoured: the module loaded and listed
    (OTHER + IMPOSTOR + "formods name=ksymlab_formods_import loaded=1\nmodule "
     "name=ksymlab_formods_import size=1 addr=0\n", "restricted/import"),
    # insmod says refused, /proc/modules lists it all the same
    (IMPOSTOR + IMPORT + OTHER + "module name=ksymlab_formods size=1 addr=0\n", "restricted/other"),
])
def test_each_wrong_outcome_disagrees_on_its_row_only(tmp_path, text, key):
    rows = by_key(restricted.rows(PAT, tree(tmp_path), lbuild(tmp_path), guest(LTTNG + text)))
    assert [k for k, r in rows.items() if not r.agrees] == [key]
    assert rows[key].reason.startswith("expected ")


def test_an_unrestricted_tree_or_a_missing_load_says_why(tmp_path):
    plain = SYMVERS.replace("\tmodule:lttng*", "\t")
    rows = by_key(restricted.rows(PAT, tree(tmp_path, plain), lbuild(tmp_path),
                                  guest(LTTNG + OTHER + IMPOSTOR + IMPORT)))
    assert rows["restricted/other"].reason == \
        "the tree does not restrict stack_trace_save_user to module:lttng*"
    assert not rows["restricted/lttng-links"].agrees      # no LTTng module uses one then
    rows = by_key(restricted.rows(PAT, tree(tmp_path), tmp_path / "lbuild", guest(LTTNG)))
    assert rows["restricted/impostor"].reason == "the guest did not load the test module"


def test_an_lttng_user_not_loaded_disagrees(tmp_path):
    rows = by_key(restricted.rows(PAT, tree(tmp_path), lbuild(tmp_path),
                                  guest("module name=lttng_tracer size=1 addr=0\n" + OTHER +
                                        IMPOSTOR + IMPORT)))
    r = rows["restricted/lttng-links"]
    assert not r.agrees and r.get("guest lsmod") == "lttng_tracer"


def test_the_import_is_doctored_once_and_only_there(tmp_path):
    ko = tmp_path / "m.ko"
    ko.write_bytes(b"\x7fELF..name=m\0" + formods.IMPORT_AS_BUILT + b"license=GPL\0")
    out = formods.doctor_import(ko)
    assert out.read_bytes() == ko.read_bytes().replace(b"module_lttng*", b"module:lttng*")
    assert len(out.read_bytes()) == len(ko.read_bytes())
    assert formods.doctor_import(ko) == out               # written once
    bad = tmp_path / "n.ko"
    bad.write_bytes(b"\x7fELF..name=n\0license=GPL\0")
    with pytest.raises(HarnessError, match="expected one import_ns=module_lttng"):
        formods.doctor_import(bad)


def test_restricted_to_is_read_and_checked(tmp_path):
    base = (tmp_path / "v.toml")
    text = ('description = "d"\nmodule_mode = "kprobe"\n[kernel]\nline = "7.2"\n'
            'package = "linux-source-7.2"\ntarball = "/usr/src/linux-source-7.2.tar.xz"\n'
            '[build]\nseries = "7.2/v2"\nfragments = ["base.config"]\n[expect]\nbpf_max_arg = 8\n'
            'domain_arg = false\n[lttng]\npatches = "2.16.0/v2"\nversion = "2.16.0"\n')
    base.write_text(text + 'restricted_to = "lttng*"\n')
    (v,) = variants.load(files=[base], directories=[], builtin=tmp_path / "none").values()
    assert v.lttng_restricted == "lttng*"
    base.write_text(text + 'restricted_to = "lttng,kvm"\n')
    with pytest.raises(HarnessError, match="restricted_to 'lttng,kvm'"):
        variants.load(files=[base], directories=[], builtin=tmp_path / "none")
