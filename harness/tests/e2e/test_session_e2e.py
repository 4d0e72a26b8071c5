"""`python3 -m harness session` as a person uses it: pexpect (and tmux) type the
commands into a real session and read what it prints.

Cost: one guest per test (two for the side-by-side one), from the warm cache the
shared default_run leaves (its exports tree and module). The oracles: the rows of
that run (the same variant and scenario), hand-known values of the default
scenario, and the process table."""

import re
import subprocess
import sys
import time
from pathlib import Path

import pexpect
import pytest

from harness import paths

pytestmark = pytest.mark.e2e

START_SECONDS = 1800         # from the command to gdb's prompt (warm: a boot)
ROWS_SECONDS = 900           # `ksymlab rows`: the guest's sampling, drgn, the checks
# report.json's verdicts, as `ksymlab rows` words them
VERDICT = {True: "agree", False: "disagree", None: "unchecked"}
COMMANDS = ("blockdev", "console", "next", "pageblock", "prio", "rows", "symbol",
            "writeback")


def session(runs, *args):
    child = pexpect.spawn(sys.executable, ["-m", "harness", "session", *args,
                                           "--runs-dir", str(runs)],
                          cwd=str(paths.REPO), encoding="utf-8", codec_errors="replace",
                          timeout=START_SECONDS, dimensions=(50, 300))
    child.logfile_read = open(Path(runs).parent / "session.log", "a", encoding="utf-8")
    return child


def answer(child, prompt, command, seconds=120):
    """The lines gdb printed for `command`, without its echo and trace line."""
    child.sendline(command)
    child.expect_exact(prompt, timeout=seconds)
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", child.before)     # gdb's styles
    rows = [r.strip() for r in text.replace("\r", "").splitlines()]
    return [r for r in rows if r and r != command and not r.startswith("+")]


def keyed(lines):
    return dict(r.split(": ", 1) for r in lines if ": " in r)


def norm(cid):
    """test_cluster_e2e.comparable()'s: two boots give the scenario's tasks other pids."""
    return re.sub(r"\bpid \d+", "pid N", cid)


def processes_of(where):
    """qemu and gdb processes whose command line names `where` (the session's dir)."""
    out = subprocess.run(["pgrep", "-af", "qemu-system|gdb"], capture_output=True,
                         text=True).stdout
    return [r for r in out.splitlines() if str(where) in r]


def gone(where, seconds=30):
    end = time.monotonic() + seconds
    while processes_of(where) and time.monotonic() < end:
        time.sleep(0.5)
    return processes_of(where)


def test_live_rows_are_the_runs_rows_and_quit_leaves_nothing(default_run, tmp_path):
    runs = tmp_path / "runs"
    t0 = time.monotonic()
    child = session(runs, "exports")
    prompt = "(ksymlab exports) "
    child.expect_exact(prompt)
    # printed, not asserted (no timing thresholds in tests): the figure is
    # harness/tools/session_bench.py's, on an idle machine
    to_prompt = time.monotonic() - t0
    boot = default_run.variant("exports")["timings"]["boot"]
    print(f"session exports: prompt after {to_prompt:.1f} s; the run's boot lap {boot} s")
    helped = "\n".join(answer(child, prompt, "help ksymlab"))
    assert all(f"ksymlab {c} --" in helped for c in COMMANDS), helped
    # init (pid 1) runs at nice 0 at the first snapshot: task_prio() 20, SCHED_NORMAL
    prio = keyed(answer(child, prompt, "ksymlab prio 1"))
    assert (prio["gdb prio"], prio["gdb policy"], prio["module prio"]) == ("20", "0", "20")
    live = answer(child, prompt, "ksymlab rows all", ROWS_SECONDS)
    # "<id>: <verdict>"; an id may hold ": " itself, a verdict never does; gdb's
    # stops and the host's progress lines print between them
    rows = {(norm(k), v) for k, _, v in (r.rpartition(": ") for r in live)
            if ":" in k and v in VERDICT.values()}
    run = default_run.variant("exports")
    want = {(norm(r["id"]), VERDICT[r["agree"]]) for r in run["symbols"] + run["values"]
            if not r["id"].startswith("lttng")}
    assert len(want) > 50
    assert rows == want
    where = next(runs.iterdir())
    assert processes_of(where)              # the oracle sees the session's qemu and gdb
    child.sendline("quit")
    child.expect(pexpect.EOF, timeout=60)
    child.close()
    assert child.exitstatus == 0
    assert gone(where) == []
    transcript = (where / "exports" / "transcript.txt").read_text()
    assert "+ksymlab rows all" in transcript and "ksymlab: stopped at snapshot 1" in transcript


def test_two_variants_side_by_side_mark_the_doctored_difference(default_run, tmp_path):
    # the exports tree with the stock method: the module finds kallsyms_lookup_name
    # by a kprobe, which the exports module never resolves
    doctored = tmp_path / "exports-kprobe.toml"
    doctored.write_text((paths.REPO / "variants" / "exports.toml").read_text()
                        .replace('module_mode = "exports"', 'module_mode = "kprobe"')
                        .replace("default = true", "default = false"))
    runs = tmp_path / "runs"
    child = session(runs, "exports,exports-kprobe", "--variant-file", str(doctored))
    prompt = "(ksymlab exports | exports-kprobe) "
    child.expect_exact(prompt)
    child.sendline("ksymlab symbol kallsyms_lookup_name")
    child.expect_exact(prompt, timeout=120)
    shown = [r for r in child.before.replace("\r", "").splitlines() if "|" in r]
    marked = [r for r in shown if r.startswith("* ")]
    assert len(marked) == 1 and re.match(
        r"\* module: (not resolved|\S+ unresolved) +\| module: 0x[0-9a-f]+ kprobe$",
        marked[0]), shown
    # the symbol table and /proc/kallsyms agree on both (one tree): not marked
    assert any(r.startswith("  gdb: 0x") for r in shown), shown
    where = next(runs.iterdir())
    child.sendeof()                         # Ctrl-D
    child.expect(pexpect.EOF, timeout=120)
    child.close()
    assert child.exitstatus == 0
    assert gone(where) == []


def test_a_session_in_tmux_shows_its_answers_and_the_guests_shell(default_run, tmp_path):
    runs, name = tmp_path / "runs", f"ksymlab-{tmp_path.name}"
    cmd = f"{sys.executable} -m harness session exports --runs-dir {runs}"
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", "240", "-y", "50",
                    "-c", str(paths.REPO), cmd], check=True)
    gdb_pane = f"{name}:0.0"
    try:
        screen = wait_screen(gdb_pane, "(ksymlab exports) ", START_SECONDS)
        keys(gdb_pane, "ksymlab writeback")
        screen = wait_screen(gdb_pane, "module dirty_limit", 120)
        (tmp_path / "screen.txt").write_text(screen)
        gdb_limit = re.search(r"^gdb dirty_limit: (\d+)$", screen, re.M)
        assert gdb_limit and int(gdb_limit.group(1)) > 0, screen
        # the guest's shell in the pane beside gdb: it starts once the data port is
        # complete (`ksymlab rows` runs the guest there), and answers while it runs
        panes = tmux("list-panes", "-t", f"{name}:0", "-F", "#{pane_id}").split()
        assert len(panes) == 2, panes
        keys(gdb_pane, "ksymlab rows")
        wait_screen(gdb_pane, "agree: ", ROWS_SECONDS)
        keys(gdb_pane, "continue")
        time.sleep(2)
        keys(panes[1], "echo shell-$((6*7)) $(cat /proc/ksymlab/prio | wc -l)")
        shell = wait_screen(panes[1], "shell-42 ", 60)
        (tmp_path / "shell.txt").write_text(shell)
        where = next(runs.iterdir())
        assert "KSYMLAB-DATA-END" in (where / "exports" / "data.log").read_text()
        subprocess.run(["tmux", "send-keys", "-t", gdb_pane, "C-c"], check=True)
        wait_screen(gdb_pane, "(ksymlab exports) ", 60, after="shell")
        keys(gdb_pane, "quit")
        assert gone(where, 60) == []
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


def tmux(*args):
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


def keys(target, line):
    subprocess.run(["tmux", "send-keys", "-t", target, line, "Enter"], check=True)


def wait_screen(target, text, seconds, after=None):
    """The pane's screen once it shows `text` (after the last `after`, if given)."""
    end = time.monotonic() + seconds
    while True:
        screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", target],
                                capture_output=True, text=True).stdout
        tail = screen.rsplit(after, 1)[-1] if after else screen
        if text in tail or time.monotonic() > end:
            assert text in tail, screen
            return screen
        time.sleep(1)
