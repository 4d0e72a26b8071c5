"""The kernel call stack of LTTng's callstack-kernel context (stack_trace_save(), by
name or through its export), rows lttng:kstack/*, against vmlinux's own call sites.

The oracle reads the built vmlinux on the host and nothing else of the kernel
(oracles/vmlinux.py): its symbol table (.symtab) names each recorded address, and its
function's instructions, decoded from their real boundaries, say whether it is a
return address: the instruction that ends there is a call. A direct call must enter the
function the next frame further in lies in, or one it tail-jumps to (6.1's
syscall_enter_from_user_mode() jumps to syscall_trace_enter()); an indirect call
(call r/m64, a retpoline thunk) or a static call (call __SCT__*, patched at run time)
has no target in the file and is accepted and counted. The innermost frame's call
enters stack_trace_save() itself (or is indirect). Frames in a module (LTTng's
probe) are named by the guest's /proc/modules and must be an LTTng module's.

The chain must run from the syscall entry (entry_SYSCALL_64*, whose call enters
do_syscall_64) through do_syscall_64 to the sys_enter tracepoint's call into the
probe, with LTTng's own frames further in. The rule depends on the guest kernel's
unwinder (its .config): ORC and frame pointers unwind call frames, so every frame
is checked against the next one in. The guess unwinder (CONFIG_UNWINDER_GUESS,
tinyconfig's default and every ksymlab tree's) records every kernel text address
it finds on the stack, stale words among them: there the chain is linked through
the frames (the nearest frame further in that continues it), a frame off the chain
passes as stale only if it is kernel text, and LTTng's side is not linked.

The guest prints _text from /proc/kallsyms (`ktext`): the LTTng guest boots with
nokaslr (session.py passes no kaslr), and any slide is taken off before a frame is
looked up, so the rows stay checkable under KASLR.
"""

from dataclasses import dataclass, field
from typing import Optional

from ...checks.confusions import pair
from ...model.enums import Source
from ...model.results import Check, hex_text
from ...errors import HarnessError
from ...oracles.vmlinux import MASK, Call, CallKind, Vmlinux

FEATURE = "callstack_kernel"
RECORDER = "stack_trace_save"
ENTRY = "entry_SYSCALL_64"              # entry_SYSCALL_64_after_hwframe on 6.1 and 6.12
SYSCALL = "do_syscall_64"
TRACEPOINT = ("__SCT__tp_func_sys_enter", "__traceiter_sys_enter")
RELIABLE = ("orc", "frame-pointer")
KERNEL_HALF = 1 << 63


def unwinder(config):
    """The unwinder a kernel .config selects: "orc", "frame-pointer", "guess" or None."""
    try:
        text = open(config).read()
    except OSError:
        return None
    for name, opt in (("orc", "ORC"), ("frame-pointer", "FRAME_POINTER"), ("guess", "GUESS")):
        if f"CONFIG_UNWINDER_{opt}=y" in text.splitlines():
            return name
    return None


class Image(Vmlinux):
    """vmlinux as the rows read it (oracles/vmlinux.py) and the unwinder of the guest
    kernel built from it (its .config)."""

    def __init__(self, path, unwinder=None):
        super().__init__(path)
        self.unwinder = unwinder


@dataclass
class Frame:
    addr: int                           # as LTTng recorded it (run time)
    where: str                          # vmlinux, module, user, unknown
    name: Optional[str] = None          # fn+0xoff in vmlinux
    start: Optional[int] = None         # link-time start of its function
    call: Optional[Call] = None         # Image.call_at() of a vmlinux frame
    module: Optional[str] = None
    ok: bool = False
    text: Optional[str] = None          # what vmlinux says of it
    why: Optional[str] = None           # why it fails
    inner: Optional[int] = field(default=None)  # the chain frame its call enters


def frame(addr, image, slide, modules):
    """Where a recorded address lies: vmlinux (named, its call read), a module, user."""
    if addr < KERNEL_HALF:
        return Frame(addr, "user")
    sym = image.symbol((addr - slide) & MASK)
    if sym:
        link = (addr - slide) & MASK
        return Frame(addr, "vmlinux", f"{sym[1]}+{link - sym[0]:#x}", sym[0], image.call_at(link))
    for m in modules:
        if m.addr and m.addr <= addr < m.addr + (m.size or 0):
            return Frame(addr, "module", module=m.name)
    return Frame(addr, "unknown")


def _fn(image, f):
    """A frame's function for the texts: its vmlinux name, [module], or the address."""
    if f.where == "vmlinux":
        return image.names[f.start]
    return f"[{f.module}]" if f.where == "module" else hex_text(f.addr)


def _enters(image, f, inner):
    """Whether frame f's call enters `inner` (a Frame, or a function start)."""
    kind, target = f.call or (None, None)
    if kind in (CallKind.STATIC, CallKind.INDIRECT):
        return True
    if kind != CallKind.DIRECT:
        return False
    start = inner if isinstance(inner, int) else inner.start if inner.where == "vmlinux" else None
    return start in image.reach(target)


def _chain(frames, image, nearest):
    """Indices of the call chain from the outermost entry frame inward, each frame's
    call entering the next (the adjacent frame with `nearest`); it ends at a call
    without a target in the file (static or indirect) or where no frame continues it."""
    i = next((k for k in range(len(frames) - 1, -1, -1) if frames[k].where == "vmlinux"
              and image.names[frames[k].start].startswith(ENTRY)), None)
    out = []
    while i is not None:
        out.append(i)
        f = frames[i]
        if not f.call or f.call[0] != CallKind.DIRECT:
            break
        ks = [i - 1] if nearest and i else range(i - 1, -1, -1)
        i = next((k for k in ks if frames[k].where == "vmlinux" and frames[k].call
                  and _enters(image, f, frames[k])), None)
        f.inner = i
    return out


def _is_tracepoint(image, f):
    """The frame of the call into the sys_enter tracepoint's probes."""
    kind, target = f.call or (None, None)
    return (kind == CallKind.STATIC and target == TRACEPOINT[0]) or \
        (kind == CallKind.DIRECT and image.names.get(target) == TRACEPOINT[1]) or \
        (f.where == "vmlinux" and image.names[f.start] == TRACEPOINT[1])


def _call_text(image, f):
    kind, target = f.call or (None, None)
    if kind == CallKind.DIRECT:
        return f"{f.name}: call {image.names.get(target, hex_text(target))}"
    if kind == CallKind.STATIC:
        return f"{f.name}: static call {target}"
    return f"{f.name}: indirect call ({target})" if kind else f"{f.name}: no call ends here"


def judge(frames, image, reliable):
    """Each frame's verdict (ok, text, why) in place; return (chain, tracepoint index)."""
    chain = _chain(frames, image, nearest=reliable)
    tp = next((i for i in chain if _is_tracepoint(image, frames[i])), None)
    for i, f in enumerate(frames):
        f.text = _call_text(image, f) if f.where == "vmlinux" else None
        if f.where in ("user", "unknown"):
            f.why = f"{hex_text(f.addr)} is no kernel text (vmlinux or a module): " \
                    + ("a user address" if f.where == "user" else "outside both")
        elif f.where == "module":
            f.ok = f.module.startswith("lttng") and (tp is not None and i < tp or not reliable)
            f.why = None if f.ok else f"in module {f.module}, not LTTng's side of the call"
        elif i in chain:
            inner = frames[f.inner] if f.inner is not None else None
            f.ok = f.call is not None and (f.call[0] != CallKind.DIRECT or inner is not None or
                                           i == 0 and _enters(image, f, image.named.get(RECORDER)))
            if inner is not None and image.names[inner.start] != image.names.get(f.call[1]):
                f.text += f" (tail call to {image.names[inner.start]})"
            f.why = None if f.ok else "no frame further in lies in the function it calls"
        elif tp is not None and i < tp and not reliable:
            f.ok, f.text = True, f.text + " (LTTng's side, not linked: guess unwinder)"
        elif tp is not None and i < tp:
            want = frames[i - 1] if i else image.named.get(RECORDER)
            f.ok = f.call is not None and want is not None and _enters(image, f, want)
            into = _fn(image, want) if i else RECORDER
            f.why = None if f.ok else f"its call does not enter {into}"
        elif not reliable:
            f.ok, f.text = True, f.text + " (off the chain: a stale text word, guess unwinder)"
        else:
            f.why = "off the call chain from the syscall entry to the tracepoint"
    return chain, tp


def chain_problems(frames, image, chain, tp, reliable):
    """Why the chain is not the syscall's: [] when it is."""
    out = []
    if not chain:
        return [f"no frame in {ENTRY}*"]
    if chain[0] != len(frames) - 1:
        out.append(f"{frames[chain[0]].name} is not the outermost frame")
    if image.names.get((frames[chain[0]].call or (None, None))[1]) != SYSCALL:
        out.append(f"the entry frame's call does not enter {SYSCALL}")
    if not any(image.names[frames[i].start] == SYSCALL for i in chain):
        out.append(f"no {SYSCALL} frame on the chain")
    if tp is None:
        out.append("the chain does not reach the sys_enter tracepoint's call")
    elif tp == 0:
        out.append("no frame (LTTng's probe) further in than the tracepoint")
    bad = [i for i, f in enumerate(frames) if not f.ok]
    if bad:
        out.append(f"frames {', '.join(map(str, bad))} fail")
    return out


def _confusions(image, frames, i, user):
    """A frame's [right, confused] pairs: the callstack-user value at its depth for it,
    and (a direct call's) the function one frame further in for the one it enters."""
    f = frames[i]
    out = {"a user address": pair(hex_text(f.addr),
                                  hex_text(user[i]) if user and i < len(user) else None)}
    if f.inner is not None and f.call and f.call[0] == CallKind.DIRECT:
        inner = frames[f.inner]
        further = frames[inner.inner] if inner.inner is not None else \
            frames[f.inner - 1] if f.inner else None
        out["one frame more or less"] = pair(_fn(image, inner),
                                             _fn(image, further) if further else None)
    return out


def slide_of(guest, image):
    """The guest's _text minus vmlinux's, or (None, why)."""
    ktext = [k.addr for k in guest.ktext]
    linked = image.named.get("_text")
    if not ktext or not ktext[0] or linked is None:
        return None, "the guest printed no _text address (ktext line): the slide is unknown"
    s = ktext[0] - linked
    if s % (2 << 20):
        return None, f"slide {s:#x} is not a multiple of 2 MiB: _text is not this vmlinux's"
    return s, None


def rows(ctx, image):
    """The kstack rows of one variant's Inputs (rows/inputs.py): one per recorded frame
    and the whole chain."""
    guest, rule = ctx.guest, ctx.expect(FEATURE)
    expect = guest.ustack_expect
    pid = expect[0].pid if expect else None
    events = [e for e in ctx.summary.getppid if e.tid == pid] if pid is not None else []
    recorded = [e for e in events if e.kstack]
    present = bool(recorded)
    added = [c for c in guest.context if c.name == "callstack-kernel"]
    info = {"pid": pid, "events": len(events), "unwinder": image.unwinder}
    if added:
        info["add_context"] = "failed in the guest"
    if not present:
        return [rule.row("kstack/chain", False, False,
                         {Source.LTTNG_CALLSTACK_KERNEL: None,
                          Source.VMLINUX_CALL_SITES: None}, info)]
    stack = list(recorded[0].kstack)
    info["truncated"] = bool(stack) and stack[-1] == MASK
    stack = stack[:-1] if info["truncated"] else stack
    slide, bad_slide = slide_of(guest, image)
    info["slide"] = hex_text(slide)
    if bad_slide:
        return [rule.row("kstack/chain", True, False,
                         {Source.LTTNG_CALLSTACK_KERNEL: " ".join(map(hex_text, stack)),
                          Source.VMLINUX_CALL_SITES: None}, dict(info, problem=bad_slide))]
    reliable = image.unwinder in RELIABLE or image.unwinder is None
    frames = [frame(a, image, slide, guest.module) for a in stack]
    chain, tp = judge(frames, image, reliable)
    user = recorded[0].stack
    out = []
    for i, f in enumerate(frames):
        sources = {Source.LTTNG_CALLSTACK_KERNEL: hex_text(f.addr),
                   Source.VMLINUX_CALL_SITES: f.text}
        if f.where == "module":
            sources[Source.GUEST_LSMOD] = f.module
        row = rule.row(f"kstack/frame{i}", True, f.ok, sources,
                       {"where": f.where, "call": (f.call or [None])[0], "on_chain": i in chain,
                        "confusions": _confusions(image, frames, i, user)})
        out.append(row if f.ok or row.reason else Check(row.kind, row.key, row.sources, False,
                                                          row.info, f.why))
    problems = chain_problems(frames, image, chain, tp, reliable)
    calls = [frames[i].call[0] for i in chain if frames[i].call]
    tails = sum(" (tail call to " in (frames[i].text or "") for i in chain)
    info.update({"frames": len(frames), "chain": chain, "tracepoint": tp,
                 "calls": {k: calls.count(k) for k in CallKind},
                 "tail_calls": tails, "module_frames": sum(f.where == "module" for f in frames),
                 "stale": sum(not reliable and f.where != "module" and i not in chain
                              and (tp is None or i > tp) for i, f in enumerate(frames)),
                 "indirect_frames": sum(f.call is not None and f.call.kind != CallKind.DIRECT
                                        for f in frames), "problems": problems})
    sources = {Source.LTTNG_CALLSTACK_KERNEL: " ".join(hex_text(f.addr) for f in frames),
               Source.VMLINUX_CALL_SITES: " > ".join(frames[i].name for i in chain) or None}
    row = rule.row("kstack/chain", True, not problems, sources, info)
    out.append(row if not problems or row.reason else
               Check(row.kind, row.key, row.sources, False, row.info, "; ".join(problems)))
    return out


def rows_for(ctx, vmlinux, config):
    """rows() with the tree's vmlinux and .config; an unreadable vmlinux is one failed row."""
    try:
        with Image(vmlinux, unwinder(config)) as image:
            return rows(ctx, image)
    except HarnessError as e:
        return [Check("lttng", "kstack/chain", {Source.VMLINUX_CALL_SITES: None}, False,
                      {"vmlinux": str(vmlinux)}, e.message)]
