"""The kernel call stack rows (harness/lttng/rows/kstack.py) against a vmlinux built here:
a tiny ELF64 whose .text holds the syscall path as 6.1 lays it out (entry ->
do_syscall_64 -> syscall_enter_from_user_mode, which tail-jumps to
syscall_trace_enter -> the sys_enter static call -> the tracepoint iterator's
indirect call), so each doctored stack must turn a passing row into a failing one."""

import struct

import pytest

from harness.checks.confusions import CONFUSIONS, audit
from harness.model.results import Check
from harness.lttng.rows import coverage, kstack
from harness.lttng.boot import guestlines, trace
from harness.lttng.rows.inputs import Inputs
from harness.checks import labels

TEXT = 0xffffffff81000000
MODULE = 0xffffffffc0000000
USER = [0x401650, 0x401656, 0x40166c, 0x401684, 0x4017aa, 0x4017cc, 0x4017ee, 0x401800]

# name -> pieces: ("call"|"jmp", target[, label]), ("raw", bytes[, label]), ("nop", n),
# ("ret",), ("label", symbol): a label names the address after its instruction.
FUNCS = [
    ("startup_64", [("nop", 16), ("ret",)]),
    ("stack_trace_save", [("nop", 8), ("ret",)]),
    ("probe_builtin", [("nop", 3), ("call", "stack_trace_save", "ret_probe"), ("ret",)]),
    ("__traceiter_sys_enter", [("nop", 4), ("raw", b"\xff\xd0", "ret_iter"), ("ret",)]),
    ("__SCT__tp_func_sys_enter", [("jmp", "__traceiter_sys_enter")]),
    ("syscall_trace_enter", [("nop", 6), ("call", "__SCT__tp_func_sys_enter", "ret_tp"),
                             ("nop", 1), ("raw", b"\xff\xd0", "ret_ptrace"), ("ret",)]),
    ("syscall_enter_from_user_mode", [("nop", 2), ("jmp", "syscall_trace_enter")]),
    ("do_syscall_64", [("nop", 3), ("call", "syscall_enter_from_user_mode", "ret_do"),
                       ("nop", 4), ("ret",)]),
    ("entry_SYSCALL_64", [("nop", 6), ("label", "entry_SYSCALL_64_after_hwframe"), ("nop", 4),
                          ("call", "do_syscall_64", "ret_entry"), ("nop", 2), ("ret",)]),
    ("junk_fn", [("nop", 16), ("ret",)]),
    ("other_callee", [("ret",)]),
    ("other_fn", [("nop", 2), ("call", "other_callee", "ret_other"), ("ret",)]),
    ("__x86_indirect_thunk_rax", [("raw", b"\xff\xe0")]),
    ("retpoline_caller", [("call", "__x86_indirect_thunk_rax", "ret_thunk"),
                          ("raw", b"\x41\xff\x54\x24\x08", "ret_sib"),     # call *0x8(%r12)
                          ("raw", b"\xff\x15\x10\x00\x00\x00", "ret_rip"),  # call *x(%rip)
                          ("ret",)]),
]
SIZE = {"call": 5, "jmp": 5, "nop": None, "ret": 1, "label": 0, "raw": None}


def _assemble():
    """(text bytes, {symbol: address}, {label: address}, [(symbol, type)])."""
    syms, labels_, order, addr = {}, {}, [], TEXT
    for name, pieces in FUNCS:                       # pass 1: addresses
        addr = (addr + 15) & ~15
        syms[name] = addr
        order.append((name, 2))
        for p in pieces:
            if p[0] == "label":
                syms[p[1]] = addr
                order.append((p[1], 0))
                continue
            addr += p[1] if p[0] == "nop" else len(p[1]) if p[0] == "raw" else SIZE[p[0]]
            if len(p) == 3:
                labels_[p[2]] = addr
    out = bytearray()
    for name, pieces in FUNCS:                       # pass 2: bytes
        out += b"\xcc" * (syms[name] - TEXT - len(out))
        for p in pieces:
            here = TEXT + len(out)
            if p[0] in ("call", "jmp"):
                out += (b"\xe8" if p[0] == "call" else b"\xe9") + \
                    struct.pack("<i", syms[p[1]] - (here + 5))
            elif p[0] == "nop":
                out += b"\x90" * p[1]
            elif p[0] == "raw":
                out += p[1]
            elif p[0] == "ret":
                out += b"\xc3"
    syms["_text"] = TEXT
    order.append(("_text", 0))
    return bytes(out), syms, labels_, order


def write_vmlinux(path):
    """A minimal ELF64 vmlinux: one PT_LOAD, .text, .symtab, .strtab, .shstrtab."""
    text, syms, labels_, order = _assemble()
    strtab, symtab = bytearray(b"\0"), bytearray(b"\0" * 24)
    for name, kind in order:
        symtab += struct.pack("<IBBHQQ", len(strtab), (1 << 4) | kind, 0, 1, syms[name], 0)
        strtab += name.encode() + b"\0"
    shstr = b"\0.text\0.symtab\0.strtab\0.shstrtab\0"
    off_text = 0x1000
    off_sym = off_text + len(text)
    off_str = off_sym + len(symtab)
    off_shs = off_str + len(strtab)
    shoff = (off_shs + len(shstr) + 7) & ~7
    ehdr = struct.pack("<16sHHIQQQIHHHHHH", b"\x7fELF\x02\x01\x01" + b"\0" * 9, 2, 62, 1, TEXT,
                       64, shoff, 0, 64, 56, 1, 64, 5, 4)
    phdr = struct.pack("<IIQQQQQQ", 1, 5, off_text, TEXT, 0x1000000, len(text), len(text), 0x1000)
    shdrs = [b"\0" * 64,
             struct.pack("<IIQQQQIIQQ", 1, 1, 6, TEXT, off_text, len(text), 0, 0, 16, 0),
             struct.pack("<IIQQQQIIQQ", 7, 2, 0, 0, off_sym, len(symtab), 3, 1, 8, 24),
             struct.pack("<IIQQQQIIQQ", 15, 3, 0, 0, off_str, len(strtab), 0, 0, 1, 0),
             struct.pack("<IIQQQQIIQQ", 23, 3, 0, 0, off_shs, len(shstr), 0, 0, 1, 0)]
    blob = bytearray(ehdr + phdr)
    blob += b"\0" * (off_text - len(blob)) + text + symtab + strtab + shstr
    blob += b"\0" * (shoff - len(blob)) + b"".join(shdrs)
    path.write_bytes(bytes(blob))
    return syms, labels_


@pytest.fixture(scope="module")
def fake(tmp_path_factory):
    path = tmp_path_factory.mktemp("kstack") / "vmlinux"
    syms, lab = write_vmlinux(path)
    return path, syms, lab


def guest(slide=0, ktext=True):
    text = ("ustack-expect pid=60 tgid=59 depth=1 ret=0x401656\n"
            f"module name=lttng_tracer size=65536 addr={MODULE:#x}\n"
            f"module name=other_mod size=4096 addr={MODULE + 0x100000:#x}\n")
    if ktext:
        text += f"ktext addr={TEXT + slide:#x}\n"
    return guestlines.parse(text + "KSYMLAB-LTTNG-END\n")


def inputs(getppid, guest_, lost=()):
    """The Inputs of the kstack rows: a summary with these getppid events."""
    summary = dict(trace.new_summary(), getppid=getppid)
    return Inputs(trace.TraceSummary.parse(summary), guest_, None, lost,
                  {"callstack_kernel": "why"})


def run(fake, kstack_, unwinder="orc", lost=(), slide=0, ktext=True, user=USER):
    ctx = inputs([{"tid": 60, "stack": user, "kstack": kstack_}], guest(slide, ktext), lost)
    with kstack.Image(fake[0], unwinder) as image:
        return {c.key: c for c in kstack.rows(ctx, image)}


def failing(rows):
    return sorted(k for k, c in rows.items() if c.disagrees)


M1, M2 = MODULE + 0x1234, MODULE + 0x2345


def chain(lab, *names):
    return [lab[n] if isinstance(n, str) else n for n in names]


def good(lab):
    """The ORC shape: LTTng's two probe frames, then the syscall path outward."""
    return chain(lab, M1, M2, "ret_tp", "ret_do", "ret_entry")


def stale(lab, syms):
    """The guess unwinder's shape: the same, with stale text words between."""
    return chain(lab, M1, syms["stack_trace_save"] + 3, M2, "ret_other", "ret_tp",
                 syms["junk_fn"] + 5, "ret_do", "ret_entry")


def test_the_syscall_chain_passes(fake):
    _, syms, lab = fake
    rows = run(fake, good(lab))
    assert failing(rows) == []
    c = rows["kstack/chain"]
    assert c.info["chain"] == [4, 3, 2] and c.info["tracepoint"] == 2
    assert c.info["calls"] == {"direct": 2, "static": 1, "indirect": 0}
    assert c.info["tail_calls"] == 1 and c.info["module_frames"] == 2
    assert c.sources["vmlinux call sites"] == ("entry_SYSCALL_64_after_hwframe+0x9 > "
                                               "do_syscall_64+0x8 > syscall_trace_enter+0xb")
    assert "tail call to syscall_trace_enter" in rows["kstack/frame3"].sources["vmlinux call sites"]
    assert rows["kstack/frame0"].sources["guest lsmod"] == "lttng_tracer"
    # the guess unwinder's stale words pass there, not where frames are unwound
    rows = run(fake, stale(lab, syms), unwinder="guess")
    assert failing(rows) == [] and rows["kstack/chain"].info["stale"] == 1
    assert "stale" in rows["kstack/frame5"].sources["vmlinux call sites"]
    assert "LTTng's side" in rows["kstack/frame3"].sources["vmlinux call sites"]
    assert {"kstack/frame1", "kstack/frame3", "kstack/frame5"} <= \
        set(failing(run(fake, stale(lab, syms))))


@pytest.mark.parametrize("unwinder", ["orc", "guess"])
def test_a_chain_shifted_by_one_frame_fails(fake, unwinder):
    _, syms, lab = fake
    right = good(lab)
    outward = right[1:] + [lab["ret_other"]]            # one frame past the entry
    assert "kstack/chain" in failing(run(fake, outward, unwinder))
    inward = [M1] + right[:-1]                          # the entry frame gone
    assert "kstack/chain" in failing(run(fake, inward, unwinder))
    # each direct call's row tells the function it enters from the one further in
    rows = run(fake, right, unwinder)
    assert rows["kstack/frame4"].info["confusions"]["one frame more or less"] == \
        ["do_syscall_64", "syscall_trace_enter"]
    assert rows["kstack/frame3"].info["confusions"]["one frame more or less"] == \
        ["syscall_trace_enter", "[lttng_tracer]"]


@pytest.mark.parametrize("unwinder", ["orc", "guess"])
def test_a_dropped_middle_frame_fails(fake, unwinder):
    _, syms, lab = fake
    stack = good(lab) if unwinder == "orc" else stale(lab, syms)
    stack.remove(lab["ret_do"])
    rows = run(fake, stack, unwinder)
    assert "kstack/chain" in failing(rows)
    entry = f"kstack/frame{len(stack) - 1}"
    assert entry in failing(rows) and "no frame further in" in rows[entry].reason


@pytest.mark.parametrize("unwinder", ["orc", "guess"])
def test_a_user_address_fails(fake, unwinder):
    _, syms, lab = fake
    stack = good(lab)
    stack[1] = USER[1]                  # the callstack-user value at that depth
    rows = run(fake, stack, unwinder)
    assert failing(rows) == ["kstack/chain", "kstack/frame1"]
    assert "a user address" in rows["kstack/frame1"].reason
    # the audit: every row tells its kernel address from the user one at its depth
    a = {x.confusion: x for x in audit(_as_json(run(fake, good(lab), unwinder)), ["lttng"])}
    assert a["a user address"].rows == 5 and a["a user address"].telling == 5
    assert a["one frame more or less"].rows == 2 and not a["one frame more or less"].weak


def test_a_frame_after_no_call_fails(fake):
    _, syms, lab = fake
    stack = good(lab)
    stack[3] = syms["do_syscall_64"] + 1        # in do_syscall_64, after no call
    rows = run(fake, stack)
    assert {"kstack/chain", "kstack/frame3", "kstack/frame4"} <= set(failing(rows))
    assert "no call ends here" in rows["kstack/frame3"].sources["vmlinux call sites"]
    # a stray word between the frames of an unwound chain fails where frames are
    # unwound, and passes as stale under the guess unwinder
    stray = good(lab)
    stray.insert(3, syms["junk_fn"] + 5)
    rows = run(fake, stray)
    assert "kstack/frame3" in failing(rows)
    # the frame whose next frame in is the stray word fails there too: its call is
    # read against its neighbour, not against the nearest frame that fits
    assert "kstack/frame4" in failing(rows) and "no frame further in" in \
        rows["kstack/frame4"].reason
    assert failing(run(fake, stray, "guess")) == []


def test_the_chain_must_reach_the_tracepoint(fake):
    """A chain that leaves syscall_trace_enter by another (indirect) call than the
    tracepoint's is not the syscall tracepoint's path, though each frame passes."""
    _, syms, lab = fake
    rows = run(fake, chain(lab, M1, M2, "ret_ptrace", "ret_do", "ret_entry"), "guess")
    assert failing(rows) == ["kstack/chain"]
    assert "tracepoint" in rows["kstack/chain"].reason


def test_the_chain_must_pass_do_syscall_64(fake):
    """chain_problems() on a chain that links the entry to syscall_trace_enter without
    a do_syscall_64 frame (as a tail call from do_syscall_64 would leave it)."""
    _, syms, lab = fake
    mods = guest().module
    with kstack.Image(fake[0], "orc") as image:
        frames = [kstack.frame(a, image, 0, mods) for a in good(lab)]
        for f in frames:
            f.ok = True
        assert kstack.chain_problems(frames, image, [4, 3, 2], 2, True) == []
        assert kstack.chain_problems(frames, image, [4, 2], 2, True) == \
            ["no do_syscall_64 frame on the chain"]


def test_an_indirect_call_is_accepted_and_counted(fake):
    _, syms, lab = fake
    # two probes on sys_enter: the static call enters the iterator, which calls them
    stack = chain(lab, M1, "ret_iter", "ret_tp", "ret_do", "ret_entry")
    rows = run(fake, stack)
    assert failing(rows) == []
    assert rows["kstack/frame1"].info["call"] == "indirect"
    assert rows["kstack/chain"].info["indirect_frames"] == 2        # the iterator, static
    with kstack.Image(fake[0]) as image:
        assert image.call_at(lab["ret_thunk"]) == ("indirect",
                                                   "retpoline __x86_indirect_thunk_rax")
        assert image.call_at(lab["ret_sib"])[0] == "indirect"
        assert image.call_at(lab["ret_rip"])[0] == "indirect"
        assert image.call_at(lab["ret_tp"]) == ("static", "__SCT__tp_func_sys_enter")
        assert image.call_at(syms["junk_fn"] + 5) is None


def test_the_innermost_frame_calls_the_recorder(fake):
    """A probe built into vmlinux: its return address must follow a call of
    stack_trace_save(); another function's call site there fails."""
    _, syms, lab = fake
    right = chain(lab, "ret_probe", "ret_iter", "ret_tp", "ret_do", "ret_entry")
    assert failing(run(fake, right)) == []
    wrong = chain(lab, "ret_other", "ret_iter", "ret_tp", "ret_do", "ret_entry")
    rows = run(fake, wrong)
    assert "kstack/frame0" in failing(rows) and "stack_trace_save" in rows["kstack/frame0"].reason


def test_a_frame_in_another_module_fails(fake):
    _, syms, lab = fake
    stack = good(lab)
    stack[0] = MODULE + 0x100010                # other_mod: not LTTng's
    assert "kstack/frame0" in failing(run(fake, stack))
    # an LTTng frame outward of the tracepoint's call is not the probe's, where
    # frames are unwound
    misplaced = chain(lab, M1, "ret_tp", M2, "ret_do", "ret_entry")
    rows = run(fake, misplaced)
    assert "kstack/frame2" in failing(rows) and "not LTTng's side" in rows["kstack/frame2"].reason


def test_the_kaslr_slide_is_taken_off(fake):
    _, syms, lab = fake
    slide = 6 << 20
    moved = [a + slide if a < MODULE else a for a in good(lab)]
    assert failing(run(fake, moved, slide=slide)) == []
    assert failing(run(fake, moved)) != []                      # read without the slide
    assert failing(run(fake, good(lab), ktext=False)) == ["kstack/chain"]
    assert failing(run(fake, good(lab), slide=0x1000)) == ["kstack/chain"]


def test_a_lost_feature_behaves_as_the_user_stack(fake):
    """As ustack's rows: listed lost and absent passes; absent and not listed fails;
    listed lost but recorded fails."""
    _, syms, lab = fake
    assert failing(run(fake, None, lost=("callstack_kernel",))) == []
    rows = run(fake, None)
    assert failing(rows) == ["kstack/chain"] and "recorded no callstack_kernel" in \
        rows["kstack/chain"].reason
    assert failing(run(fake, [], lost=("callstack_kernel",))) == []
    rows = run(fake, good(lab), lost=("callstack_kernel",))
    assert len(failing(rows)) == len(rows) == 6
    assert all("expected lost" in c.reason for c in rows.values())


def _as_json(rows):
    return [{"id": c.id, "kind": c.kind, "info": dict(c.info)} for c in rows.values()]


def test_the_rows_sources_are_labelled_and_confusions_audited(fake):
    _, syms, lab = fake
    rows = {**run(fake, good(lab)), **run(fake, None)}
    sources = {s for c in rows.values() for s in c.sources}
    assert {s for s in sources if labels.label(s)[0] == "unlabelled"} == set()
    assert labels.label("vmlinux call sites")[0] == labels.FILE
    assert labels.label("lttng callstack_kernel")[0] == labels.CLAIM
    carried = {n for c in rows.values() for n in (c.info.get("confusions") or {})}
    assert carried and carried <= set(CONFUSIONS["lttng"]), carried - set(CONFUSIONS["lttng"])


def test_coverage_reads_the_kstack_rows(tmp_path):
    (tmp_path / "ko").mkdir()
    good_ = [Check("lttng", "kstack/chain", {}, True)]
    bad = [Check("lttng", "kstack/frame2", {}, False)]
    row = {c.key: c for c in coverage.rows(tmp_path, False, good_, (), "2.13.9")}["stack_trace_save"]
    assert row.get("feature").startswith("works")
    row = {c.key: c for c in coverage.rows(tmp_path, False, bad, (), "2.13.9")}["stack_trace_save"]
    assert row.get("feature").startswith("wrong")
    assert row.info["feature"] == "callstack-kernel context"


def test_the_trace_keeps_the_kernel_stack():
    out = trace.new_summary()
    trace.add_event(out, "syscall_entry_getppid", {"tid": 60, "callstack_user": [1, 2],
                                                   "callstack_kernel": [TEXT + 3, TEXT + 4]})
    trace.add_event(out, "syscall_entry_getppid", {"tid": 61})
    assert out["getppid"] == [{"tid": 60, "stack": [1, 2], "kstack": [TEXT + 3, TEXT + 4]},
                              {"tid": 61, "stack": None, "kstack": None}]



def test_a_summary_from_before_the_kernel_context_has_no_kernel_stack(fake):
    old = inputs([{"tid": 60, "stack": USER}], guest())         # no kstack key
    with kstack.Image(fake[0], "orc") as image:
        got = kstack.rows(old, image)
    assert [(c.key, c.disagrees) for c in got] == [("kstack/chain", True)]


def test_unwinder_and_truncation(tmp_path, fake):
    cfg = tmp_path / "config"
    cfg.write_text("CONFIG_X=y\nCONFIG_UNWINDER_GUESS=y\n")
    assert kstack.unwinder(cfg) == "guess"
    cfg.write_text("# CONFIG_UNWINDER_GUESS is not set\nCONFIG_UNWINDER_ORC=y\n")
    assert kstack.unwinder(cfg) == "orc"
    assert kstack.unwinder(tmp_path / "none") is None
    _, syms, lab = fake
    full = good(lab) + [kstack.MASK]            # LTTng's delimiter of a full stack
    rows = run(fake, full)
    assert rows["kstack/chain"].info["truncated"] and failing(rows) == []
    assert rows["kstack/chain"].info["frames"] == 5
