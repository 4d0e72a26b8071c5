"""Reuse an LTTng build for a tree whose inputs to it did not change (issue 23 item 6).

A build's key (build.build_key) holds the tree's key, which any edit of the kernel's
series changes: a one-line edit of an export's type rebuilt all of LTTng (105 s)
although nothing LTTng compiles against changed. So each fresh build also records
what it read from the tree, in inputs.json, as {tree-relative path: digest}:

  - every file of the tree in the dependency lists Kbuild wrote for LTTng's objects
    (the .*.cmd files: the headers each object included, the .config they saw);
  - every path LTTng's own Kbuild files name under $(srctree) or $(objtree) (its
    build-time tests: a header grepped, a file whose existence sets a flag; a glob's
    matches), present or absent;
  - the kernel Makefiles and modpost that make its command lines and link its modules.

Module.symvers is digested without the _GPL of its export type: modpost reads the
type only to refuse GPL-only symbols to non-GPL modules (LTTng's are GPL-2.0), and
the ports' export detection (patches/lttng, `lttng_kernel_export`) takes both types
alike. A later tree whose digests all equal a recorded build's reuses that build's
modules; test_lttng_reuse_e2e checks them equal to a fresh build of the same tree.
KSYMLAB_LTTNG_REUSE=0 turns reuse off.
"""

import glob
import json
import os
import re
from pathlib import Path

from ...prepare.digest import bytes_digest, file_digest

MANIFEST = "inputs.json"
# Read by every external module build whatever its sources include.
ALWAYS = ("Makefile", "arch/x86/Makefile", "scripts/Kbuild.include", "scripts/Makefile.*",
          "scripts/module.lds", "scripts/mod/modpost", ".config", "include/config/auto.conf",
          "include/config/kernel.release", "Module.symvers")
KBUILD_PATH = re.compile(r"\$\((?:srctree|objtree)\)/([^\s)\"'$]+)")
MAX_DONORS = 8          # recorded builds tried, newest first


def enabled(env=None):
    return (os.environ if env is None else env).get("KSYMLAB_LTTNG_REUSE", "1") != "0"


def _symvers(path):
    """Module.symvers' lines with EXPORT_SYMBOL_GPL read as EXPORT_SYMBOL (see above)."""
    lines = []
    for line in path.read_text(errors="replace").splitlines():
        f = line.split("\t")
        if len(f) >= 4 and f[3] == "EXPORT_SYMBOL_GPL":
            f[3] = "EXPORT_SYMBOL"
        lines.append("\t".join(f))
    return bytes_digest("\n".join(lines).encode())


def digest(tree_src, rel):
    """The digest of `rel` in the tree: a file's sha256, "dir", None when absent; a
    glob (`*`) digests its sorted matches."""
    root = Path(tree_src)
    if "*" in rel:
        hits = [str(Path(h).relative_to(root)) for h in sorted(glob.glob(str(root / rel)))]
        return bytes_digest("\0".join(f"{h}={digest(root, h)}" for h in hits).encode())
    p = root / rel
    if p.is_dir():
        return "dir"
    if not p.is_file():
        return None
    if rel == "Module.symvers":
        return _symvers(p)
    return file_digest(p)


def _cmd_deps(work, tree_src):
    """Tree-relative paths of the tree's files in the dependency lists of `work`'s
    .*.cmd files (fixdep's output: one path per line, `$(wildcard ...)` skipped: a
    config option's empty stamp file, which .config and auto.conf stand for)."""
    tree = Path(tree_src).resolve()
    out = set()
    for cmd in Path(work).rglob(".*.cmd"):
        for line in cmd.read_text(errors="replace").splitlines():
            if line.startswith("cmd_") or "$(" in line:
                continue
            for tok in line.replace("\\", " ").replace(":=", " ").split():
                p = Path(tok) if tok.startswith("/") else tree / tok
                try:
                    rel = p.resolve().relative_to(tree)
                except ValueError:
                    continue        # LTTng's own source, the compiler's headers
                if p.is_file():
                    out.add(str(rel))
    return out


def _kbuild_paths(work):
    """Paths LTTng's Kbuild and Makefile files name under the tree (its build tests)."""
    out = set()
    for f in Path(work).rglob("*"):
        if f.is_file() and (f.name.startswith("Kbuild") or f.name.startswith("Makefile")):
            out.update(m.group(1).rstrip("/") for m in KBUILD_PATH.finditer(
                f.read_text(errors="replace")))
    return out


def record(out, work, tree_src):
    """Write out/inputs.json for the build made in `work` against `tree_src`."""
    rels = _cmd_deps(work, tree_src) | _kbuild_paths(work) | set(ALWAYS)
    (Path(out) / MANIFEST).write_text(json.dumps(
        {rel: digest(tree_src, rel) for rel in sorted(rels)}, indent=0) + "\n")
    return len(rels)


def changed(out, tree_src, seen=None):
    """The paths whose digest in `tree_src` differs from the build `out`'s record, in
    order (the first few are enough to say why); None when `out` has no record.
    `seen`: the tree's digests computed so far (find() tries several builds)."""
    f = Path(out) / MANIFEST
    if not f.is_file():
        return None
    seen = {} if seen is None else seen
    recorded = json.loads(f.read_text())
    for rel in recorded:
        if rel not in seen:
            seen[rel] = digest(tree_src, rel)
    return [rel for rel, d in recorded.items() if seen[rel] != d]


def donors_dir(cache, base):
    return Path(cache) / "lttng" / "modules" / "inputs" / base


def register(cache, base, key):
    d = donors_dir(cache, base)
    d.mkdir(parents=True, exist_ok=True)
    (d / key).touch()


def find(cache, base, tree_src):
    """(key of a finished build whose recorded inputs all equal `tree_src`'s, or None,
    paths that differed in the newest build tried)."""
    d = donors_dir(cache, base)
    if not d.is_dir():
        return None, []
    modules = Path(cache) / "lttng" / "modules"
    tried = sorted(d.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True)[:MAX_DONORS]
    first, seen = [], {}
    for entry in tried:
        out = modules / entry.name
        if not (out / "done").is_file():
            continue
        diff = changed(out, tree_src, seen)
        if diff == []:
            return entry.name, []
        if diff and not first:
            first = diff
    return None, first
