"""Two variants behind one prompt: each runs as its own `session VARIANT` (its
guest, its gdb) under pexpect; every line the person types goes to both gdbs, and
their answers are printed side by side, a line whose two answers differ marked.
Quitting (quit, Ctrl-D, SIGTERM, SIGHUP) ends both sessions, which stop their
QEMU and gdb."""

import itertools
import re
import signal
import sys
from dataclasses import dataclass
from typing import Tuple

import pexpect

from ..errors import EXIT, HarnessError
from . import gdbchild

# From the start to the prompt: building what is missing and booting both guests.
START_SECONDS = 3600
# One command's answer (`ksymlab rows` runs drgn and the checks).
ANSWER_SECONDS = 900
QUIT_SECONDS = 60
MARK = "*"
WIDTH = 60
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# the session host's progress lines (harness/progress.py), which differ by variant
# name and time: not gdb's answer
PROGRESS = re.compile(r"^\[ *[0-9]+\.[0-9]s\] ")


@dataclass(frozen=True)
class Line:
    """One line of the side-by-side answer."""
    left: str
    right: str

    @property
    def differs(self):
        return self.left != self.right


def answer_lines(text):
    """An answer's lines as gdb printed them: no colours, no carriage returns, the
    trace line (`+command`) and the host's progress lines left out."""
    rows = ANSI.sub("", text).replace("\r", "").split("\n")
    return [r for r in rows if r.strip() and not r.startswith("+") and not PROGRESS.match(r)]


def side_by_side(left, right) -> Tuple[Line, ...]:
    """The two answers' lines paired by position (each command prints the same keys
    in the same order on every variant), the shorter padded with ""."""
    return tuple(Line(a, b) for a, b in itertools.zip_longest(left, right, fillvalue=""))


def render(lines, names, width=WIDTH):
    """The text the person sees: a header with the two variants, then each line, a
    MARK first where the two differ."""
    def cut(s):
        return s if len(s) <= width else s[:width - 1] + "~"
    out = [f"  {cut(names[0]):<{width}} | {cut(names[1])}"]
    for ln in lines:
        mark = MARK if ln.differs else " "
        out.append(f"{mark} {cut(ln.left):<{width}} | {cut(ln.right)}")
    return "\n".join(out)


def child_argv(name, args, rundir):
    """`session NAME` into the pair's directory, with the pair's own options."""
    argv = [sys.executable, "-m", "harness", "session", name, "--into", str(rundir)]
    for f in args.variant_file:
        argv += ["--variant-file", str(f)]
    for opt in ("scenario", "insmod_args", "append", "runs_dir", "boot_timeout",
                "hang_timeout", "module_src"):
        value = getattr(args, opt)
        if value not in (None, ""):
            argv += ["--" + opt.replace("_", "-"), str(value)]
    return argv + [f for f, on in (("--kaslr", args.kaslr), ("--kvm", args.kvm),
                                   ("--lttng", args.lttng),
                                   ("--keep-vmcore", args.keep_vmcore)) if on]


class Ended(Exception):
    """One side's session ended before its prompt: its own one line and exit status,
    which the pair passes on (a boot failure is the same error as in `run`)."""

    def __init__(self, line, status):
        super().__init__(line)
        self.line = line
        self.status = status

    @classmethod
    def of(cls, name, output, status):
        said = [r for r in answer_lines(output) if r.startswith("ksymlab: ")]
        if said and status:
            return cls(said[-1], status)
        return cls(f"ksymlab: gdb: {name}: the session ended before its prompt "
                   f"(exit status {status})", status or EXIT["gdb"])


class Side:
    """One variant's session under pexpect."""

    def __init__(self, name, argv, rundir):
        self.name = name
        self.prompt = gdbchild.prompt_of(name)
        self.log = open(rundir / f"{name}.front.log", "w", encoding="utf-8")
        self.child = pexpect.spawn(argv[0], argv[1:], encoding="utf-8",
                                   codec_errors="replace", echo=False, timeout=None,
                                   dimensions=(50, 400))
        self.child.logfile_read = self.log

    def wait_prompt(self, seconds):
        """The text before gdb's next prompt; a session that ended says why."""
        try:
            self.child.expect_exact(self.prompt, timeout=seconds)
        except pexpect.EOF:
            self.child.close()
            raise Ended.of(self.name, self.child.before or "", self.child.exitstatus) \
                from None
        except pexpect.TIMEOUT:
            raise HarnessError("timeout", f"{self.name}: no gdb prompt within {seconds} s") \
                from None
        return self.child.before

    def close(self, graceful):
        """`quit` when `graceful` (at the prompt), else or when that does not end
        it SIGTERM (the session's handler stops its QEMU and gdb), SIGKILL last."""
        if graceful and self.child.isalive():
            try:
                self.child.sendline("quit")
                self.child.expect(pexpect.EOF, timeout=QUIT_SECONDS)
            except (pexpect.TIMEOUT, OSError):
                pass
        if self.child.isalive():
            self.child.kill(signal.SIGTERM)
            try:
                self.child.expect(pexpect.EOF, timeout=QUIT_SECONDS)
            except (pexpect.TIMEOUT, OSError):
                pass
        self.child.close(force=True)
        self.log.close()


def ask(sides, line):
    """Type `line` into both gdbs; their answers side by side."""
    for s in sides:
        s.child.sendline(line)
    answers = [without_echo(answer_lines(s.wait_prompt(ANSWER_SECONDS)), line)
               for s in sides]
    return side_by_side(*answers)


def without_echo(lines, typed):
    """gdb's readline echoes the line typed: not part of the answer."""
    return lines[1:] if lines and lines[0].strip() == typed.strip() else lines


def loop(sides, names, transcript):
    prompt = f"(ksymlab {' | '.join(names)}) "
    while True:
        try:
            line = input(prompt)
        except EOFError:
            return 0
        transcript.write(f"{prompt}{line}\n")
        if line.strip() in ("quit", "q"):
            return 0
        if not line.strip():
            continue
        shown = render(ask(sides, line), names)
        print(shown)
        transcript.write(shown + "\n")
        transcript.flush()


def main(names, args, rundir):
    """Both sessions, one prompt; the exit status."""
    sides, at_prompt = [], False
    try:
        for name in names:
            sides.append(Side(name, child_argv(name, args, rundir), rundir))
        for s in sides:
            started = answer_lines(s.wait_prompt(START_SECONDS))
            print(f"{s.name}: {started[-1] if started else 'at the prompt'}", file=sys.stderr)
        with open(rundir / "transcript.txt", "w", encoding="utf-8") as transcript:
            status = loop(sides, names, transcript)
        at_prompt = True
        return status
    except Ended as e:
        print(e.line, file=sys.stderr)
        return e.status
    finally:
        for s in sides:
            s.close(graceful=at_prompt)
