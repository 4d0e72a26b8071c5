"""What a seed patch claims, read from its text: each export it adds (macro and
namespace), each tracepoint's arguments and parameters, each struct member it
adds, as a Claim. seedclaims.py checks the claims against a built tree."""

import re
from dataclasses import dataclass
from functools import lru_cache

from .. import paths

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
        found[m.group(2)] = spelled(PLAIN + (m.group(1) or ""), m.group(3))
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


def typed(kind, name):
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
                        out.append(("tp-param", ev, typed(protos[ev][name], name), pos))
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
                                typed(added.group(1), added.group(2))))
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


def spelled(cls, namespace):
    """An export as its macro: EXPORT_SYMBOL_GPL, or EXPORT_SYMBOL_NS_GPL(NS) in a namespace
    (a seed exports into none: a module would have to import it)."""
    if not namespace:
        return cls
    return cls.replace("EXPORT_SYMBOL", "EXPORT_SYMBOL_NS", 1) + f"({namespace})"
