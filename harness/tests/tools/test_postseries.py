"""The posted v2 series (harness/tools/postseries.py, patches/7.2/v2-post/): what the tool
reads from a patch, and that the committed posting is the series' own patches with a
filled-in cover letter and clean checks. The e2e test regenerates the posting from the
tarball and requires the committed files byte for byte."""

import re
import subprocess
import sys

import pytest

from harness import paths
from harness.tools import postseries

V2 = paths.REPO / "patches" / "7.2" / "v2"
POST = paths.REPO / "patches" / "7.2" / "v2-post"


def source_patches():
    names = [line for line in (V2 / "series").read_text().splitlines()
             if line and not line.startswith("#")]
    return [V2 / n for n in names]


def diff_part(text):
    """From the first `diff --git` to the signature separator: the change itself."""
    start = text.index("\ndiff --git ")
    return text[start:text.rindex("\n-- \n")]


# Read in the six patch files by hand: the functions each one exports and where.
EXPORTED = {
    "0001": [], "0006": [],         # a tracepoint argument; static calls (no function)
    "0002": [("stack_trace_save_user", "kernel/stacktrace.c")],
    "0003": [("get_pfnblock_migratetype", "mm/page_alloc.c")],
    "0004": [("blk_walk_visible_disks", "block/genhd.c")],
    "0005": [("irq_walk_actions", "kernel/irq/irqdesc.c")],
}


def test_exported_functions_of_the_series():
    got = {p.name[:4]: postseries.exported_functions(p.read_text()) for p in source_patches()}
    assert got == EXPORTED


def test_exported_functions_not_taken_from_removed_or_context_lines():
    text = ("+++ b/a.c\n-EXPORT_SYMBOL(gone);\n EXPORT_SYMBOL_GPL(context);\n"
            "+EXPORT_SYMBOL_FOR_MODULES(mine, \"lttng*\");\n+++ b/b.c\n+\tEXPORT_SYMBOL_NS(x, \"N\");\n")
    assert postseries.exported_functions(text) == [("mine", "a.c"), ("x", "b.c")]


def test_cover_needs_a_subject_line(tmp_path):
    (tmp_path / "cover-letter").write_text("Subject: One line\nBody\n\nmore\n")
    assert postseries.cover(tmp_path) == ("One line", "Body\n\nmore")
    (tmp_path / "cover-letter").write_text("No subject\n")
    with pytest.raises(SystemExit, match="not 'Subject: ...'"):
        postseries.cover(tmp_path)


def test_posted_patches_are_the_series():
    posted = sorted(POST.glob("00[0-9][1-9]-*.patch"))
    sources = source_patches()
    assert [p.name[5:] for p in posted] == [p.name[5:] for p in sources]
    n = len(sources)
    for i, (post, src) in enumerate(zip(posted, sources), 1):
        text = post.read_text()
        assert diff_part(text) == diff_part(src.read_text()), post.name
        assert f"[PATCH {i}/{n}]" in text and text.startswith("From 0000000000000000000000000000000000000000")


def test_cover_letter_filled_in_with_base():
    text = (POST / "0000-cover-letter.patch").read_text()
    subject, blurb = postseries.cover(V2)
    assert "***" not in text
    assert f"Subject: [PATCH 0/{len(source_patches())}] {subject}" in text
    assert blurb.splitlines()[0] in text
    assert re.search(r"^base-commit: [0-9a-f]{40}$", text, re.M)


def test_recorded_checks_all_clean():
    """checks.md: every patch checkpatch-clean, every exported function documented without
    a warning, recipients recorded."""
    rows = [line for line in (POST / "checks.md").read_text().splitlines()
            if line.startswith("| 00")]
    assert len(rows) == len(source_patches())
    for row in rows:
        assert "total: 0 errors, 0 warnings, 0 checks" in row, row
        assert "NOT documented" not in row and "warnings" not in row.split("|")[3], row
    recipients = (POST / "checks.md").read_text().split("## Recipients")[1]
    assert recipients.count("linux-kernel@vger.kernel.org") == len(source_patches())


def test_recorded_builds_add_no_warning():
    """build.md (make post-series-build): every patch compiled with W=1, none adds a warning."""
    rows = [line for line in (POST / "build.md").read_text().splitlines()
            if line.startswith("| 00")]
    assert [r.split("|")[1].strip() for r in rows] == [p.name for p in sorted(POST.glob("0*.patch"))
                                                       if not p.name.startswith("0000")]
    for row in rows:
        assert re.search(r"\| W=1: no new warning in [1-9]\d* objects \|$", row), row


@pytest.mark.e2e
def test_posting_regenerated_from_the_tarball_is_the_committed_one(tmp_path):
    """`make post-series` output equals what is committed: nothing written by hand."""
    out = tmp_path / "post"
    p = subprocess.run([sys.executable, "-m", "harness.tools.postseries", "--out", str(out)],
                       cwd=paths.REPO, capture_output=True, text=True, timeout=1800)
    assert p.returncode == 0, p.stderr[-2000:]
    made = sorted(f.name for f in out.iterdir())
    # build.md is written by --build only (make post-series-build: 8 compiles per patch)
    assert made == sorted(f.name for f in POST.iterdir() if f.name != "build.md")
    for name in made:
        assert (out / name).read_bytes() == (POST / name).read_bytes(), name
