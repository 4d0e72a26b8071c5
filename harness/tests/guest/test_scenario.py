"""The scenario file: host-side parser and checks, the guest's ksymlab-sched
program (compiled here, run on the host only with --help and bad arguments,
so it never reaches a system call that changes scheduling) and the guest
init's fifo handshake (run with a stand-in for ksymlab-sched)."""

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from harness.oracles import sched_prio
from harness.prepare import initramfs
from harness import paths
from harness.guest import scenario
from harness.errors import HarnessError

BUSYBOX = "/bin/busybox"


def write(tmp_path, text, name="s.scenario"):
    f = tmp_path / name
    f.write_text(text)
    return f


def usage_error(path):
    with pytest.raises(HarnessError) as e:
        scenario.parse(path)
    assert e.value.step == "usage" and e.value.exit_status == 2
    assert "\n" not in e.value.message
    return e.value.message


def test_default_scenario_tasks_and_their_expected_prio():
    tasks = scenario.parse(paths.SCENARIOS / "default.scenario")
    lines = scenario.task_lines(tasks)
    got = [(t["policy"], t["value"], p) for t, p in zip(lines, sched_prio.scenario_prios(tasks))]
    assert got == [
        ("nice", -20, 0), ("nice", -10, 10), ("nice", 0, 20), ("nice", 5, 25),
        ("nice", 19, 39), ("fifo", 1, -2), ("fifo", 50, -51), ("fifo", 99, -100),
        ("rr", 10, -11), ("rr", 90, -91), ("batch", 5, 25), ("idle", 0, 20),
        ("deadline", 1000000, -101),
        # pi 19 20 40: the nice-19 holder runs at its top waiter's -41, not 39
        ("other", 19, -41), ("fifo", 20, -21), ("fifo", 40, -41),
        # pi fifo 10 fifo 40: a SCHED_FIFO holder at its waiter's -41, not its own -11
        ("fifo", 10, -41), ("fifo", 40, -41),
        # pi rr 20 deadline ...: a SCHED_RR holder at its deadline waiter's -101
        ("rr", 20, -101), ("deadline", 1000000, -101),
        # threads: each thread its own policy, not the leader's
        ("other", 5, 25), ("fifo", 20, -21), ("batch", -3, 17), ("idle", 2, 22), ("rr", 7, -8)]
    assert sched_prio.expected_prio(lines[13]) == 39 and lines[14]["pi_owner"] == lines[13]["pid"]
    dl = tasks[12]
    assert (dl["deadline"], dl["period"]) == (10000000, 100000000)


def test_pi_and_threads_lines(tmp_path):
    tasks = scenario.parse(write(tmp_path, "pi 0 10\nthreads idle -5 rr 1\npi 5 3 7 1\n"))
    assert [(t["line"], t["policy"], len(t["threads"])) for t in tasks] == [
        (1, "pi", 2), (2, "threads", 2), (3, "pi", 4)]
    # pi 5 3 7 1: the top waiter is fifo 7 (prio 92), whatever the order they blocked in
    assert sched_prio.scenario_prios(tasks) == [-11, -11, 15, -2, -8, -4, -8, -2]


def test_pi_lines_with_a_real_time_holder_and_a_deadline_waiter(tmp_path):
    tasks = scenario.parse(write(tmp_path, "pi fifo 10 fifo 40 rr 5\n"
                                           "pi batch 3 deadline 2000 4000 8000000 fifo 7\n"))
    assert [[(t["policy"], t["value"], t["pi_owner"]) for t in x["threads"]] for x in tasks] == [
        [("fifo", 10, None), ("fifo", 40, 0), ("rr", 5, 0)],
        [("batch", 3, None), ("deadline", 2000, 0), ("fifo", 7, 0)]]
    assert tasks[1]["threads"][1]["period"] == 8000000
    # the holders run at their top waiter's prio; the deadline waiter outranks fifo 7
    assert sched_prio.scenario_prios(tasks) == [-41, -41, -6, -101, -101, -8]


@pytest.mark.parametrize("line, msg", [
    ("pi fifo 10", "pi takes a holder POLICY VALUE and waiters"),
    ("pi fifo 10 other 3", "pi waiter policy 'other' is none of fifo, rr, deadline"),
    ("pi deadline 1 fifo 3", "pi takes a holder POLICY VALUE and waiters"),
    ("pi fifo 100 fifo 3", "pi holder fifo value 100 out of range 1..99"),
    ("pi fifo 10 rr 0", "pi waiter rr priority 0 out of range 1..99"),
    ("pi fifo 10 deadline 1 2", "pi waiter deadline takes 3 numbers"),
    ("pi fifo 10 deadline 1000 2000 3000", "deadline runtime 1000 ns is below 1024 ns"),
    ("pi fifo 10 deadline 90000000 100000000 100000000",
     "deadline tasks would need 100% of the guest's CPU"),
])
def test_bad_pi_lines_with_a_holder_policy(tmp_path, line, msg):
    f = write(tmp_path, f"deadline 10000000 100000000 100000000\n{line}\n")
    got = usage_error(f)
    assert got.startswith(f"{f}:2: {msg}"), got


@pytest.mark.parametrize("line, msg", [
    ("pi 19", "pi takes a NICE and 1..15 PRIORITY"),
    ("pi 20 5", "pi holder nice 20 out of range -20..19"),
    ("pi 0 0", "pi waiter fifo priority 0 out of range 1..99"),
    ("pi 0 x", "'x' is not an integer"),
    ("threads other", "threads takes 1..16 POLICY VALUE pairs"),
    ("threads nice 3", "unknown thread policy 'nice'"),
    ("threads fifo 100", "fifo priority 100 out of range 1..99"),
    ("threads batch -21", "batch nice -21 out of range -20..19"),
])
def test_bad_pi_and_threads_lines(tmp_path, line, msg):
    f = write(tmp_path, f"nice 0\n{line}\n")
    got = usage_error(f)
    assert got.startswith(f"{f}:2: {msg}"), got


def test_good_file_with_comments_and_blank_lines(tmp_path):
    f = write(tmp_path, "# header\n\n  nice 3\n\t# indented comment\nfifo 7\n"
                        "rr 99\nbatch -20\nidle 19\n"
                        "deadline 1024 1024 100000\ndeadline 50000000 100000000 200000000\n")
    tasks = scenario.parse(f)
    assert [(t["line"], t["policy"], t["value"]) for t in tasks] == [
        (3, "nice", 3), (5, "fifo", 7), (6, "rr", 99), (7, "batch", -20), (8, "idle", 19),
        (9, "deadline", 1024), (10, "deadline", 50000000)]
    assert scenario.parse(write(tmp_path, "# nothing but comments\n", "empty")) == []


def test_unknown_policy_names_file_and_line(tmp_path):
    f = write(tmp_path, "nice 0\n# c\nchrt 5\n")
    msg = usage_error(f)
    assert msg.startswith(f"{f}:3: unknown policy 'chrt' (known: nice, batch, idle, fifo, rr, "
                          "deadline, pi, threads)")
    assert msg.endswith("'chrt 5'")


@pytest.mark.parametrize("line,needle", [
    ("fifo 100", "fifo priority 100 out of range 1..99"),
    ("fifo 0", "fifo priority 0 out of range 1..99"),
    ("rr -1", "rr priority -1 out of range 1..99"),
    ("nice 20", "nice 20 out of range -20..19"),
    ("batch -21", "batch nice -21 out of range -20..19"),
    ("idle 20", "idle nice 20 out of range -20..19"),
    ("fifo", "fifo takes 1 number (fifo PRIORITY)"),
    ("nice 1 2", "nice takes 1 number (nice NICE)"),
    ("rr ten", "'ten' is not an integer (rr PRIORITY)"),
    ("nice 5_0", "'5_0' is not an integer (nice NICE)"),
    ("nice 0 # trailing comment", "nice takes 1 number (nice NICE)"),
])
def test_out_of_range_and_malformed(tmp_path, line, needle):
    f = write(tmp_path, f"nice 0\n{line}\n")
    assert usage_error(f) == f"{f}:2: {needle}: {line!r}"


@pytest.mark.parametrize("line,needle", [
    ("deadline 1000000 10000000", "deadline takes 3 numbers "
                                  "(deadline RUNTIME_NS DEADLINE_NS PERIOD_NS)"),
    ("deadline 1000000", "deadline takes 3 numbers"),
    ("deadline 1ms 10ms 100ms", "'1ms' is not an integer"),
    ("deadline 1000 10000000 100000000", "deadline runtime 1000 ns is below 1024 ns"),
    ("deadline 20000000 10000000 100000000",
     "deadline needs runtime <= deadline <= period, got 20000000 10000000 100000000"),
    ("deadline 1000000 100000000 10000000", "deadline needs runtime <= deadline <= period"),
    ("deadline 1024 50000 50000", "deadline period 50000 ns out of range 100000..4194304000"),
    ("deadline 1000000 10000000 5000000000", "deadline period 5000000000 ns out of range"),
])
def test_malformed_deadline(tmp_path, line, needle):
    f = write(tmp_path, f"# x\n{line}\n")
    msg = usage_error(f)
    assert msg.startswith(f"{f}:2: {needle}") and msg.endswith(f"{line!r}")


def test_deadline_bandwidth_over_one_cpu(tmp_path):
    # 50 % + 40 % fits in 95 %; another 10 % does not
    ok = "deadline 50000000 100000000 100000000\ndeadline 4000000 10000000 10000000\n"
    assert len(scenario.parse(write(tmp_path, ok))) == 2
    f = write(tmp_path, ok + "deadline 1000000 10000000 10000000\n", "over")
    assert usage_error(f).startswith(f"{f}:3: deadline tasks would need 100% of the guest's "
                                     "CPU, admission control allows 95%")


def test_crlf_missing_file_and_binary(tmp_path):
    f = write(tmp_path, "nice 0\r\nnice 1\r\n")
    assert usage_error(f).startswith(f"{f}:1: carriage return")
    assert usage_error(tmp_path / "nope").startswith(f"{tmp_path / 'nope'}: cannot read")
    b = tmp_path / "bin"
    b.write_bytes(b"nice \xff\n")
    assert "not UTF-8" in usage_error(b)


# --- ksymlab-sched, the guest program ------------------------------------------------

@pytest.fixture(scope="module")
def sched_bin(tmp_path_factory):
    assert initramfs.GUEST_PROGRAMS["sched.c"] == "/bin/ksymlab-sched"
    out = tmp_path_factory.mktemp("sched") / "ksymlab-sched"
    p = subprocess.run(["gcc", *initramfs.GUEST_CFLAGS, "-o", str(out),
                        str(paths.GUEST / "sched.c")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return out


def run_sched(sched_bin, *args):
    before = (os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0))
    p = subprocess.run([str(sched_bin), *args], capture_output=True, text=True, timeout=10)
    assert (os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0)) == before
    return p


def test_sched_help(sched_bin):
    p = run_sched(sched_bin, "--help")
    assert p.returncode == 0 and p.stderr == ""
    assert p.stdout.startswith("usage: ksymlab-sched fifo|rr PRIORITY (1..99)\n")
    assert "deadline RUNTIME_NS DEADLINE_NS PERIOD_NS" in p.stdout


@pytest.mark.parametrize("args,message", [
    ((), "missing arguments (see --help): Invalid argument"),
    (("fifo",), "missing arguments (see --help): Invalid argument"),
    (("chrt", "5"), "unknown policy chrt: Invalid argument"),
    (("nice", "5"), "unknown policy nice: Invalid argument"),    # nice is renice's job
    (("fifo", "100"), "priority 100 out of range 1..99: Invalid argument"),
    (("rr", "0"), "priority 0 out of range 1..99: Invalid argument"),
    (("fifo", "5x"), "priority 5x is not a number: Invalid argument"),
    (("fifo", "5", "6"), "fifo takes one PRIORITY: Invalid argument"),
    (("batch", "20"), "nice 20 out of range -20..19: Invalid argument"),
    (("idle", "-21"), "nice -21 out of range -20..19: Invalid argument"),
    (("other", ""), "nice  is not a number: Invalid argument"),
    (("deadline", "1000000", "10000000"),
     "deadline takes RUNTIME_NS DEADLINE_NS PERIOD_NS: Invalid argument"),
    (("deadline", "1000", "10000000", "100000000"),
     "runtime_ns 1000 out of range 1024..9223372036854775807: Invalid argument"),
    (("deadline", "1000000", "999999", "100000000"),
     "deadline_ns 999999 out of range 1000000..9223372036854775807: Invalid argument"),
    (("deadline", "1000000", "10000000", "9999999"),
     "period_ns 9999999 out of range 10000000..9223372036854775807: Invalid argument"),
    (("deadline", "1", "2", "99999999999999999999"),
     "runtime_ns 1 out of range 1024..9223372036854775807: Invalid argument"),
    (("deadline", "2000", "3000", "99999999999999999999"),
     "period_ns 99999999999999999999 is not a number: Invalid argument"),
])
def test_sched_bad_arguments(sched_bin, args, message):
    p = run_sched(sched_bin, *args)
    assert (p.returncode, p.stdout, p.stderr) == (2, "", f"ksymlab-sched: {message}\n")


@pytest.mark.parametrize("policy", [p for p in scenario.POLICIES if p != "nice"])
def test_sched_knows_every_scenario_policy(sched_bin, policy):
    # a non-number value stops it before any system call, after the policy lookup
    args = [policy, "x"] + (["y", "z"] if policy == "deadline" else [])
    p = run_sched(sched_bin, *args)
    assert p.returncode == 2 and "is not a number" in p.stderr, p.stderr


# --- the guest init's scenario block, with a stand-in for ksymlab-sched --------------

STUB = """#!/bin/sh
case "$2" in
77) echo "ksymlab-sched: sched_setattr $1 $2: Operation not permitted" >&2; exit 1 ;;
66) exit 1 ;;
esac
if [ "$1" = deadline ]; then
	echo "task pid=$$ policy=$1 value=$2 deadline=$3 period=$4"
else
	echo "task pid=$$ policy=$1 value=$2"
fi
exec >/dev/null 2>&1
exec sleep 300
"""


# ksymlab-threads: a line per thread, tids made up from the process's pid
THREADS_STUB = """#!/bin/sh
mode=$1
shift
case " $* " in
*" 77 "*) echo "ksymlab-threads: sched_setattr: Operation not permitted" >&2; exit 1 ;;
*" 66 "*) exit 1 ;;
*" 55 "*) echo "task pid=1 tgid=1 policy=other value=55"; exit 0 ;;
esac
if [ "$mode" = pi ]; then
	echo "task pid=$$ tgid=$$ policy=other value=$1"
	echo "task pid=$(($$ + 1)) tgid=$$ policy=fifo value=$2 pi_owner=$$"
else
	echo "task pid=$$ tgid=$$ policy=$1 value=$2"
	echo "task pid=$(($$ + 1)) tgid=$$ policy=$3 value=$4"
fi
exec >/dev/null 2>&1
exec sleep 300
"""


def run_init_block(tmp_path, text):
    init = (paths.GUEST / "init").read_text()
    start = init.index("# Start the scenario's tasks")
    last = "done < /etc/ksymlab/scenario\n"
    end = init.index(last, start) + len(last)
    stub = tmp_path / "stub-sched"
    stub.write_text(STUB)
    stub.chmod(0o755)
    (tmp_path / "scenario").write_text(text)
    tstub = tmp_path / "stub-threads"
    tstub.write_text(THREADS_STUB)
    tstub.chmod(0o755)
    block = (init[start:end].replace("/bin/ksymlab-sched", str(stub))
             .replace("/bin/ksymlab-threads", str(tstub))
             .replace("/tmp/ksymlab-threads.", str(tmp_path / "tfifo."))
             .replace("/etc/ksymlab/scenario", str(tmp_path / "scenario"))
             .replace("/tmp/ksymlab-sched.", str(tmp_path / "fifo."))
             # the guest's $DATA is a serial port; a file here needs appending
             .replace('> "$DATA"', '>> "$DATA"'))
    script = (f'DATA={tmp_path / "data"}\n: > "$DATA"\n'
              'fail() { echo "FAIL $*"; exit 7; }\n' + block + 'echo "DONE"\n')
    p = subprocess.run([BUSYBOX, "sh", "-c", script], capture_output=True, text=True,
                       timeout=60)
    lines = (tmp_path / "data").read_text().splitlines()
    return p, lines


def kill_tasks(lines):
    for l in lines:
        pid = int(l.split()[1].split("=")[1])
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


@pytest.mark.skipif(not os.path.exists(BUSYBOX), reason="busybox-static not installed")
def test_init_block_waits_for_each_task(tmp_path):
    p, lines = run_init_block(tmp_path, "# c\n\nfifo 50\nrr 10\nbatch 5\nidle 0\n"
                                        "deadline 1000000 10000000 100000000\n")
    try:
        assert (p.returncode, p.stdout) == (0, "DONE\n"), p.stderr
        assert [l.split(" ", 2)[2] for l in lines] == [
            "policy=fifo value=50", "policy=rr value=10", "policy=batch value=5",
            "policy=idle value=0", "policy=deadline value=1000000 deadline=10000000 "
            "period=100000000"]
        for l in lines:         # each task is still alive when the block is done
            os.kill(int(l.split()[1].split("=")[1]), 0)
        assert not list(tmp_path.glob("fifo*"))
    finally:
        kill_tasks(lines)


@pytest.mark.skipif(not os.path.exists(BUSYBOX), reason="busybox-static not installed")
@pytest.mark.parametrize("text,message", [
    ("fifo 50\nfifo 77\n", "FAIL scenario: fifo 77: ksymlab-sched: sched_setattr fifo 77: "
                           "Operation not permitted"),
    ("rr 10\nrr 66\n", "FAIL scenario: rr 66: ksymlab-sched exited without a line"),
    ("batch 1\nchrt 5\n", "FAIL scenario: unknown policy chrt"),
])
def test_init_block_fails_cleanly(tmp_path, text, message):
    p, lines = run_init_block(tmp_path, text)
    try:
        assert (p.returncode, p.stdout) == (7, message + "\n"), p.stderr
        assert len(lines) == 1          # the first task reported before the failure
    finally:
        kill_tasks(lines)


@pytest.mark.skipif(not os.path.exists(BUSYBOX), reason="busybox-static not installed")
def test_init_block_forwards_a_line_per_thread(tmp_path):
    p, lines = run_init_block(tmp_path, "fifo 50\npi 19 20\nthreads other 5 fifo 20\n")
    try:
        assert (p.returncode, p.stdout) == (0, "DONE\n"), p.stderr
        rest = [l.split(" ", 3)[3] for l in lines[1:]]
        assert rest == ["policy=other value=19", "policy=fifo value=20 pi_owner=" +
                        lines[1].split()[1].split("=")[1],
                        "policy=other value=5", "policy=fifo value=20"]
        assert not list(tmp_path.glob("tfifo*"))
    finally:
        kill_tasks(lines[:2] + lines[3:4])      # the stand-in's other "threads" do not exist


@pytest.mark.skipif(not os.path.exists(BUSYBOX), reason="busybox-static not installed")
@pytest.mark.parametrize("text,message", [
    ("pi 77 20\n", "FAIL scenario: pi 77 20: ksymlab-threads: sched_setattr: "
                   "Operation not permitted"),
    ("threads other 66\n", "FAIL scenario: threads other 66: ksymlab-threads exited "
                           "without a line"),
    # a line about a task of another process is refused
    ("pi 55 1\n", "FAIL scenario: pi 55 1: task pid=1 tgid=1 policy=other value=55"),
])
def test_init_threads_block_fails_cleanly(tmp_path, text, message):
    p, lines = run_init_block(tmp_path, text)
    assert (p.returncode, p.stdout) == (7, message + "\n"), p.stderr
    assert lines == []


@pytest.fixture(scope="module")
def threads_bin(tmp_path_factory):
    assert initramfs.GUEST_PROGRAMS["threads.c"] == "/bin/ksymlab-threads"
    out = tmp_path_factory.mktemp("threads") / "ksymlab-threads"
    p = subprocess.run(["gcc", *initramfs.GUEST_CFLAGS, "-o", str(out),
                        str(paths.GUEST / "threads.c")], capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return out


# only --help and bad arguments: checked before any system call
@pytest.mark.parametrize("args,message", [
    (("pi", "19"), "pi takes NICE and 1..15 PRIORITY"),
    (("pi", "20", "5"), "nice 20 out of range"),
    (("pi", "0", "0"), "priority 0 out of range"),
    (("group", "other"), "group takes 1..16 POLICY VALUE pairs"),
    (("group", "nice", "1"), "unknown policy nice"),
    (("group", "fifo", "100"), "fifo value 100 out of range"),
    (("clone", "1", "2"), "unknown mode clone (group or pi)"),
    # pi with a holder policy (issue 43): fifo, rr or deadline waiters
    (("pi", "fifo", "10"), "pi takes a holder and at least one waiter"),
    (("pi", "fifo", "10", "fifo"), "fifo lacks its values"),
    (("pi", "fifo", "10", "other", "3"), "waiter policy other"),
    (("pi", "deadline", "1", "fifo", "3"), "holder policy deadline"),
    (("pi", "fifo", "10", "deadline", "1000", "2000", "3000"),
     "deadline 1000 2000 3000 out of range"),
    (("pi", "rr", "10", "fifo", "100"), "fifo value 100 out of range"),
])
def test_threads_bad_arguments(threads_bin, args, message):
    p = run_sched(threads_bin, *args)
    assert (p.returncode, p.stdout) == (2, "")
    assert p.stderr == f"ksymlab-threads: {message}: Invalid argument\n"


def _status(pid, tid, field):
    for line in Path(f"/proc/{pid}/task/{tid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return line.split()[1]
    raise AssertionError(f"no {field} in /proc/{pid}/task/{tid}/status")


def test_threads_sigusr1_wakes_the_leader_alone(threads_bin):
    """lttng-init wakes a PI holder with SIGUSR1 so that it leaves the CPU once while
    the trace records; a waiter woken too would leave the rt_mutex and unboost the
    holder. Run on the host in group mode (nice 0: no privilege, no real-time policy):
    the leader catches SIGUSR1 and sleeps again, the other thread blocks it."""
    usr1 = 1 << (signal.SIGUSR1 - 1)
    p = subprocess.Popen([str(threads_bin), "group", "other", "0", "other", "0"],
                         stdout=subprocess.PIPE, text=True)
    try:
        lines = p.stdout.read().splitlines()     # EOF: every thread reported
        tids = [int(w.split("=")[1]) for w in (l.split()[1] for l in lines)]
        assert len(tids) == 2 and tids[0] == p.pid, lines
        leader, other = tids
        assert int(_status(p.pid, other, "SigBlk"), 16) & usr1
        deadline = time.monotonic() + 10          # bounds, not timing checks
        # the leader asleep in pause(), its handler set and SIGUSR1 unblocked
        while _status(p.pid, leader, "State") != "S" or \
                int(_status(p.pid, leader, "SigBlk"), 16) & usr1:
            assert time.monotonic() < deadline, "the leader never slept in pause()"
            time.sleep(0.01)
        assert int(_status(p.pid, leader, "SigCgt"), 16) & usr1
        before = int(_status(p.pid, leader, "voluntary_ctxt_switches"))
        os.kill(p.pid, signal.SIGUSR1)
        while int(_status(p.pid, leader, "voluntary_ctxt_switches")) == before:
            assert time.monotonic() < deadline, "the leader never woke on SIGUSR1"
            time.sleep(0.01)
        assert p.poll() is None, "SIGUSR1 ended the process"
        assert not int(_status(p.pid, leader, "ShdPnd"), 16) & usr1   # the leader took it
    finally:
        p.kill()
        p.wait()


def test_guest_init_starts_every_scenario_policy():
    init = (paths.GUEST / "init").read_text()
    assert "\tnice)\n" in init and "\tbatch|idle|fifo|rr|deadline)\n" in init
    assert "\tpi|threads)\n" in init
    assert set(scenario.POLICIES) == {"nice", "batch", "idle", "fifo", "rr", "deadline"}
