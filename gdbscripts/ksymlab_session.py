# ksymlab: the gdb commands of a verification session a person drives
# (`python3 -m harness session VARIANT`, harness/session/, docs/session.md).
#
# Sourced by gdb after vmlinux and the tree's vmlinux-gdb.py. On sourcing it does
# what ksymlab_verify.py's main() does up to the first snapshot, with the same
# readers: attach to the gdbstub, place the probe module, arm the breakpoint on
# ksymlab_snapshot_taken() (the host then says "go"), stop there, read the
# snapshot and hold the guest while the host has QEMU dump its memory (drgn's
# vmcore). Then the person has the prompt, and `help ksymlab` lists the commands.
#
# The host (harness/session/control.py) and this script talk through files in the
# variant's directory (KSYMLAB_SESSION_DIR): gdb-armed, gdb-hold/gdb-release as in
# a run, rows-request/rows.json for `ksymlab rows`, whose rows the host computes
# with run's own code (harness/variantjob.py compare()). Every command prints lines
# "key: value", so that two variants' answers line up side by side.

import json
import os
import sys
import time

import gdb

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ksymlab_verify as kv     # noqa: E402  (gdb's module path set just above)

DIR = os.environ["KSYMLAB_SESSION_DIR"]
SOCKET = os.environ["KSYMLAB_GDB_SOCKET"]
DATA_END = "KSYMLAB-DATA-END"
# Seconds `ksymlab rows` waits for the guest's data port to end (the guest's
# sampling after its last snapshot) and for the host's rows.
DATA_WAIT = 300
ROWS_WAIT = 300
# ... and with --lttng for the LTTng boot beside (its build, image and guest)
LTTNG_WAIT = 1800


def path(name):
    return os.path.join(DIR, name)


# gdb starts while the guest boots (vmlinux loads meanwhile): seconds it waits for
# the host's gdb-in.json, written once the guest has loaded the module (ARM); the
# host ends gdb sooner when the boot fails.
ARM_WAIT = 3600
# Commands that let the guest run: each waits first until the host has dumped the
# first snapshot's memory (the vmcore drgn reads), which it does while the person
# already has the prompt.
RUNNING = ("continue", "next", "step", "nexti", "stepi", "finish", "until", "advance",
           "jump", "detach")


class State:
    """What this gdb has read: the claims (gdb-in.json), the reading in gdb.json's
    shape, the breakpoint, and whether the guest has run past its last snapshot."""

    def __init__(self):
        self.claims = None
        self.order = None
        self.reading = None
        self.bp = None
        self.past = False       # the guest ran on to READY; `rows` then reprints

    def load(self, claims):
        self.claims = claims
        self.order = claims["pageblock_order"]

    def snapshots_left(self):
        return int(self.claims.get("snapshots", 1)) - len(self.reading["snapshots"])


STATE = State()


def wait_file(name, seconds, what):
    end = time.monotonic() + seconds
    while not os.path.exists(path(name)):
        if time.monotonic() > end:
            raise SystemExit(f"ksymlab-gdb: {what} within {seconds} s")
        time.sleep(0.05)


def wait_claims():
    """gdb-in.json once the host wrote it (atomically); vmlinux and vmlinux-gdb.py
    loaded here when the host could not name them on gdb's command line (KASLR:
    the slide is known from the guest's _text only)."""
    wait_file("gdb-in.json", ARM_WAIT, "the guest did not load the module")
    with open(path("gdb-in.json")) as f:
        STATE.load(json.load(f))
    for command in STATE.claims.get("gdb_load", ()):
        gdb.execute(command, to_string=True)


def wait_released():
    """The host has dumped the first snapshot's memory (gdb-release)."""
    if os.path.exists(path("gdb-hold")):
        wait_file("gdb-release", 600, "the host did not dump the guest's memory")


def start():
    """Up to the first snapshot, as ksymlab_verify.main(); the host dumps the guest's
    memory there (gdb-hold) while the person has the prompt."""
    wait_claims()
    STATE.reading = kv.begin(SOCKET, STATE.claims)
    stop, STATE.bp = kv.stop_at_snapshot(path("gdb-armed"))
    kv.read_first(STATE.reading, stop, STATE.order)
    with open(path("gdb-hold"), "w") as f:
        f.write(f"{stop['pc']:#x}\n")
    for command in RUNNING:
        gdb.execute(f"define hook-{command}\npython wait_released()\nend", to_string=True)
    r = STATE.reading
    print(f"ksymlab: stopped at snapshot {r['stop']['seq']} in ksymlab_snapshot_taken: "
          f"{len(r['symbols'])} symbols, {len(r['tasks'])} tasks, "
          f"{len(r['pageblocks'])} pageblocks read; `help ksymlab` lists the commands")


def data_lines(kind):
    """The data port's `kind` lines so far, each as {key: value} (strings)."""
    out = []
    try:
        with open(path("data.log"), errors="replace") as f:
            text = f.read()
    except OSError:
        return out
    for line in text.replace("\r", "").splitlines():
        words = line.split()
        if words and words[0] == kind:
            out.append(dict(w.split("=", 1) for w in words[1:] if "=" in w))
    return out


def say(key, value):
    print(f"{key}: {value}")


def int_arg(arg, what):
    try:
        return int(arg.strip(), 0)
    except ValueError:
        raise gdb.GdbError(f"ksymlab: {what}: {arg.strip()!r} is not a number") from None


class Cmd(gdb.Command):
    """A `ksymlab NAME` command: answer(arg) does the work. The readers end with
    SystemExit on what they cannot read (they were written for gdb -batch): here
    that is the command's error, not the end of gdb."""

    NAME = None

    def __init__(self):
        super().__init__(f"ksymlab {self.NAME}", gdb.COMMAND_USER)

    def invoke(self, arg, from_tty):
        try:
            wait_released()         # no reading while QEMU dumps the guest's memory
            self.answer(arg)
        except SystemExit as e:
            raise gdb.GdbError(str(e)) from None


class Prefix(gdb.Command):
    """ksymlab: the commands of a verification session (docs/session.md).

Every answer is read live: from guest memory by gdb, from the module's own
ksymlab_results, and from the guest's data port; `ksymlab rows` gives the
report's rows with run's own checks (with --lttng, the LTTng boot's too)."""

    def __init__(self):
        super().__init__("ksymlab", gdb.COMMAND_USER, prefix=True)


class Rows(Cmd):
    """Every check of the report on this guest: run's rows, from run's code.
Usage: ksymlab rows [all]  (default: a summary and the rows that do not agree)
Reads the remaining snapshots first, then lets the guest finish its sampling
(gdb detaches and attaches again) and has the host judge the readings."""

    NAME = "rows"

    def answer(self, arg):
        wait_released()
        if not STATE.past:
            finish_guest()
        print_rows(ask_host_rows(), arg)


def finish_guest():
    """The remaining snapshots, read; then the guest runs to READY (its data port
    complete) and gdb holds it again. gdb.json's reading is written beside."""
    while STATE.snapshots_left() > 0:
        STATE.bp = kv.read_next(STATE.reading, STATE.bp, STATE.order)
    STATE.bp.delete()
    kv.write_reading(STATE.reading, path("gdb.json"))
    gdb.execute("detach", to_string=True)
    end = time.monotonic() + DATA_WAIT
    while not data_ended():
        if time.monotonic() > end:
            raise gdb.GdbError(f"ksymlab: no {DATA_END} on the data port within {DATA_WAIT} s")
        time.sleep(0.1)
    kv.attach(SOCKET)
    STATE.past = True


def data_ended():
    try:
        with open(path("data.log"), errors="replace") as f:
            return DATA_END in f.read()
    except OSError:
        return False


def ask_host(name, seconds=ROWS_WAIT):
    """The host's answer to `name` (harness/session/control.py): NAME-request, then
    NAME.json once the host wrote it."""
    answer = path(f"{name}.json")
    if not os.path.exists(answer):
        with open(path(f"{name}-request"), "w") as f:
            f.write(f"{name}\n")
        end = time.monotonic() + seconds
        while not os.path.exists(answer):
            if time.monotonic() > end:
                raise gdb.GdbError(f"ksymlab: the host gave no {name} within {seconds} s")
            time.sleep(0.1)
    with open(answer) as f:
        answer = json.load(f)
    if "error" in answer:
        raise gdb.GdbError(f"ksymlab: {name}: {answer['error']}")
    return answer


def ask_host_rows():
    return ask_host("rows", LTTNG_WAIT)["rows"]


def print_rows(rows, arg):
    """The counts per verdict, then each row that does not agree (all with `all`)."""
    verdicts = {}
    for row in rows:
        verdicts[row["agree"]] = verdicts.get(row["agree"], 0) + 1
    say("rows", len(rows))
    for verdict in sorted(verdicts):
        say(verdict, verdicts[verdict])
    for row in sorted(rows, key=lambda r: r["id"]):
        if arg.strip() == "all" or row["agree"] != "agree":
            say(row["id"], row["agree"])


class Lttng(Cmd):
    """The LTTng boot of `session --lttng`: Debian's LTTng loaded in a guest of its own
beside this one, as `run --lttng` does (the same step and rows); waits for it to end.
Usage: ksymlab lttng [all]  (default: its facts, the counts and the rows that do not agree)"""

    NAME = "lttng"

    def answer(self, arg):
        answer = ask_host("lttng", LTTNG_WAIT)
        for key, value in sorted(answer["facts"].items()):
            say(key, value)
        print_rows(answer["rows"], arg)


class Next(Cmd):
    """Continue to the guest's next snapshot and read it. Usage: ksymlab next"""

    NAME = "next"

    def answer(self, arg):
        if STATE.past or STATE.snapshots_left() <= 0:
            raise gdb.GdbError("ksymlab: no snapshot left (the guest announced "
                               f"{STATE.claims.get('snapshots', 1)})")
        wait_released()
        STATE.bp = kv.read_next(STATE.reading, STATE.bp, STATE.order)
        snap = STATE.reading["snapshots"][-1]
        say("snapshot", snap["stop"]["seq"])
        say("tasks", len(snap["tasks"]))
        say("pageblocks", len(snap["pageblocks"]))


class Prio(Cmd):
    """A task's priority and policy by pid: guest memory (task->prio - MAX_RT_PRIO,
task->policy) beside what the module's ksymlab_results holds.
Usage: ksymlab prio PID"""

    NAME = "prio"

    def answer(self, arg):
        pid = int_arg(arg, "prio")
        task = kv.read_tasks().get(str(pid))
        if task is None:
            raise gdb.GdbError(f"ksymlab: prio: no task with pid {pid} in the guest")
        say("comm", task["comm"])
        say("gdb prio", task["prio"])
        say("gdb policy", task["policy"])
        mine = [s for s in kv.read_results()["prio"] if s["pid"] == pid]
        say("module prio", mine[0]["prio"] if mine else "not sampled")
        say("module policy", mine[0]["policy"] if mine else "not sampled")


class Pageblock(Cmd):
    """A pageblock by pfn: its migratetype from mem_section's pageblock bitmap (gdb)
beside the module's sample. Usage: ksymlab pageblock PFN"""

    NAME = "pageblock"

    def answer(self, arg):
        pfn = int_arg(arg, "pageblock")
        pb = kv.Pageblocks(STATE.order)
        start = pfn & ~((1 << STATE.order) - 1)
        raw = pb.raw(start)
        if raw is None:
            raise gdb.GdbError(f"ksymlab: pageblock: pfn {pfn:#x} has no memory section")
        say("pfn", f"{start:#x}")
        say("gdb migratetype", pb.type_of(raw))
        say("gdb skip", bool(raw & pb.skip_bit))
        say("gdb online", pb.online(start))
        mine = [s for s in kv.read_results()["pageblocks"] if s["pfn"] == start]
        say("module migratetype", mine[0]["mt"] if mine else "not sampled")


class Symbol(Cmd):
    """A symbol's resolution: what the module resolved (its data port line),
vmlinux's symbol table (gdb) and the guest's /proc/kallsyms.
Usage: ksymlab symbol NAME"""

    NAME = "symbol"

    def answer(self, arg):
        name = arg.strip()
        if not kv.is_symbol_name(name):
            raise gdb.GdbError(f"ksymlab: symbol: {name!r} is not a C identifier")
        mine = [s for s in data_lines("symbol") if s.get("name") == name]
        kall = [s for s in data_lines("kallsyms") if s.get("name") == name]
        addr = kv.symbol_address(name)
        say("module", f"{mine[0]['addr']} {mine[0]['method']}" if mine else "not resolved")
        say("gdb", f"{addr:#x}" if addr is not None else "not in vmlinux")
        say("kallsyms", kall[0]["addr"] if kall else "not listed")


class Blockdev(Cmd):
    """The block devices: the block class's devices (gdb) beside the module's
sample. Usage: ksymlab blockdev"""

    NAME = "blockdev"

    def answer(self, arg):
        mine = {b["name"]: b for b in kv.read_results()["bdevs"]}
        for dev in kv.read_block_class():
            m = mine.get(dev["name"])
            say(dev["name"], f"gdb {dev['type']} {dev['dev']} {dev['sectors']} sectors; "
                + (f"module {m['dev']} {m['sectors']} sectors" if m else "module: none"))


class Writeback(Cmd):
    """The writeback state: global_wb_domain.dirty_limit and the dirty sysctls
(gdb) beside the module's wb record. Usage: ksymlab writeback"""

    NAME = "writeback"

    def answer(self, arg):
        say("gdb dirty_limit", int(gdb.parse_and_eval("global_wb_domain.dirty_limit")))
        for name, value in kv.read_dirty_sysctls().items():
            say(f"gdb {name}", value)
        for name, value in kv.read_results()["wb"].items():
            say(f"module {name}", value)


class Console(Cmd):
    """The last lines of the guest's console (default 20). Usage: ksymlab console [N]"""

    NAME = "console"

    def answer(self, arg):
        n = int_arg(arg, "console") if arg.strip() else 20
        try:
            with open(path("console.log"), errors="replace") as f:
                rows = [r for r in f.read().replace("\r", "").splitlines() if r.strip()]
        except OSError:
            rows = []
        for row in rows[-n:]:
            print(row)


def start_or_quit():
    """start(); on failure its one line goes to gdb-failed (the host's error) and gdb
    quits with run's gdb exit status (40)."""
    try:
        start()
    except KeyboardInterrupt:
        gdb.execute("quit 130")     # Ctrl-C before the prompt: the host stops too
    except (SystemExit, gdb.error, KeyError, OSError) as e:
        with open(path("gdb-failed"), "w") as f:
            f.write(f"{e}\n")
        print(f"ksymlab: gdb: {e}")
        gdb.execute("quit 40")


for command in (Prefix, Rows, Lttng, Next, Prio, Pageblock, Symbol, Blockdev, Writeback, Console):
    command()
start_or_quit()
