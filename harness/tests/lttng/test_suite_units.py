"""LTTng's own suite, host side without a guest: which scripts are kernel tests, how
a suite guest's TAP port becomes points (a fault mid-script, a script never run),
and the report's table (harness/lttng/suite/)."""

from harness.lttng.suite import guest, suite_md, scripts


def _script(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_kernel_scripts_are_the_kernel_folder_and_the_tools_tests_that_drive_the_kernel(
        tmp_path):
    t = tmp_path / "tests" / "regression"
    _script(t / "kernel" / "test_event_basic", "#!/bin/bash\ncreate_lttng_session_ok\n")
    _script(t / "kernel" / "test_helper.py", "#!/usr/bin/python3\n")
    _script(t / "kernel" / "select_poll_epoll.c", "int main(void) { return 0; }\n")
    _script(t / "tools" / "snapshots" / "test_kernel",
            "#!/bin/bash\nlttng_enable_kernel_event $S sched_switch\n")
    _script(t / "tools" / "snapshots" / "test_ust", "#!/bin/bash\nenable_ust_lttng_event\n")
    _script(t / "tools" / "tracker" / "test_event_tracker",
            "#!/bin/bash\n$LTTNG track -k --pid 1\n")
    assert scripts.kernel_scripts(tmp_path) == [
        "regression/kernel/test_event_basic", "regression/tools/snapshots/test_kernel",
        "regression/tools/tracker/test_event_tracker"]


def test_the_root_lists_lttng_ci_runs_after_make_check_add_their_kernel_scripts(tmp_path):
    t = tmp_path / "tests"
    _script(t / "regression" / "kernel" / "test_event_basic", "#!/bin/bash\nlttng -k\n")
    _script(t / "destructive" / "metadata-regeneration",
            "#!/bin/bash\nfunction test_kernel_local\n{\n lttng_enable_kernel_event\n}\n")
    _script(t / "regression" / "tools" / "streaming" / "test_high_throughput_limits",
            "#!/bin/bash\nenable_ust_lttng_event_ok\n")
    (t / "root_regression").write_text("regression/tools/streaming/test_high_throughput_limits\n")
    (t / "root_destructive_tests").write_text("destructive/metadata-regeneration\n")
    # the UST-only root test is no kernel script; the kernel one is, though not test_*
    assert scripts.kernel_scripts(tmp_path) == [
        "regression/kernel/test_event_basic", "destructive/metadata-regeneration"]
    (t / "root_destructive_tests").unlink()
    assert scripts.kernel_scripts(tmp_path) == ["regression/kernel/test_event_basic"]


PORT_1 = """\
KSYMLAB-SUITE-BEGIN regression/kernel/test_a
1..2
ok 1 - one
ok 2 - two
KSYMLAB-SUITE-END regression/kernel/test_a rc=0
KSYMLAB-SUITE-BEGIN regression/kernel/test_b
1..3
ok 1 - one
"""
PORT_2 = """\
KSYMLAB-SUITE-BEGIN regression/kernel/test_c
1..1
not ok 1 - slow
KSYMLAB-SUITE-END regression/kernel/test_c rc=124
"""
SCRIPTS = ["regression/kernel/test_a", "regression/kernel/test_b", "regression/kernel/test_c",
           "regression/kernel/test_d"]


def test_a_panic_mid_script_keeps_what_ran_and_the_next_guest_goes_on():
    boots = [guest.Boot(tuple(SCRIPTS), PORT_1, "guest panic: Kernel panic - not syncing"),
             guest.Boot(tuple(SCRIPTS[2:]), PORT_2, "guest hang: no console output for 180 s")]
    a, b, c, d = guest.results(boots, SCRIPTS, 300)
    assert [p.result for p in a.points] == ["pass", "pass"] and a.ended == "complete"
    assert [p.result for p in b.points] == ["pass", "fail", "fail"]
    assert b.points[1].reason == "TAP stream cut short: guest panic: Kernel panic - not syncing"
    assert c.ended == "timeout after 300 s" and c.points[0].result == "fail"
    # test_d never began: one failed point naming the last fault
    assert [(p.name, p.result) for p in d.points] == [("regression/kernel/test_d:0 (no TAP)",
                                                       "fail")]
    assert "not run: guest hang" in d.points[0].reason


def test_a_script_that_traps_the_timeouts_term_still_ended_by_the_timeout():
    # clear/test_kernel's trap exits 16 (its points short) after the 300 s TERM; a
    # script as long that ends by itself, and one far shorter, are not timeouts
    port = ("KSYMLAB-SUITE-BEGIN regression/tools/x\n1..3\nok 1 - a\n"
            "KSYMLAB-SUITE-END regression/tools/x rc=16\n")
    for secs, how in ((300.4, "timeout after 300 s (exit 16)"), (12.0, "exit 16")):
        b = guest.Boot(("regression/tools/x",), port, seconds=(("regression/tools/x", secs),))
        (x,) = guest.results([b], ["regression/tools/x"], 300)
        assert x.ended == how
        assert x.points[1].reason == f"TAP stream cut short: {how}"


def test_a_begin_after_lost_bytes_ends_the_script_before_it_unended():
    # the TAP port of a 2-CPU guest whose END marker lost its tail (stop 50)
    port = ("KSYMLAB-SUITE-BEGIN a/test_one\n1..2\nok 1 first\nok 2 second\n"
            "KSYMLAB-SUITE-ENKSYMLAB-SUITE-BEGIN b/test_two\n1..1\nok 1 other\n"
            "KSYMLAB-SUITE-END b/test_two rc=0\n")
    got = guest.blocks(port)
    assert got["a/test_one"] == ("1..2\nok 1 first\nok 2 second\nKSYMLAB-SUITE-EN", None)
    assert got["b/test_two"] == ("1..1\nok 1 other", 0)


def test_blocks_and_how_a_script_ended():
    got = guest.blocks(PORT_1)
    assert got["regression/kernel/test_a"] == ("1..2\nok 1 - one\nok 2 - two", 0)
    assert got["regression/kernel/test_b"] == ("1..3\nok 1 - one", None)
    assert guest.ended(0, 300) == "exit 0"
    assert guest.ended(124, 300) == "timeout after 300 s"
    assert guest.ended(137, 300) == "killed by signal 9"
    assert guest.ended(1, 300) == "exit 1"


def test_the_report_table_counts_points_per_script_and_lists_every_failure():
    entry = {"lttng_version": "2.13.18", "kernel": "6.12.118",
             "tests": [{"name": "kernel/test_a:1 one", "result": "pass", "reason": ""},
                       {"name": "kernel/test_a:2 two", "result": "fail", "reason": "boom"},
                       {"name": "kernel/test_a:3", "result": "skip", "reason": "no uprobe"}]}
    variants = {"exports-6.12": {"lttng_suite": entry}, "bpf13": {}}
    rep = {"lttng_suite": suite_md.collect(variants)}
    assert list(rep["lttng_suite"]) == ["exports-6.12"]
    out = []
    suite_md.markdown(rep, out)
    assert "| `kernel/test_a` | 1/1/1 |" in out
    assert "- exports-6.12: `kernel/test_a:2 two`: boom" in out
    assert any("exports-6.12 LTTng 2.13.18 on 6.12.118." in line for line in out)
    # each guest's clocksource once, in boot order; "?" where a console named none
    entry["clocks"] = ["tsc", "refined-jiffies", "tsc", None]
    out = []
    suite_md.markdown(rep, out)
    assert any("on 6.12.118 (clock: tsc, refined-jiffies, ?)." in line for line in out)
    empty = []
    suite_md.markdown({"lttng_suite": {}}, empty)
    assert empty == []


def test_the_guest_takes_only_the_listed_parts_of_host_packages():
    from harness.lttng.suite import rootfs
    got = rootfs.package_files("binutils", ("/usr/bin/addr2line",))
    assert list(got) == ["/usr/bin/addr2line"]
    py = rootfs.package_files("libpython3.11-minimal", rootfs.PYLIB)
    assert "/usr/lib/python3.11/subprocess.py" in py
    assert not [g for g in py if "__pycache__" in g]
    # /bin merges into /usr/bin: both paths (scripts call /bin/true)
    assert {"/usr/bin/bash", "/bin/bash"} <= set(rootfs.package_files("bash"))


def test_copies_of_one_host_file_are_packed_once(tmp_path):
    from harness.lttng.supply import image
    a = tmp_path / "perl"
    a.write_text("x")
    (tmp_path / "perl5").hardlink_to(a)
    files = {"/usr/bin/perl": a, "/usr/bin/perl5.36.0": tmp_path / "perl5"}
    text = image.cpio_list(files, (), link_copies=True)
    assert f"file /usr/bin/perl {a} 0644 0 0" in text
    assert "slink /usr/bin/perl5.36.0 /usr/bin/perl 0777 0 0" in text
    plain = image.cpio_list(files, ())
    assert "slink" not in plain.split("busybox")[-1] and plain.count("file /usr/bin/perl") == 2


def _lttng_run_failing(monkeypatch, tmp_path, where):
    """rows_or_failure with every host step stubbed and `where` raising a fault."""
    from types import SimpleNamespace
    from harness.errors import HarnessError
    from harness.lttng import step
    out = tmp_path / "build"
    out.mkdir(exist_ok=True)
    (out / "build.log").write_text("")

    def fault(*a, **k):
        raise HarnessError("oops", "BUG: kernel NULL pointer dereference")
    steps = {"build": lambda *a, **k: out, "boot": lambda *a, **k: None}
    steps[where] = fault
    monkeypatch.setattr(step.modbuild, "build", steps["build"])
    monkeypatch.setattr(step.modbuild, "publish", lambda *a: out)
    monkeypatch.setattr(step.symaudit, "read", lambda *a: ({}, {}, None))
    monkeypatch.setattr(step.symaudit, "summary", lambda *a: {})
    monkeypatch.setattr(step.fetch, "userspace_root", lambda *a: tmp_path)
    monkeypatch.setattr(step.image, "build", lambda *a, **k: out / "build.log")
    monkeypatch.setattr(step.session, "boot", steps["boot"])
    variant = SimpleNamespace(name="shipped", lttng_series="shipped", lttng_kallsyms=True,
                              lttng_version="2.13.9", lttng_restricted="")
    opts = SimpleNamespace(cache=tmp_path, scenario=None)
    return step.rows_or_failure(variant, None, tmp_path / "v", opts)


def test_a_boot_that_faults_keeps_the_build_for_the_suite(monkeypatch, tmp_path):
    rows, facts = _lttng_run_failing(monkeypatch, tmp_path, "boot")
    assert facts["error"] == "oops" and facts["build_dir"] == str(tmp_path / "build")
    assert rows[0].key == "boot" and rows[0].disagrees
    # a build that failed leaves nothing to judge
    rows, facts = _lttng_run_failing(monkeypatch, tmp_path, "build")
    assert facts["error"] == "oops" and "build_dir" not in facts


def test_scripts_that_cannot_run_are_listed_once_per_reason_with_their_variants():
    bail = {"script": "tools/filtering/test_valid_filter", "cannot_run": "No UST binary"}
    ran = {"script": "kernel/test_a", "cannot_run": None}
    rep = {"lttng_suite": {
        "exports": {"tests": [{"name": "kernel/test_a:1", "result": "pass", "reason": ""}],
                    "scripts": [bail, ran]},
        "stock": {"tests": [{"name": "kernel/test_a:1", "result": "pass", "reason": ""}],
                  "scripts": [bail, ran]}}}
    assert suite_md.cannot_run(rep) == [("tools/filtering/test_valid_filter", "No UST binary",
                                       ["exports", "stock"])]
    out = []
    suite_md.markdown(rep, out)
    assert "- `tools/filtering/test_valid_filter` on exports, stock: No UST binary" in out
    # its failing points are one line per variant; another script's are listed
    for e in rep["lttng_suite"].values():
        e["tests"] += [{"name": f"tools/filtering/test_valid_filter:{i} (not run)",
                        "result": "fail", "reason": "TAP stream cut short"} for i in (2, 3)]
    rep["lttng_suite"]["stock"]["tests"].append(
        {"name": "kernel/test_a:2 two", "result": "fail", "reason": "boom"})
    out = []
    suite_md.markdown(rep, out)
    assert "5 failing point(s):" in out
    assert "- stock: `kernel/test_a:2 two`: boom" in out
    assert "- exports: 2 point(s) of `tools/filtering/test_valid_filter`, which cannot run " \
           "here (above)" in out
    assert not any("test_valid_filter:2" in line for line in out)
    assert "test_valid_filter" in suite_md.html(rep, lambda head, rows, classes=None: str(rows))


def test_a_program_a_script_runs_from_libs_is_found_there(tmp_path):
    """test_userspace_probe runs testapp/userspace-probe-elf-binary/.libs/<name>, where a
    libtool build keeps a program that links the tree's libfoo; built with -no-install
    the program is one directory up. It failed every enable step on every variant
    (file not found) until the guest got it in .libs/ too. Only an ELF program whose
    directory has a .libs/ is placed; a script, a library or a program already in
    .libs/ is left alone."""
    from harness.lttng.suite import rootfs
    elf = tmp_path / "prog"
    elf.write_bytes(b"\x7fELF" + bytes(60))
    script = tmp_path / "script"
    script.write_text("#!/bin/sh\n")
    d = "/lttng-tools/tests/utils/testapp/app"
    files = {f"{d}/app": elf, f"{d}/.libs/libfoo.lai": script, f"{d}/run.sh": script,
             f"{d}/libfoo.so.0": elf, "/lttng-tools/tests/other/tool": elf}
    assert rootfs.libtool_places(files) == {f"{d}/.libs/app": elf}
    files[f"{d}/.libs/app"] = script
    assert rootfs.libtool_places(files) == {}
