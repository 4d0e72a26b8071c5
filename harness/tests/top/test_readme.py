"""README.md stays a newcomer's page: short, its links resolve, its exit table is EXIT.

Depth lives in docs/*.md; the README links to it. These tests read the files
and harness.errors.EXIT as they are when the tests run.
"""

import re

from harness import errors, paths

README = paths.REPO / "README.md"
DOCS = paths.REPO / "docs"
MAX_LINES = 250

# [text](target) and ![alt](target); the target ends at the first blank or ')'
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def links(md):
    """The relative link targets of one markdown file, as (path, anchor or None)."""
    out = []
    for target in LINK.findall(md.read_text()):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):     # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        out.append(((md.parent / path).resolve() if path else md.resolve(), anchor or None))
    return out


def slug(heading):
    """GitHub's anchor of a heading: lower case, punctuation dropped, blanks -> '-'."""
    s = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return s.replace(" ", "-")


def anchors(md):
    return {slug(m) for m in re.findall(r"^#+\s+(.*)$", md.read_text(), re.M)}


def test_readme_is_short():
    n = len(README.read_text().splitlines())
    assert n <= MAX_LINES, f"README.md has {n} lines, at most {MAX_LINES}: move depth to docs/"


def test_readme_links_resolve():
    found = links(README)
    assert any(p.parent == DOCS.resolve() for p, _ in found), "README.md links to no docs/ page"
    missing = [str(p.relative_to(paths.REPO)) for p, _ in found if not p.exists()]
    assert not missing, f"README.md links to missing files: {missing}"


def test_every_docs_page_is_linked_from_the_readme():
    linked = {p for p, _ in links(README)}
    orphans = sorted(d.name for d in DOCS.glob("*.md") if d.resolve() not in linked)
    assert not orphans, f"docs/ pages the README does not link to: {orphans}"


def test_docs_links_and_anchors_resolve():
    bad = []
    for md in [README, *sorted(DOCS.glob("*.md")), paths.REPO / "variants" / "README.md"]:
        for p, anchor in links(md):
            where = f"{md.relative_to(paths.REPO)} -> {p}"
            if not p.exists():
                bad.append(f"{where}: no such file")
            elif anchor and p.suffix == ".md" and anchor not in anchors(p):
                bad.append(f"{where}#{anchor}: no such heading")
    assert not bad, "\n".join(bad)


def test_slug_follows_github():
    assert slug("Tail derivation") == "tail-derivation"
    assert slug("KASLR") == "kaslr"
    assert slug("What drgn 0.0.22 cannot do, and the workarounds") == \
        "what-drgn-0022-cannot-do-and-the-workarounds"


def exit_table(text):
    """The README's exit-status table as {step: status}, and the rows without a step.

    A row lists one or more statuses and as many steps, each separated by '/':
    `| 40 / 41 | gdb / verify | ... |`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines)
                 if re.match(r"\|\s*status\s*\|\s*step\s*\|", line))
    table, stepless = {}, []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        statuses = [int(s) for s in cells[0].split("/")]
        steps = [s.strip() for s in cells[1].split("/")] if cells[1] else []
        if not steps:
            stepless += statuses
            continue
        assert len(steps) == len(statuses), f"{line}: {len(statuses)} statuses, {len(steps)} steps"
        for step, status in zip(steps, statuses):
            assert step not in table, f"{step} listed twice"
            table[step] = status
    return table, stepless


def test_exit_table_is_errors_exit():
    table, stepless = exit_table(README.read_text())
    assert stepless == [0], "only success (0) has no step"
    assert table == errors.EXIT


def test_exit_table_parser():
    text = ("| status | step | meaning |\n|---|---|---|\n| 0 | | ok |\n"
            "| 10 / 11 | extract / patch | a / b |\n| 70 | internal | bug |\n\nafter\n")
    assert exit_table(text) == ({"extract": 10, "patch": 11, "internal": 70}, [0])
