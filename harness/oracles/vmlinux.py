"""vmlinux's code as the host reads it, for the kernel call stack rows
(lttng/rows/kstack.py): which function an address lies in, whether a return address
follows a call and what that call enters, and which functions a function tail-jumps to.

The tables come from binutils' readelf (as drgn.py and guestroot.py read ELF): the
executable sections, the PT_LOAD segments (which file bytes hold a virtual address)
and the .symtab's FUNC and NOTYPE symbols in executable sections (a function's start
and name; at one address a FUNC before a NOTYPE, a GLOBAL before a LOCAL). The bytes
are read from the file through the segments.

Instructions are decoded by capstone from their real boundaries: a linear sweep of
one function at a time, from its symbol to the next symbol (or its section's end),
done when a frame or a reach() asks for that function and kept. A byte inside an
immediate or a displacement is never read as an opcode, so a 0xE8 or 0x74 there is
no call and no jump. A linear sweep goes wrong where a function holds data between
its instructions (a jump table, a literal pool): the sweep reads the data as
instructions and may leave the real boundaries for a few instructions after it.
vmlinux's functions hold none: gcc puts x86-64 jump tables in .rodata (and the kernel
builds with -fno-jump-tables under retpolines or IBT), the BUG() and exception tables
are sections of their own, and the padding between functions is int3 or nop, which
decode. What capstone 4.0.2 (Debian 12's) cannot decode (serialize, rdpkru, wrpkru,
some EVEX forms) it skips one byte at a time and counts in Code.unknown; 0F 01 xx
then reads as a 2-byte add and the sweep is back on the real boundaries at once.
"""

import bisect
import mmap
import subprocess
from dataclasses import dataclass
from enum import StrEnum
from typing import NamedTuple, Optional, Union

from ..errors import HarnessError

MASK = (1 << 64) - 1
TAIL_DEPTH = 2              # tail jumps followed from a call's target (reach())
INDIRECT_THUNK = "__x86_indirect_"      # retpoline thunks: an indirect call
STATIC_CALL = "__SCT__"                 # static call trampolines, patched at run time


class CallKind(StrEnum):
    DIRECT = "direct"       # call rel32 into a function in the file: target = its start
    STATIC = "static"       # call of a static call trampoline: target = its name
    INDIRECT = "indirect"   # call r/m64 or a retpoline thunk: target = how


class Call(NamedTuple):
    """The call instruction that ends at a return address."""
    kind: CallKind
    target: Union[int, str]


@dataclass(frozen=True)
class Segment:
    vaddr: int
    offset: int             # in the file
    size: int               # bytes in the file


@dataclass(frozen=True)
class Symbol:
    name: str
    value: int
    kind: str               # FUNC, NOTYPE, OBJECT, ...
    bind: str               # GLOBAL, LOCAL, WEAK
    section: Optional[int]  # its section's index, None for UND/ABS/COM


@dataclass(frozen=True)
class Tables:
    text: tuple             # (start, end) of each executable section, sorted
    execs: frozenset        # indices of the executable sections
    segments: tuple         # Segment of each PT_LOAD
    symbols: tuple          # Symbol of .symtab


@dataclass(frozen=True)
class Insn:
    address: int
    size: int
    target: Optional[int]   # a relative call's or jump's target; None: r/m operand


@dataclass(frozen=True)
class Code:
    """One function's instructions as the sweep found them."""
    start: int
    end: int
    calls: dict             # end address (the return address) -> Insn of a call
    jumps: frozenset        # targets of its relative jmp and jcc
    unknown: int            # bytes capstone skipped as data


def _readelf(path, flag):
    try:
        p = subprocess.run(["readelf", "-W", flag, str(path)], capture_output=True, text=True,
                           timeout=300)
    except OSError as e:
        raise HarnessError("deps", f"readelf: {e}; install binutils") from e
    except subprocess.SubprocessError as e:
        raise HarnessError("verify", f"readelf {flag} {path}: {e}") from e
    if p.returncode != 0 or "Error:" in p.stderr:
        raise HarnessError("verify", f"readelf {flag} {path}: "
                           f"{(p.stderr or p.stdout).strip()[:200]}")
    return p.stdout


def _sections(text):
    """{index: (addr, size, flags)} from readelf -S: [Nr] Name Type Addr Off Size ES Flg
    Lk Inf Al (Flg is empty for some sections)."""
    out = {}
    for line in text.splitlines():
        head, _, rest = line.strip().partition("]")
        t = rest.split()
        if not head.startswith("[") or not head[1:].strip().isdigit() or len(t) < 9:
            continue
        out[int(head[1:])] = (int(t[2], 16), int(t[4], 16), t[6] if len(t) == 10 else "")
    return out


def _segments(text):
    """The PT_LOAD segments from readelf -l: Type Offset VirtAddr PhysAddr FileSiz ..."""
    return tuple(Segment(int(t[2], 16), int(t[1], 16), int(t[4], 16))
                 for t in map(str.split, text.splitlines()) if t and t[0] == "LOAD")


def _symbols(text):
    """.symtab's symbols from readelf -s: Num: Value Size Type Bind Vis Ndx Name."""
    out, inside = [], False
    for line in text.splitlines():
        if line.startswith("Symbol table "):
            inside = "'.symtab'" in line
            continue
        t = line.split()
        if not inside or len(t) < 8 or not t[0].endswith(":") or t[1] == "Value":
            continue
        # Name and Ndx from the right: Vis may carry a bracketed note on some symbols
        out.append(Symbol(t[-1], int(t[1], 16), t[3], t[4],
                          int(t[-2]) if t[-2].isdigit() else None))
    return tuple(out)


def read_tables(path):
    """The tables of an ELF file, read by readelf."""
    secs = _sections(_readelf(path, "-S"))
    execs = frozenset(i for i, (_, size, flags) in secs.items() if "X" in flags)
    text = tuple(sorted((secs[i][0], secs[i][0] + secs[i][1]) for i in execs if secs[i][1]))
    return Tables(text, execs, _segments(_readelf(path, "-l")), _symbols(_readelf(path, "-s")))


def function_starts(tables):
    """{address: name} of the functions of the executable sections: at one address
    the FUNC before a NOTYPE, then the GLOBAL before a LOCAL, then the first."""
    best = {}
    for s in tables.symbols:
        if s.kind not in ("FUNC", "NOTYPE") or not s.name or s.section not in tables.execs:
            continue
        rank = (s.kind != "FUNC", s.bind != "GLOBAL")
        if s.value not in best or rank < best[s.value][0]:
            best[s.value] = (rank, s.name)
    return {a: n for a, (_, n) in best.items()}


@dataclass(frozen=True)
class Disassembler:
    cs: object              # capstone.Cs for x86-64, undecodable bytes skipped (id 0)
    call: int               # the instruction id of a near call
    branches: frozenset     # the ids of jmp and every jcc


def disassembler():
    """A Disassembler (one per Vmlinux: a capstone handle is not shared by threads)."""
    try:
        import capstone
    except ImportError as e:
        raise HarnessError("deps", "python3-capstone not found; install it") from e
    cs = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    cs.skipdata = True          # an undecodable byte is skipped, not the end of the sweep
    x86 = capstone.x86_const
    return Disassembler(cs, x86.X86_INS_CALL,
                        frozenset(v for k, v in vars(x86).items() if k.startswith("X86_INS_J")))


def _target(op_str):
    """A relative branch's target: capstone prints it as the absolute address (a
    register or memory operand never reads as a number)."""
    try:
        return int(op_str, 16) & MASK
    except ValueError:
        return None


def decode(code, start, dis):
    """Code of the bytes `code` at `start`, swept linearly by `dis` (disassembler():
    no detail, as the id, size and operand text are all it needs and detail costs 7x)."""
    calls, jumps, unknown = {}, set(), 0
    for insn in dis.cs.disasm(code, start):
        if insn.id == 0:
            unknown += insn.size
        elif insn.id == dis.call:
            end = insn.address + insn.size
            calls[end] = Insn(insn.address, insn.size, _target(insn.op_str))
        elif insn.id in dis.branches and (t := _target(insn.op_str)) is not None:
            jumps.add(t)
    return Code(start, start + len(code), calls, frozenset(jumps), unknown)


class Vmlinux:
    """vmlinux's functions and their code; use as a context manager (the file is mapped)."""

    def __init__(self, path):
        self.path = str(path)
        try:
            with open(path, "rb") as f:
                self.data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError) as e:
            raise HarnessError("verify", f"{path}: cannot read vmlinux ({e})") from e
        try:
            tables = self._tables()
        except HarnessError:
            self.close()
            raise
        self.segments, self.text = tables.segments, tables.text
        self.names = function_starts(tables)        # function start -> name
        self.starts = sorted(self.names)
        self.named = {}                             # name -> address (the first of a name)
        for s in tables.symbols:
            if s.kind in ("FUNC", "NOTYPE") and s.name:
                self.named.setdefault(s.name, s.value)
        self._code, self._reach, self._dis = {}, {}, None

    def _tables(self):
        if self.data[:6] != b"\x7fELF\x02\x01":
            raise HarnessError("verify", f"{self.path}: not a little-endian ELF64 file")
        tables = read_tables(self.path)
        if not tables.symbols:
            raise HarnessError("verify", f"{self.path}: no .symtab to name frames with")
        return tables

    def close(self):
        self.data.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def read(self, addr, n):
        """n bytes at virtual address `addr`, None outside the file's segments."""
        for s in self.segments:
            if s.vaddr <= addr and addr + n <= s.vaddr + s.size:
                return bytes(self.data[s.offset + addr - s.vaddr:s.offset + addr - s.vaddr + n])
        return None

    def _section(self, addr):
        k = bisect.bisect_right(self.text, (addr, MASK)) - 1
        return self.text[k] if k >= 0 and self.text[k][0] <= addr < self.text[k][1] else None

    def in_text(self, addr):
        return self._section(addr) is not None

    def symbol(self, addr):
        """(start, name) of the function `addr` lies in, None outside executable text."""
        if not self.in_text(addr):
            return None
        k = bisect.bisect_right(self.starts, addr) - 1
        return (self.starts[k], self.names[self.starts[k]]) if k >= 0 else None

    def end(self, start):
        """Where the function at `start` ends: the next function's start, or its
        section's end."""
        k = bisect.bisect_right(self.starts, start)
        section = self._section(start)             # None: a symbol at its section's end
        section_end = section[1] if section else start
        return min(self.starts[k], section_end) if k < len(self.starts) else section_end

    def code(self, start):
        """The Code of the function at `start`, decoded on first use."""
        if start not in self._code:
            end = self.end(start)
            self._dis = self._dis or disassembler()
            self._code[start] = decode(self.read(start, end - start) or b"", start, self._dis)
        return self._code[start]

    def call_at(self, ret):
        """The Call that ends at return address `ret`, None if the instruction that ends
        there is no call (or none ends there)."""
        sym = self.symbol(ret - 1)
        insn = self.code(sym[0]).calls.get(ret) if sym else None
        if insn is None:
            return None
        if insn.target is None:
            return Call(CallKind.INDIRECT, f"call r/m64, {insn.size} bytes")
        into = self.symbol(insn.target)
        if into is None:
            return None
        if into[0] == insn.target and into[1].startswith(INDIRECT_THUNK):
            return Call(CallKind.INDIRECT, f"retpoline {into[1]}")
        if into[0] == insn.target and into[1].startswith(STATIC_CALL):
            return Call(CallKind.STATIC, into[1])
        return Call(CallKind.DIRECT, into[0])

    def jumps(self, start):
        """The functions the function at `start` jumps to (jmp or jcc to another
        function's first byte)."""
        end = self.end(start)
        return {t for t in self.code(start).jumps if not start <= t < end and t in self.names}

    def reach(self, start):
        """The function at `start` and those it tail-jumps to, TAIL_DEPTH jumps deep:
        what a call to it can enter."""
        if start not in self._reach:
            out, todo = {start}, [start]
            for _ in range(TAIL_DEPTH):
                todo = [t for s in todo for t in self.jumps(s) if t not in out]
                out.update(todo)
            self._reach[start] = out
        return self._reach[start]
