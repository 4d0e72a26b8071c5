"""The vmlinux oracle (harness/oracles/vmlinux.py) against a vmlinux-like executable
that GNU as and ld build here from the syscall path's shape, with binutils' objdump
(libopcodes, not capstone) and nm (libbfd, not readelf) as the independent readers.

Its bytes are doctored: a jmp, jcc or call opcode inside another instruction's
immediate or displacement (in both builds; the "doctored" one also lacks
syscall_enter_from_user_mode's real tail jump), where the byte-wise decoder that
kstack.py had before the oracle (OldImage below, kept for the comparison only) found a
tail jump or a call site that does not exist, and accepted kernel stacks it should
have failed."""

import re
import subprocess

import pytest

from harness.errors import EXIT, HarnessError
from harness.lttng.rows import kstack
from harness.oracles import vmlinux
from harness.tests.lttng.test_lttng_kstack import M1, M2, guest, inputs

TEXT = 0xffffffff81000000


def fn(name, *body):
    return (f"\t.p2align 4, 0xcc\n\t.globl {name}\n\t.type {name}, @function\n{name}:\n"
            + "".join(f"\t{line}\n" for line in body))


# movabs $imm64, %rax whose immediate holds `e9 rel32` (jmp syscall_trace_enter) ...
JMP_IN_IMM = (".byte 0x48, 0xb8, 0x00, 0x00, 0xe9", ".long syscall_trace_enter - (. + 4)",
              ".byte 0x00")
# ... movl $imm32, disp32(%rbx) whose displacement ends `0f 85` (jne rel32) and whose
# immediate is the rel32 (jne syscall_trace_enter) ...
JCC_IN_DISP = (".byte 0xc7, 0x83, 0x00, 0x00, 0x0f, 0x85", ".long syscall_trace_enter - (. + 4)")
# ... mov $imm32, %eax whose immediate starts `74 rel8` (je next_fn)
JCC8_IN_IMM = (".byte 0xb8, 0x74", ".byte next_fn - (. + 1)", ".byte 0x00, 0x00")
# movabs $imm64, %rax whose immediate ends `e8 rel32` (call do_syscall_64), so that the
# byte-wise decoder read a call ending where the movabs ends
CALL_IN_IMM = (".byte 0x48, 0xb8, 0x00, 0x00, 0x00, 0xe8", ".long do_syscall_64 - (. + 4)")
SERIALIZE = ".byte 0x0f, 0x01, 0xe8"    # capstone 4.0.2 cannot decode it, objdump can


def source(doctored):
    """The assembly: 6.1's syscall path (as test_lttng_kstack.py lays it out), the
    call shapes the oracle tells apart, and, doctored, syscall_enter_from_user_mode
    without its tail jump (the jump bytes inside two other instructions instead)."""
    seufum = ("testl %edi, %edi", *JMP_IN_IMM, *JCC_IN_DISP, "ret") if doctored else \
        ("testl %edi, %edi", "jne syscall_trace_enter", "jmp syscall_trace_enter")
    return "".join([
        "\t.text\n\t.globl _text\n_text:\n",
        fn("startup_64", "nop", "ret"),
        fn("stack_trace_save", "nop", "ret"),
        fn("probe_builtin", "nop", "call stack_trace_save", "ret"),
        fn("__traceiter_sys_enter", "nop", "call *%rax", "ret"),
        fn("__SCT__tp_func_sys_enter", "jmp __traceiter_sys_enter"),
        fn("syscall_trace_enter", "nop", "call __SCT__tp_func_sys_enter", "nop",
           "call *%rax", "ret"),
        fn("syscall_enter_from_user_mode", *seufum),
        fn("do_syscall_64", "nop", "call syscall_enter_from_user_mode", "nop", "ret"),
        fn("entry_SYSCALL_64", "swapgs", "nop"),
        "\t.globl entry_SYSCALL_64_after_hwframe\nentry_SYSCALL_64_after_hwframe:\n",
        "\tcall do_syscall_64\n\tnop\n" + "".join(f"\t{x}\n" for x in CALL_IN_IMM),
        f"\t{SERIALIZE}\n\tcall do_syscall_64\n\tud2\n",
        # a noreturn call as the last instruction: its return address is the next
        # function's first byte (11 nops + 5 bytes of call fill the 16 to it)
        fn("noreturn_caller", *["nop"] * 11, "call stack_trace_save"),
        fn("near_fn", "nop", *JCC8_IN_IMM, "ret"),
        fn("spin", "pause", "jmp spin"),          # a jump to its own start: no tail jump
        fn("next_fn", "ret"),
        fn("__x86_indirect_thunk_rax", "jmp *%rax"),
        fn("retpoline_caller", "call __x86_indirect_thunk_rax", "call *0x8(%r12)",
           "call *next_fn(%rip)", "call 1f", "1: ret"),
    ])


def build(tmp, doctored):
    src, obj, out = tmp / "v.S", tmp / "v.o", tmp / "vmlinux"
    src.write_text(source(doctored))
    subprocess.run(["gcc", "-c", "-o", str(obj), str(src)], check=True)
    subprocess.run(["ld", "-o", str(out), f"-Ttext={TEXT:#x}", "-e", "startup_64",
                    "--build-id=none", "-z", "noexecstack", str(obj)], check=True)
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """{"honest": path, "doctored": path}."""
    return {k: build(tmp_path_factory.mktemp(k), k == "doctored")
            for k in ("honest", "doctored")}


INSN = re.compile(r"^\s*([0-9a-f]+):\t([0-9a-f ]+)\t(\S+)\s*(.*)$")
TARGET = re.compile(r"^([0-9a-f]+) <([^>+]+)(\+0x[0-9a-f]+)?>")


def objdump(path):
    """{function: [(address, size, mnemonic, operands)]} as objdump disassembles it."""
    out = subprocess.run(["objdump", "-d", "-z", "-w", str(path)], capture_output=True,
                         text=True, check=True).stdout
    funcs, cur = {}, None
    for line in out.splitlines():
        head = re.match(r"^([0-9a-f]+) <(.+)>:$", line)
        if head:
            cur = funcs.setdefault(head[2], [])
        elif (m := INSN.match(line)) and cur is not None:
            cur.append((int(m[1], 16), len(m[2].split()), m[3], m[4]))
    return funcs


def nm(path):
    """{name: address} of nm's text symbols (T or t)."""
    out = subprocess.run(["nm", str(path)], capture_output=True, text=True, check=True).stdout
    return {t[2]: int(t[0], 16) for t in map(str.split, out.splitlines())
            if len(t) == 3 and t[1] in "Tt"}


def test_the_functions_are_nms(built):
    syms = nm(built["honest"])
    with vmlinux.Vmlinux(built["honest"]) as v:
        assert {a for a in v.starts} == set(syms.values())
        assert all(v.named[n] == a for n, a in syms.items())
        # at _text's address the FUNC startup_64 names it, not the NOTYPE _text
        assert syms["_text"] == syms["startup_64"] == TEXT
        assert v.symbol(TEXT + 1) == (TEXT, "startup_64")
        hw = syms["entry_SYSCALL_64_after_hwframe"]
        assert v.symbol(hw) == (hw, "entry_SYSCALL_64_after_hwframe")
        assert v.symbol(hw - 1) == (syms["entry_SYSCALL_64"], "entry_SYSCALL_64")
        assert v.end(syms["entry_SYSCALL_64"]) == hw
        assert v.symbol(TEXT - 1) is None and v.read(TEXT, 1) == b"\x90"


def _expected_call(insn, starts):
    """What call_at() must say of the return address after objdump's instruction."""
    _, _, mnemonic, ops = insn
    if mnemonic != "call":
        return None
    if ops.startswith("*"):
        return ("indirect", f"call r/m64, {insn[1]} bytes")
    m = TARGET.match(ops)
    name = m[2]
    if name.startswith("__x86_indirect_"):
        return ("indirect", f"retpoline {name}")
    if name.startswith("__SCT__"):
        return ("static", name)
    return ("direct", starts[name])


@pytest.mark.parametrize("which", ["honest", "doctored"])
def test_every_instruction_end_is_read_as_objdump_reads_it(built, which):
    """Each instruction's end is a return address only after a call, with objdump's
    target; no other address in a function is one (objdump's boundaries)."""
    funcs, starts = objdump(built[which]), nm(built[which])
    seen = {"direct": 0, "static": 0, "indirect": 0}
    with vmlinux.Vmlinux(built[which]) as v:
        for name, insns in funcs.items():
            ends = {a + n for a, n, _, _ in insns}
            for insn in insns:
                want = _expected_call(insn, starts)
                assert v.call_at(insn[0] + insn[1]) == want, (name, insn)
                if want:
                    seen[want[0]] += 1
            inside = range(insns[0][0] + 1, insns[-1][0] + insns[-1][1])
            assert all(v.call_at(a) is None for a in inside if a not in ends), name
    assert seen == {"direct": 6, "static": 1, "indirect": 5}
    with vmlinux.Vmlinux(built[which]) as v:     # the noreturn call, read from before
        assert v.call_at(starts["near_fn"]) == ("direct", starts["stack_trace_save"])


def _objdump_jumps(insns, starts):
    """The function starts objdump's jmp and jcc instructions of a function reach."""
    out = set()
    for a, n, mnemonic, ops in insns:
        m = TARGET.match(ops)
        if mnemonic.startswith("j") and m and not m[3] and m[2] in starts:
            out.add(starts[m[2]])
    first = insns[0][0]
    return {t for t in out if not first <= t < insns[-1][0] + insns[-1][1]}


@pytest.mark.parametrize("which", ["honest", "doctored"])
def test_the_tail_jumps_are_objdumps(built, which):
    funcs, starts = objdump(built[which]), nm(built[which])
    with vmlinux.Vmlinux(built[which]) as v:
        for name, insns in funcs.items():
            if name in starts:
                assert v.jumps(starts[name]) == _objdump_jumps(insns, starts), name
        seufum = starts["syscall_enter_from_user_mode"]
        reach = {v.names[a] for a in v.reach(seufum)}
    assert reach == ({"syscall_enter_from_user_mode"} if which == "doctored" else
                     {"syscall_enter_from_user_mode", "syscall_trace_enter"})


def test_an_undecodable_instruction_costs_no_boundary(built):
    """serialize (0F 01 E8) is unknown to capstone 4.0.2: one byte is skipped and
    counted, and the call after it still ends where objdump says."""
    starts = nm(built["honest"])
    insns = objdump(built["honest"])["entry_SYSCALL_64_after_hwframe"]
    (ser,) = [i for i in insns if i[2] == "serialize"]
    (after,) = [i for i in insns if i[0] == ser[0] + ser[1]]
    with vmlinux.Vmlinux(built["honest"]) as v:
        code = v.code(starts["entry_SYSCALL_64_after_hwframe"])
        assert code.unknown == 1
        assert v.call_at(after[0] + after[1]) == ("direct", starts["do_syscall_64"])


# ---- the byte-wise decoder kstack.py had (before oracles/vmlinux.py), for comparison ----

def _old_ff2(insn):
    if insn and insn[0] & 0xF0 == 0x40:
        insn = insn[1:]
    if len(insn) < 2 or insn[0] != 0xFF or (insn[1] >> 3) & 7 != 2:
        return False
    mod, rm, n = insn[1] >> 6, insn[1] & 7, 2
    if mod != 3 and rm == 4:
        if len(insn) < 3:
            return False
        n += 1 + (4 if mod == 0 and insn[2] & 7 == 5 else 0)
    n += {0: 4 if rm == 5 else 0, 1: 1, 2: 4, 3: 0}[mod]
    return n == len(insn)


class OldImage(kstack.Image):
    """kstack.Image with the old call_at() and _jumps(): every byte an opcode."""

    def call_at(self, ret):
        call = self._old_call_at(ret)
        return vmlinux.Call(vmlinux.CallKind(call[0]), call[1]) if call else None

    def _old_call_at(self, ret):
        b = self.read(ret - 7, 7)
        if b is None:
            return None
        target = None
        if b[2] == 0xE8:
            target = (ret + int.from_bytes(b[3:], "little", signed=True)) & vmlinux.MASK
            sym = self.symbol(target)
            if sym and sym[0] == target:
                if sym[1].startswith("__x86_indirect_"):
                    return ("indirect", f"retpoline {sym[1]}")
                if sym[1].startswith("__SCT__"):
                    return ("static", sym[1])
                return ("direct", target)
        for n in range(2, 8):
            if _old_ff2(b[7 - n:]):
                return ("indirect", f"call r/m64, {n} bytes")
        sym = self.symbol(target) if target is not None else None
        return ("direct", sym[0]) if sym else None

    def jumps(self, start):
        end = min(self.end(start), start + 0x4000)
        b = self.read(start, end - start) or b""
        out = set()
        for k, op in enumerate(b):
            if op in (0xE9, 0xEB) or 0x70 <= op <= 0x7F:
                n = 5 if op == 0xE9 else 2
                rel = b[k + 1:k + n]
            elif op == 0x0F and k + 1 < len(b) and 0x80 <= b[k + 1] <= 0x8F:
                n, rel = 6, b[k + 2:k + 6]
            else:
                continue
            if len(rel) != n - 1 - (op == 0x0F):
                continue
            t = (start + k + n + int.from_bytes(rel, "little", signed=True)) & vmlinux.MASK
            if not start <= t < end and t in self.names:
                out.add(t)
        return out


def test_the_old_decoder_read_jumps_and_calls_inside_immediates(built):
    starts = nm(built["doctored"])
    funcs = objdump(built["doctored"])
    assert not [i for i in funcs["near_fn"] if i[2].startswith("j")]     # objdump: none
    after = [i for i in funcs["entry_SYSCALL_64_after_hwframe"] if i[2] == "movabs"]
    fake_ret = after[0][0] + after[0][1]
    with OldImage(built["doctored"]) as old, vmlinux.Vmlinux(built["doctored"]) as new:
        for name, target in (("near_fn", "next_fn"),
                             ("syscall_enter_from_user_mode", "syscall_trace_enter")):
            assert old.jumps(starts[name]) == {starts[target]}
            assert new.jumps(starts[name]) == set()
        assert old.call_at(fake_ret) == ("direct", starts["do_syscall_64"])
        assert new.call_at(fake_ret) is None


def kstack_rows(path, image_class, stack, unwinder="orc"):
    ctx = inputs([{"tid": 60, "stack": None, "kstack": stack}], guest())
    with image_class(path, unwinder) as image:
        rows = kstack.rows(ctx, image)
    return sorted(c.key for c in rows if c.disagrees)


def _rets(path):
    """The return addresses of the syscall path, found by objdump: after the call into
    the function named, in the function named."""
    funcs = objdump(path)

    def after(fn_, callee, mnemonic="call"):
        return [a + n for a, n, m, ops in funcs[fn_] if m == mnemonic and callee in ops][0]
    return {"tp": after("syscall_trace_enter", "<__SCT__tp_func_sys_enter>"),
            "do": after("do_syscall_64", "<syscall_enter_from_user_mode>"),
            "entry": after("entry_SYSCALL_64_after_hwframe", "<do_syscall_64>"),
            "fake": after("entry_SYSCALL_64_after_hwframe", "$", "movabs")}


ALL = ["kstack/chain"] + [f"kstack/frame{i}" for i in range(5)]


@pytest.mark.parametrize("unwinder, tail_fails, call_fails", [
    # frames are unwound: every frame further in than the break is off the chain
    # (the entry frame's call does enter do_syscall_64 in the first stack)
    ("orc", ALL[:-1], ALL),
    # the guess unwinder: only the chain's own frame fails, the rest pass as stale
    ("guess", ["kstack/chain", "kstack/frame3"], ["kstack/chain", "kstack/frame4"])])
def test_the_old_decoder_accepted_stacks_the_new_one_fails(built, unwinder, tail_fails,
                                                           call_fails):
    """The chain through a tail jump that exists only inside immediates, and an entry
    frame after a call that is a movabs: the old decoder passed both stacks."""
    r = _rets(built["doctored"])
    tail = [M1, M2, r["tp"], r["do"], r["entry"]]
    assert kstack_rows(built["doctored"], OldImage, tail, unwinder) == []
    assert kstack_rows(built["doctored"], kstack.Image, tail, unwinder) == tail_fails
    honest = _rets(built["honest"])
    assert kstack_rows(built["honest"], kstack.Image,
                       [M1, M2, honest["tp"], honest["do"], honest["entry"]], unwinder) == []
    call = [M1, M2, honest["tp"], honest["do"], honest["fake"]]
    assert kstack_rows(built["honest"], OldImage, call, unwinder) == []
    assert kstack_rows(built["honest"], kstack.Image, call, unwinder) == call_fails


def test_an_unreadable_vmlinux_is_one_line(tmp_path, built):
    (tmp_path / "text").write_text("not ELF\n")
    stripped = tmp_path / "stripped"
    subprocess.run(["objcopy", "--strip-all", str(built["honest"]), str(stripped)], check=True)
    for path, what in ((tmp_path / "none", "cannot read vmlinux"),
                       (tmp_path / "text", "not a little-endian ELF64 file"),
                       (stripped, "no .symtab to name frames with")):
        with pytest.raises(HarnessError) as e:
            vmlinux.Vmlinux(path)
        assert e.value.step == "verify" and EXIT[e.value.step] == 41
        assert e.value.one_line() == f"ksymlab: verify: {path}: " + \
            (f"{what} ([Errno 2] No such file or directory: '{path}')"
             if what.startswith("cannot") else what)
    (row,) = kstack.rows_for(inputs([], guest()), stripped, tmp_path / "config")
    assert row.disagrees and row.reason.endswith("no .symtab to name frames with")
