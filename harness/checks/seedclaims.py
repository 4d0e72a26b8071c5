"""What each seed patch claims, read from the seed patch itself, checked on a built tree.

The seed patches as posted (patches/seeds/: the nine-patch RFC and commit
0bd476e6c671) say what a port must give: `+EXPORT_SYMBOL_GPL(x)` is the
claim "x is exported, GPL-only"; a `TRACE_EVENT` whose `TP_ARGS` gains a
parameter is the claim "the tracepoint's parameters are these, the new one
at this position with this type". The upstream commit 0bd476e6 deletes two
`EXPORT_SYMBOL_GPL()` lines, so its revert claims both exports back, as
they were before it. Claims come from the patch text, never from a table
here, so they cannot drift from the seed.

The v2 series (patches/v2, ours: no posted seed) is read the same way, its
seed ids prefixed "v2-" ("v2-4/8"): the committed 6.1 patches are the
posting, and each line's build (6.1, and the 6.12 port) is checked against
them. Besides exports and tracepoints it claims namespaced exports
(`EXPORT_SYMBOL_NS_GPL(x, NS)`: the namespace must be in the build),
static-call exports (`EXPORT_STATIC_CALL_GPL(f)`: the key `__SCK__f` and the
trampoline `__SCT__f`, from the module that owns them) and struct members a
header gains (`unsigned long limit` in `struct dirty_throttle_control`:
pahole's reading of vmlinux's DWARF).

Each claim is checked on the built tree, from two artifacts for an export
(Module.symvers and vmlinux's `__ksymtab`/`__ksymtab_gpl`, each read by
symcheck on its own) and from vmlinux's DWARF for a tracepoint
(`__traceiter_<event>`'s parameters, symcheck's libdw reader). Every claim
is a Check of kind "seed" with a stable id; a port that drifts from its
seed disagrees, and a claim symcheck cannot answer disagrees too.
"""

import re
import subprocess
from dataclasses import dataclass
from functools import lru_cache

from .. import paths
from ..prepare import symcheck
from ..progress import say
from ..model.enums import Source
from ..model.results import Check
from ..errors import HarnessError

SEED_DIR = paths.REPO / "patches" / "seeds"
V2_DIR = paths.REPO / "patches" / "v2"
V2 = "v2-"                      # the prefix of the v2 series' seed ids
SEED_DIRS = ((SEED_DIR, ""), (V2_DIR, V2))
REVERT = "0bd476e6"             # the seed id of the kallsyms variant's revert
GPL, PLAIN = "EXPORT_SYMBOL_GPL", "EXPORT_SYMBOL"


@dataclass(frozen=True)
class Claim:
    seed: str            # "5/9", or REVERT
    what: str            # "export", "tp-args", "tp-param", "member"
    subject: str         # symbol, tracepoint name, or "struct.member"
    expected: str        # export macro, "a, b, c", or "struct wb_domain *domain"
    position: int = 0    # tp-param: 1-based position among the TP_PROTO parameters

    @property
    def key(self):
        if self.what == "export":
            return f"{self.seed}/export/{self.subject}"
        if self.what == "tp-args":
            return f"{self.seed}/tracepoint/{self.subject}/args"
        if self.what == "member":
            return f"{self.seed}/struct/{self.subject}"
        return f"{self.seed}/tracepoint/{self.subject}/param{self.position}"

    @property
    def id(self):
        return f"seed:{self.key}"

    @property
    def text(self):
        if self.what == "export":
            ns = re.search(r"\((\w+)\)$", self.expected)
            where = f" in namespace {ns.group(1)}" if ns else ""
            return f"{self.subject} exported {'GPL-only' if '_GPL' in self.expected else 'to all'}" \
                + where
        if self.what == "member":
            struct, _ = self.subject.split(".")
            return f"struct {struct} has member {self.expected}"
        if self.what == "tp-args":
            return f"{self.subject}({self.expected})"
        return f"{self.subject} parameter {self.position} is {self.expected}"

    @property
    def short(self):
        """The claim in a few words, for the seed table."""
        if self.what == "tp-args":
            return f"{self.subject}: {len(self.expected.split(', '))} parameters"
        return self.text


# ---------------------------------------------------------------- patch text

def _files(text):
    """(path, [hunk lines]) per file of a unified diff; hunk lines keep their prefix."""
    out = []
    for chunk in re.split(r"^diff --git ", text, flags=re.M)[1:]:
        m = re.search(r"^\+\+\+ (?:b/)?(\S+)", chunk, re.M)
        hunks = re.split(r"^@@[^\n]*@@[^\n]*\n", chunk, flags=re.M)[1:]
        out.append((m.group(1) if m else "", [h.split("\n") for h in hunks]))
    return out


def _side(lines, new):
    """The lines of one side of a hunk: context and added (new) or removed (old)."""
    keep = "+" if new else "-"
    return [ln[1:] for ln in lines if ln[:1] in (" ", keep) and not ln.startswith(("+++",
                                                                                    "---"))]


def _exports(text, sign):
    """{symbol: class} of EXPORT_SYMBOL*() lines the diff adds (sign '+') or removes ('-')."""
    found = {}
    for m in re.finditer(rf"^\{sign}\s*(EXPORT_SYMBOL(?:_GPL)?)\((\w+)\)", text, re.M):
        found[m.group(2)] = m.group(1)
    # EXPORT_SYMBOL_NS_GPL(sym, NS) (6.1, 6.12) or (sym, "NS") (6.13 on)
    for m in re.finditer(rf'^\{sign}\s*EXPORT_SYMBOL_NS(_GPL)?\((\w+),\s*"?(\w+)"?\)', text, re.M):
        found[m.group(2)] = _spelled(PLAIN + (m.group(1) or ""), m.group(3))
    # EXPORT_STATIC_CALL[_GPL](f): the key and the trampoline; ..._TRAMP[_GPL]: the trampoline
    for m in re.finditer(rf"^\{sign}\s*EXPORT_STATIC_CALL(_TRAMP)?(_GPL)?\((\w+)\)", text, re.M):
        for prefix in ("__SCT__",) if m.group(1) else ("__SCK__", "__SCT__"):
            found[prefix + m.group(3)] = PLAIN + (m.group(2) or "")
    # A macro whose body exports name##arg, and an added line that invokes it:
    # BPF_TRACE_DEFN_x(13) with EXPORT_SYMBOL_GPL(bpf_trace_run##x) in its body.
    post = "\n".join(ln[1:] for ln in text.splitlines() if ln[:1] in (" ", "+"))
    post = post.replace("\\\n", " ")
    for d in re.finditer(r"#define\s+(\w+)\((\w+)\)([^\n]*)", post):
        body = re.search(rf"(EXPORT_SYMBOL(?:_GPL)?)\((\w*)\s*##\s*{d.group(2)}\)", d.group(3))
        if not body:
            continue
        for inv in re.finditer(rf"^\{sign}\s*{d.group(1)}\((\w+)\);", text, re.M):
            found[body.group(2) + inv.group(1)] = body.group(1)
    return found


def _params(src, macro):
    """The comma-separated items of MACRO(...) in `src` and whether ')' closed it."""
    m = re.search(rf"\b{macro}\(", src)
    if not m:
        return None, False
    depth, item, items = 0, "", []
    for ch in src[m.end():]:
        if ch == "(":
            depth += 1
        elif ch == ")":
            if depth == 0:
                items.append(item)
                return [" ".join(i.split()) for i in items if i.strip()], True
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(item)
            item = ""
            continue
        item += ch
    items.append(item)
    return [" ".join(i.split()) for i in items if i.strip()], False


def _typed(kind, name):
    """One spelling for a parameter: 'struct wb_domain *domain', 'long unsigned int x'."""
    kind = re.sub(r"\s*\*", " *", " ".join(kind.split())).replace("* *", "**")
    return f"{kind}{name}" if kind.endswith("*") else f"{kind} {name}"


def _decl(decl):
    """'struct wb_domain *domain' -> ('domain', 'struct wb_domain *')."""
    m = re.fullmatch(r"(.*?)(\w+)", decl.strip())
    return m.group(2), m.group(1)


def _segments(text, event):
    """`text` cut at each TRACE_EVENT(name,: [(event in effect, piece)]."""
    out = []
    pos = 0
    for m in re.finditer(r"TRACE_EVENT\((\w+),", text):
        out.append((event, text[pos:m.start()]))
        event, pos = m.group(1), m.start()
    out.append((event, text[pos:]))
    return out


def _tracepoints(text):
    """Claims per TRACE_EVENT whose TP_ARGS the diff changes: the whole new argument
    list, and the type and position of each argument it adds. A hunk that starts
    inside an event (its TRACE_EVENT line in an earlier hunk) belongs to that event."""
    out = []
    for path, hunks in _files(text):
        if "/trace/events/" not in path:
            continue
        event = None
        protos = {}                 # event -> {name: type} from the new TP_PROTO
        for lines in hunks:
            new = _segments("\n".join(_side(lines, True)), event)
            old = _segments("\n".join(_side(lines, False)), event)
            for (ev, piece), (_, was_piece) in zip(new, old):
                if ev is None:
                    continue
                proto, _ = _params(piece, "TP_PROTO")
                protos.setdefault(ev, {}).update(dict(_decl(d) for d in proto or ()))
                args, closed = _params(piece, "TP_ARGS")
                was, _ = _params(was_piece, "TP_ARGS")
                if not (args and closed and args != was):
                    continue
                out.append(("tp-args", ev, ", ".join(args), 0))
                for pos, name in enumerate(args, 1):
                    if name not in (was or ()) and name in protos[ev]:
                        out.append(("tp-param", ev, _typed(protos[ev][name], name), pos))
            event = new[-1][0]
    return out


def _members(text):
    """(struct.member, "type member") of each member line a diff adds to a struct in a
    header: the struct is the innermost `struct NAME {` above it in the hunk, or the
    one the hunk header names when the hunk starts inside it (`@@ ... @@ struct x {`)."""
    out, removed = [], set()
    member = re.compile(r"[+-]\s+(.+?[\s*])(\w+);\s*(/\*.*\*/)?\s*")
    for chunk in re.split(r"^diff --git ", text, flags=re.M)[1:]:
        path = re.search(r"^\+\+\+ (?:b/)?(\S+)", chunk, re.M)
        removed |= {m.group(2) for m in map(member.fullmatch, chunk.split("\n"))
                    if m and m.string.startswith("-") and not m.string.startswith("---")}
        if not path or not path.group(1).endswith(".h"):
            continue
        pieces = re.split(r"^@@[^\n]*@@([^\n]*)\n", chunk, flags=re.M)[1:]
        for context, body in zip(pieces[::2], pieces[1::2]):
            opened = re.match(r"\s*struct (\w+) \{", context)
            struct = opened.group(1) if opened else None
            for ln in body.split("\n"):
                if ln[:1] not in (" ", "+") or ln.startswith("+++"):
                    continue
                if re.match(r"\s*struct (\w+) \{", ln[1:]):
                    struct = re.match(r"\s*struct (\w+) \{", ln[1:]).group(1)
                elif re.match(r"\s*\};", ln[1:]):
                    struct = None
                added = member.fullmatch(ln) if ln[:1] == "+" else None
                if added and struct and added.group(1).strip() not in ("return", "goto"):
                    out.append((f"{struct}.{added.group(2)}",
                                _typed(added.group(1), added.group(2))))
    # a member removed elsewhere in the diff was moved (a struct made public), not added
    return [(subject, decl) for subject, decl in out if subject.split(".")[1] not in removed]


def _seed_id(text):
    m = re.search(r"^Subject: \[[^\]]*?(\d+/\d+)\]", text, re.M)
    if m:
        return m.group(1)
    m = re.match(r"commit ([0-9a-f]{8})", text)
    return m.group(1) if m else None


def claims_of(text, prefix=""):
    """Every claim of one seed patch: its seed id and a tuple of Claim."""
    seed = _seed_id(text)
    seed = prefix + seed if seed else seed
    if seed == REVERT:
        # the upstream commit removes exports; its revert claims them back as they were
        return seed, tuple(Claim(seed, "export", s, c) for s, c in sorted(_exports(text,
                                                                                    "-").items()))
    out = [Claim(seed, "export", s, c) for s, c in sorted(_exports(text, "+").items())]
    out += [Claim(seed, what, ev, exp, pos) for what, ev, exp, pos in _tracepoints(text)]
    out += [Claim(seed, "member", subject, exp) for subject, exp in _members(text)]
    return seed, tuple(out)


@lru_cache(maxsize=None)
def _all(seed_dir, prefix=""):
    found = {}
    for p in sorted(seed_dir.glob("*.patch")):
        seed, claims = claims_of(p.read_text(errors="replace"), prefix)
        if seed:
            found[seed] = claims
    return found


def claims(seed, seed_dir=None):
    """The claims of seed `seed` ("5/9", REVERT, "v2-4/8"); () for a seed without a
    patch here. `seed_dir` (tests): read that directory instead, with the prefix its
    seed ids carry."""
    if seed_dir is not None:
        prefix = V2 if seed.startswith(V2) else ""
        return _all(seed_dir, prefix).get(seed, ())
    for d, prefix in SEED_DIRS:
        if seed.startswith(prefix) and (prefix or not seed.startswith(V2)):
            found = _all(d, prefix).get(seed)
            if found is not None:
                return found
    return ()


# ---------------------------------------------------------------- artifacts

def _classes(path):
    """{symbol: export macro} of one artifact (a Module.symvers or a vmlinux) alone."""
    return {s: c for s, (c, _) in _owned(path).items()}


def _owned(path):
    """{symbol: (export macro, owner)} of one artifact; the owner is "vmlinux" or the
    module path Module.symvers names ("arch/x86/kvm/kvm")."""
    data = symcheck.run_json(["exports", str(path)])
    return {e["symbol"]: (_spelled(e["class"], e.get("namespace")), e.get("module") or "vmlinux")
            for e in data["exports"]}


def _module_classes(tree_src, modules):
    """{symbol: export macro} of the exports of each module (a path below tree_src without
    .ko) read from that .ko's own __ksymtab/__ksymtab_gpl by `symcheck module`."""
    out = {}
    for m in sorted(modules):
        ko = tree_src / f"{m}.ko"
        if not ko.is_file():
            continue            # its claims find nothing: they disagree
        for e in symcheck.run_json(["module", str(ko)]).get("exports") or ():
            out[e["symbol"]] = _spelled(e["class"], e.get("namespace"))
    return out


def _spelled(cls, namespace):
    """An export as its macro: EXPORT_SYMBOL_GPL, or EXPORT_SYMBOL_NS_GPL(NS) in a namespace
    (a seed exports into none: a module would have to import it)."""
    if not namespace:
        return cls
    return cls.replace("EXPORT_SYMBOL", "EXPORT_SYMBOL_NS", 1) + f"({namespace})"


def _traceiters(src, events):
    """{event: [(name, type), ...]} of __traceiter_<event> in vmlinux's DWARF, without
    the leading `void *__data`; an event symcheck does not report is absent."""
    data = symcheck.run_json(["seed-report", "--symbols", "task_prio", str(src)])
    dwarf = data["builds"][0].get("dwarf") or {}
    out = {}
    for ev, tp in (dwarf.get("tracepoints") or {}).items():
        if ev in events and tp and tp.get("function", "").startswith("__traceiter_"):
            out[ev] = [(p["name"], p["type"]) for p in tp["params"][1:]]
    return out


_INTEGER_WORDS = ("unsigned", "signed", "long", "short", "char", "int")


def _ctype(kind):
    """One spelling of an integer type: DWARF's 'long unsigned int' is 'unsigned long'."""
    words = kind.split()
    if not words or any(w not in _INTEGER_WORDS for w in words):
        return " ".join(words)
    sign = [w for w in words if w in ("unsigned", "signed")]
    size = [w for w in words if w in ("long", "short", "char")]
    return " ".join(sign + size + ([] if size else ["int"]))


def _members_of(vmlinux, structs):
    """{"struct.member": "type member"} of each struct in `structs` as pahole reads it
    from vmlinux's DWARF (a reader of its own: not symcheck, not the compiler's headers)."""
    out = {}
    for struct in sorted(structs):
        p = subprocess.run(["pahole", "-C", struct, str(vmlinux)], capture_output=True,
                           text=True, timeout=300)
        for m in re.finditer(r"^\t(.+?[\s*])(\w+)(?:\[\d*\])?;", p.stdout, re.M):
            kind = m.group(1).strip()
            stars = kind.count("*")
            base = _ctype(kind.replace("*", " "))
            out[f"{struct}.{m.group(2)}"] = _typed(base + " " + "*" * stars, m.group(2))
    return out


def _found(claim, symvers, ksymtab, tps, members=None):
    if claim.what == "export":
        return {Source.SYMVERS: symvers.get(claim.subject),
                Source.KSYMTAB: ksymtab.get(claim.subject)}
    if claim.what == "member":
        return {Source.PAHOLE: (members or {}).get(claim.subject)}
    params = tps.get(claim.subject)
    if params is None:
        return {Source.DWARF: None}
    if claim.what == "tp-args":
        return {Source.DWARF: ", ".join(n for n, _ in params)}
    if claim.position > len(params):
        return {Source.DWARF: None}
    name, kind = params[claim.position - 1]
    return {Source.DWARF: _typed(kind, name)}


def check_rows(claim_list, symvers, ksymtab, tps, members=None):
    """The Check rows of `claim_list` against what the artifacts gave."""
    rows = []
    for c in claim_list:
        found = _found(c, symvers, ksymtab, tps, members)
        sources = {Source.SEED_PATCH: c.expected, **found}
        rows.append(Check("seed", c.key, sources,
                          all(v == c.expected for v in found.values()),
                          info={"seed": c.seed, "claim": c.text},
                          label=f"{c.seed}: {c.text}"))
    return rows


def checks(tree_src, seeds, skip=()):
    """Check rows for every claim of the seeds a variant carries, on its built tree
    (a directory with Module.symvers and vmlinux). `skip`: seeds whose claims are
    waived (superseded upstream)."""
    wanted = [c for s in seeds if s not in skip for c in claims(s)]
    if not wanted:
        return []
    symvers_path, vmlinux = tree_src / "Module.symvers", tree_src / "vmlinux"
    for p in (symvers_path, vmlinux):
        if not p.is_file():
            raise HarnessError("verify", f"seed claims: {p} is missing")
    events = {c.subject for c in wanted if c.what.startswith("tp-")}
    tps = _traceiters(tree_src, events) if events else {}
    structs = {c.subject.split(".")[0] for c in wanted if c.what == "member"}
    members = _members_of(vmlinux, structs) if structs else {}
    owned = _owned(symvers_path)
    symvers = {s: c for s, (c, _) in owned.items()}
    # an export a module owns (the KVM static-call keys: kvm.ko) is in that module's ksymtab
    modules = {owned[c.subject][1] for c in wanted
               if c.what == "export" and owned.get(c.subject, ("", "vmlinux"))[1] != "vmlinux"}
    ksymtab = {**_module_classes(tree_src, modules), **_classes(vmlinux)}
    return check_rows(wanted, symvers, ksymtab, tps, members)


def variant_checks(tree, variant, waived):
    """The claim checks of every seed `variant` carries, on its built `tree`; the claims
    of the seeds in `waived` (seeds.superseded(): superseded upstream) are not
    checked (their rows in the report say why)."""
    rows = checks(tree.src, variant.seeds, skip=waived)
    if rows:
        bad = sum(r.disagrees for r in rows)
        say("seeds", f"{variant.name}: {len(rows) - bad}/{len(rows)} seed claims hold "
                     "in Module.symvers, __ksymtab and DWARF")
    return rows
