"""What each seed patch claims, read from the seed patch itself, checked on a built tree.

The seed patches as posted (patches/seeds/: the nine-patch RFC and commit
0bd476e6c671) say what a port must give: `+EXPORT_SYMBOL_GPL(x)` is the
claim "x is exported, GPL-only"; a `TRACE_EVENT` whose `TP_ARGS` gains a
parameter is the claim "the tracepoint's parameters are these, the new one
at this position with this type". The upstream commit 0bd476e6 deletes two
`EXPORT_SYMBOL_GPL()` lines, so its revert claims both exports back, as
they were before it. Claims come from the patch text, never from a table
here, so they cannot drift from the seed.

Each claim is checked on the built tree, from two artifacts for an export
(Module.symvers and vmlinux's `__ksymtab`/`__ksymtab_gpl`, each read by
symcheck on its own) and from vmlinux's DWARF for a tracepoint
(`__traceiter_<event>`'s parameters, symcheck's libdw reader). Every claim
is a Check of kind "seed" with a stable id; a port that drifts from its
seed disagrees, and a claim symcheck cannot answer disagrees too.
"""

import re
from dataclasses import dataclass
from functools import lru_cache

from .. import paths
from ..build import symcheck
from ..progress import say
from .enums import Source
from .model import Check
from ..errors import HarnessError

SEED_DIR = paths.REPO / "patches" / "seeds"
REVERT = "0bd476e6"             # the seed id of the kallsyms variant's revert
GPL, PLAIN = "EXPORT_SYMBOL_GPL", "EXPORT_SYMBOL"


@dataclass(frozen=True)
class Claim:
    seed: str            # "5/9", or REVERT
    what: str            # "export", "tp-args", "tp-param"
    subject: str         # symbol or tracepoint name
    expected: str        # export class, "a, b, c", or "struct wb_domain *domain"
    position: int = 0    # tp-param: 1-based position among the TP_PROTO parameters

    @property
    def key(self):
        if self.what == "export":
            return f"{self.seed}/export/{self.subject}"
        if self.what == "tp-args":
            return f"{self.seed}/tracepoint/{self.subject}/args"
        return f"{self.seed}/tracepoint/{self.subject}/param{self.position}"

    @property
    def id(self):
        return f"seed:{self.key}"

    @property
    def text(self):
        if self.what == "export":
            return f"{self.subject} exported {'GPL-only' if self.expected == GPL else 'to all'}"
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


def _seed_id(text):
    m = re.search(r"^Subject: \[[^\]]*?(\d+/\d+)\]", text, re.M)
    if m:
        return m.group(1)
    m = re.match(r"commit ([0-9a-f]{8})", text)
    return m.group(1) if m else None


def claims_of(text):
    """Every claim of one seed patch: its seed id and a tuple of Claim."""
    seed = _seed_id(text)
    if seed == REVERT:
        # the upstream commit removes exports; its revert claims them back as they were
        return seed, tuple(Claim(seed, "export", s, c) for s, c in sorted(_exports(text,
                                                                                    "-").items()))
    out = [Claim(seed, "export", s, c) for s, c in sorted(_exports(text, "+").items())]
    out += [Claim(seed, what, ev, exp, pos) for what, ev, exp, pos in _tracepoints(text)]
    return seed, tuple(out)


@lru_cache(maxsize=None)
def _all(seed_dir):
    found = {}
    for p in sorted(seed_dir.glob("*.patch")):
        seed, claims = claims_of(p.read_text(errors="replace"))
        if seed:
            found[seed] = claims
    return found


def claims(seed, seed_dir=None):
    """The claims of seed `seed` ("5/9", REVERT); () for a seed without a patch here."""
    return _all(seed_dir or SEED_DIR).get(seed, ())


# ---------------------------------------------------------------- artifacts

def _classes(path):
    """{symbol: export macro} of one artifact (a Module.symvers or a vmlinux) alone."""
    data = symcheck.run_json(["exports", str(path)])
    return {e["symbol"]: _spelled(e["class"], e.get("namespace")) for e in data["exports"]}


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


def _found(claim, symvers, ksymtab, tps):
    if claim.what == "export":
        return {Source.SYMVERS: symvers.get(claim.subject),
                Source.KSYMTAB: ksymtab.get(claim.subject)}
    params = tps.get(claim.subject)
    if params is None:
        return {Source.DWARF: None}
    if claim.what == "tp-args":
        return {Source.DWARF: ", ".join(n for n, _ in params)}
    if claim.position > len(params):
        return {Source.DWARF: None}
    name, kind = params[claim.position - 1]
    return {Source.DWARF: _typed(kind, name)}


def check_rows(claim_list, symvers, ksymtab, tps):
    """The Check rows of `claim_list` against what the artifacts gave."""
    rows = []
    for c in claim_list:
        found = _found(c, symvers, ksymtab, tps)
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
    events = {c.subject for c in wanted if c.what != "export"}
    tps = _traceiters(tree_src, events) if events else {}
    return check_rows(wanted, _classes(symvers_path), _classes(vmlinux), tps)


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
