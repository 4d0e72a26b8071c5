"""The side-by-side front end's pure parts: how two gdb answers are cleaned, paired,
marked and passed options; expected values written out by hand."""

import argparse

from harness.session import pair


def test_answer_lines_drop_colours_carriage_returns_trace_and_progress_lines():
    text = ("+ksymlab prio 1\r\n\x1b[32mgdb prio\x1b[m: 0\r\n\r\n"
            "[   32.5s] drgn: stock-6.12: read 44 tasks\r\nmodule prio: 0\r\n")
    assert pair.answer_lines(text) == ["gdb prio: 0", "module prio: 0"]


def test_echo_of_the_typed_line_is_not_part_of_the_answer():
    assert pair.without_echo(["ksymlab prio 1", "gdb prio: 0"], "ksymlab prio 1 ") == \
        ["gdb prio: 0"]
    # an answer line that only looks like another command stays
    assert pair.without_echo(["gdb prio: 0"], "ksymlab prio 1") == ["gdb prio: 0"]


def test_only_the_lines_that_differ_are_marked():
    left = ["module: 0xffffffff81000000 export", "gdb: 0xffffffff81000000", "rows: 3"]
    right = ["module: 0xffffffff81000000 kprobe", "gdb: 0xffffffff81000000"]
    shown = pair.render(pair.side_by_side(left, right), ("exports", "doctored"), width=36)
    assert shown.splitlines() == [
        "  exports                              | doctored",
        "* module: 0xffffffff81000000 export    | module: 0xffffffff81000000 kprobe",
        "  gdb: 0xffffffff81000000              | gdb: 0xffffffff81000000",
        "* rows: 3                              | ",
    ]


def test_a_long_line_is_cut_not_wrapped():
    shown = pair.render(pair.side_by_side(["x" * 50], ["x" * 50]), ("a", "b"), width=10)
    assert shown.splitlines()[1] == "  xxxxxxxxx~ | xxxxxxxxx~"


def test_each_side_gets_the_pairs_options_and_the_pairs_directory(tmp_path):
    args = argparse.Namespace(variant_file=["v/doctored.toml"], scenario=None,
                              insmod_args="simulate_missing=task_prio", append="",
                              runs_dir=None, boot_timeout=900, hang_timeout=None,
                              module_src=None, kaslr=True, kvm=False, lttng=True,
                              keep_vmcore=False)
    argv = pair.child_argv("exports", args, tmp_path)
    assert argv[1:] == ["-m", "harness", "session", "exports", "--into", str(tmp_path),
                        "--variant-file", "v/doctored.toml",
                        "--insmod-args", "simulate_missing=task_prio",
                        "--boot-timeout", "900", "--kaslr", "--lttng"]


def test_a_side_that_ended_passes_on_its_own_line_and_status():
    out = "ksymlab: boot: qemu exited\r\nksymlab: timeout: exports: no KSYMLAB-ARM\r\n"
    e = pair.Ended.of("exports", out, 34)
    assert (e.line, e.status) == ("ksymlab: timeout: exports: no KSYMLAB-ARM", 34)
    e = pair.Ended.of("exports", "Traceback\n", 0)
    assert e.status == 40 and e.line.startswith("ksymlab: gdb: exports: ")


def test_a_session_of_three_variants_or_one_twice_is_a_usage_error():
    import subprocess
    import sys
    from harness import paths
    for bad in ("exports,kallsyms,stock", "exports,exports", ","):
        p = subprocess.run([sys.executable, "-m", "harness", "session", bad], cwd=paths.REPO,
                           capture_output=True, text=True, stdin=subprocess.DEVNULL)
        assert (p.returncode, p.stderr.strip().splitlines()) == \
            (2, [f"ksymlab: usage: session {bad}: one variant, or two different ones "
                 "side by side"])
