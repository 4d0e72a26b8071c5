"""A kernel series as its authors would post it: `git format-patch --cover-letter --base`
output under patches/<line>/<series>-post/, generated from the tree and checked, never
written by hand (issue 41).

    python3 -m harness.tools.postseries [--line 7.2] [--series v2] [--build]

1. The line's pristine Debian tarball is committed as one tree (fixed author and dates,
   so the base commit id is the same on every machine), the series is applied with
   `git am`, and `git format-patch --cover-letter --base` writes the posting; the cover
   letter's subject and blurb come from <series>/cover-letter (a `Subject:` line, then
   the text).
2. Each patch: `scripts/checkpatch.pl --strict`, `scripts/kernel-doc -Wall` for every
   function the patch exports (documented, no warning), and the recipients of
   `scripts/get_maintainer.pl` (no git history: the tarball has none).
3. --build (its own make target: it compiles): after each patch, every object file the
   patch touches is compiled with W=1, and the warnings are compared with the same files
   before the patch: a patch must add none.

The results go to <out>/checks.md; the exit status is 1 when a check fails."""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from ..prepare import ksource, variants
from ..prepare.tree import tree_key
from ..progress import say

LINES = {"7.2": ("stock-7.2", paths.REPO / "patches" / "7.2")}
# who commits the tarball and applies the series: fixed, so every id is reproducible
GIT_ENV = {"GIT_AUTHOR_NAME": "ksymlab", "GIT_AUTHOR_EMAIL": "ksymlab@localhost",
           "GIT_COMMITTER_NAME": "ksymlab", "GIT_COMMITTER_EMAIL": "ksymlab@localhost",
           "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE": "2026-01-01T00:00:00Z"}
EXPORT = re.compile(r"^\+\s*EXPORT_(?:SYMBOL(?:_NS)?(?:_GPL)?|SYMBOL_FOR_MODULES)\((\w+)", re.M)


@dataclass
class PatchReport:
    """What the checks found for one posted patch."""
    name: str
    checkpatch: str = ""            # its summary line ("total: 0 errors, 0 warnings, ...")
    checkpatch_clean: bool = False
    exported: list = field(default_factory=list)    # (function, file, documented, warnings)
    recipients: list = field(default_factory=list)
    build: str = "not built"        # "W=1: no new warning in N objects", or what it added
    build_clean: bool = True

    @property
    def clean(self):
        return self.checkpatch_clean and self.build_clean and \
            all(doc and not warn for _f, _p, doc, warn in self.exported)


def git(repo, *args, check=True):
    p = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True,
                       env={**os.environ, **GIT_ENV})
    if check and p.returncode != 0:
        sys.exit(f"postseries: git {' '.join(args[:2])}: {p.stderr.strip()[:300]}")
    return p.stdout


def base_repo(tarball, work):
    """The tarball's tree as one commit in `work`/linux; returns (repo, base id)."""
    say("post", f"extracting {tarball.name} and committing it as the base")
    subprocess.run(["tar", "-xJf", str(tarball), "-C", str(work)], check=True)
    (top,) = [p for p in work.iterdir() if p.is_dir()]
    repo = top.rename(work / "linux")
    git(repo, "init", "-q")
    git(repo, "add", "-A", "-f")
    git(repo, "commit", "-q", "--no-gpg-sign", "-m", f"{tarball.name} as shipped by Debian")
    return repo, git(repo, "rev-parse", "HEAD").strip()


def apply_series(repo, patches):
    say("post", f"git am of {len(patches)} patches")
    git(repo, "am", "-q", "--committer-date-is-author-date", *map(str, patches))


def cover(series_dir):
    """(subject, blurb) of <series>/cover-letter."""
    text = (series_dir / "cover-letter").read_text()
    first, _, body = text.partition("\n")
    if not first.startswith("Subject: "):
        sys.exit(f"postseries: {series_dir / 'cover-letter'}: the first line is not 'Subject: ...'")
    return first[len("Subject: "):].strip(), body.strip("\n")


def format_series(repo, base, out, subject, blurb):
    """git format-patch into `out` (emptied first); the cover letter filled in."""
    if out.exists():
        shutil.rmtree(out)
    git(repo, "format-patch", "-q", "--cover-letter", f"--base={base}", "--zero-commit",
        "-o", str(out), f"{base}..HEAD")
    letter = out / "0000-cover-letter.patch"
    text = letter.read_text()
    text = text.replace("*** SUBJECT HERE ***", subject).replace("*** BLURB HERE ***", blurb)
    letter.write_text(text)
    return sorted(p for p in out.glob("*.patch") if p != letter)


def exported_functions(patch_text):
    """(name, file) of every EXPORT_* line the patch adds, with the file it is added to."""
    found, current = [], None
    for line in patch_text.splitlines():
        if line.startswith("+++ b/"):
            current = line[len("+++ b/"):]
        m = EXPORT.match(line)
        if m and current:
            found.append((m.group(1), current))
    return found


# checkpatch and get_maintainer look commit ids and history up in .git when there is one:
# the base commit has no upstream history, so they are run as on an extracted tarball
NO_GIT = {**os.environ, "GIT_DIR": "/nonexistent"}


def checkpatch(repo, patch):
    p = subprocess.run(["perl", "scripts/checkpatch.pl", "--strict", str(patch)], cwd=repo,
                       capture_output=True, text=True, env=NO_GIT)
    summary = next((line for line in p.stdout.splitlines() if line.startswith("total:")), "")
    return summary, p.returncode == 0 and " 0 errors, 0 warnings, 0 checks" in summary


def kernel_doc(repo, name, path):
    """(documented, warnings) of function `name` in `path` (kernel-doc -Wall)."""
    doc = subprocess.run(["scripts/kernel-doc", "-Wall", "-rst", "-s", name, path], cwd=repo,
                         capture_output=True, text=True)
    # -s selects the output, not the warnings: keep those that name the function
    warnings = [line for line in doc.stderr.splitlines() if "warning" in line.lower()
                and re.search(rf"\b{re.escape(name)}\b", line)]
    return ".. c:function::" in doc.stdout, warnings


def recipients(repo, patch):
    p = subprocess.run(["perl", "scripts/get_maintainer.pl", "--no-git", "--no-git-fallback",
                        "--no-rolestats", str(patch)], cwd=repo, capture_output=True, text=True,
                       env=NO_GIT)
    return [line.strip() for line in p.stdout.splitlines() if line.strip()]


def check_patch(repo, patch):
    r = PatchReport(patch.name)
    r.checkpatch, r.checkpatch_clean = checkpatch(repo, patch)
    for name, path in exported_functions(patch.read_text()):
        r.exported.append((name, path, *kernel_doc(repo, name, path)))
    r.recipients = recipients(repo, patch)
    return r


def warnings_of(repo, objs):
    """The W=1 warnings compiling `objs`, without line and column (a patch moves lines);
    None when an object does not compile."""
    p = subprocess.run(["make", "-j2", "W=1", *objs], cwd=repo, capture_output=True, text=True)
    if p.returncode != 0:
        return None
    return {re.sub(r":\d+:\d+:", ":", line) for line in p.stderr.splitlines()
            if ": warning:" in line}


def build_checks(repo, config, commits, reports):
    """Each patch's .c files compiled with W=1 before and after it (objects, not a link)."""
    shutil.copyfile(config, repo / ".config")
    for step in (["olddefconfig"], ["-j2", "prepare"]):
        if subprocess.run(["make", *step], cwd=repo, capture_output=True).returncode != 0:
            sys.exit(f"postseries: make {step[-1]} failed in {repo}")
    for commit, r in zip(commits, reports):
        files = git(repo, "diff", "--name-only", f"{commit}~1", commit, "--", "*.c").split()
        objs = [f[:-2] + ".o" for f in files]
        say("post", f"{r.name}: W=1 before and after on {len(objs)} objects")
        git(repo, "checkout", "-q", f"{commit}~1")
        before = warnings_of(repo, objs)
        git(repo, "checkout", "-q", commit)
        after = warnings_of(repo, objs)
        if after is None:
            r.build, r.build_clean = "does not compile", False
        else:
            new = sorted(after - (before or set()))
            r.build_clean = not new
            r.build = (f"W=1: no new warning in {len(objs)} objects" if not new
                       else "W=1 adds: " + "; ".join(new))


def report_md(line, series, base, reports):
    out = [f"# {series} on {line}: the posted series and its checks", "",
           "Generated by `python3 -m harness.tools.postseries` (`make post-series`); do not edit.",
           f"base-commit {base}: Debian's linux-source-{line} tarball committed as one tree.",
           "Each patch's build with W=1: build.md (`make post-series-build`).", "",
           "| patch | checkpatch --strict | kernel-doc -Wall (exported) |", "|---|---|---|"]
    for r in reports:
        docs = ", ".join(f"{n}: {'documented' if d else 'NOT documented'}"
                         f"{', %d warnings' % len(w) if w else ''}" for n, _p, d, w in r.exported)
        out.append(f"| {r.name} | {r.checkpatch or 'no summary'} | {docs or 'none'} |")
    out += ["", "## Recipients (scripts/get_maintainer.pl --no-git)", ""]
    for r in reports:
        out += [f"- **{r.name}**: " + "; ".join(r.recipients)]
    return "\n".join(out) + "\n"


def build_md(line, series, base, built, reports):
    """build.md: each patch's files compiled with W=1 before and after it (--build)."""
    out = [f"# {series} on {line}: each patch built with W=1", "",
           "Generated by `python3 -m harness.tools.postseries --build` (`make post-series-build`); "
           "do not edit.",
           f"base-commit {base}; configuration: the .config of the built `{built}` tree. Each "
           "patch's C files are compiled with W=1 at the commit before it and at its own; a "
           "warning the patch adds fails it.", "",
           "| patch | W=1 |", "|---|---|"]
    out += [f"| {r.name} | {r.build} |" for r in reports]
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m harness.tools.postseries")
    ap.add_argument("--line", default="7.2", choices=sorted(LINES))
    ap.add_argument("--series", default="v2")
    ap.add_argument("--build", action="store_true", help="compile each patch's files with W=1")
    ap.add_argument("--keep", action="store_true", help="keep the git work tree")
    ap.add_argument("--out", type=Path, help="where the posting goes (default: "
                    "patches/<line>/<series>-post, which is committed)")
    a = ap.parse_args(argv)
    stock, root = LINES[a.line]
    series_dir, out = root / a.series, a.out or root / f"{a.series}-post"
    cache = paths.cache_root()
    tarball = ksource.ensure(ksource.resolve(variants.VARIANTS[stock], cache), cache)
    patches = variants.Variant(name=a.series, module_mode="exports", description="",
                               series_name=a.series, patches_root=root).patches()
    work = Path(tempfile.mkdtemp(prefix="ksymlab-post-"))
    try:
        repo, base = base_repo(tarball, work)
        apply_series(repo, patches)
        posted = format_series(repo, base, out, *cover(series_dir))
        commits = git(repo, "rev-list", "--reverse", f"{base}..HEAD").split()
        reports = [check_patch(repo, p) for p in posted]
        if a.build:
            built = ksource.resolve(variants.VARIANTS[f"exports-{a.series}-{a.line}"], cache)
            config = cache / "trees" / tree_key(built) / "linux" / ".config"
            if not config.is_file():
                sys.exit(f"postseries: --build takes its .config from the built tree of "
                         f"{built.name}: run `python3 -m harness build --variants {built.name}`")
            build_checks(repo, config, commits, reports)
            (out / "build.md").write_text(build_md(a.line, a.series, base, built.name, reports))
        (out / "checks.md").write_text(report_md(a.line, a.series, base, reports))
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            say("post", f"kept {work}")
    bad = [r.name for r in reports if not r.clean]
    say("post", f"{len(posted)} patches in {out}: " + (f"{len(bad)} fail: {', '.join(bad)}"
                                                       if bad else "every check passes"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
