"""Build the guest initramfs with the kernel tree's own usr/gen_init_cpio."""

import hashlib
import os
import shlex
import shutil
import threading
import subprocess
from pathlib import Path

from . import cache as cachemod
from . import module as modulemod
from .. import paths
from .digest import file_digest
from ..errors import HarnessError
from ..progress import say

BUSYBOX = Path("/bin/busybox")
# Applets the guest init uses; each becomes a /bin symlink to busybox.
APPLETS = ("sh", "mount", "insmod", "rmmod", "cat", "echo", "sleep", "renice", "stty",
           "reboot", "uname", "ls", "ps", "dmesg", "grep", "sed", "mkdir", "awk", "fdisk",
           "mke2fs", "dd", "sync", "kill", "rm", "mkfifo", "setsid")
# Static guest programs, built on the host: source file -> path in the guest.
GUEST_PROGRAMS = {"ustack.c": "/bin/ksymlab-ustack", "bench.c": "/bin/ksymlab-bench",
                  "bpf13.c": "/bin/ksymlab-bpf13", "sched.c": "/bin/ksymlab-sched",
                  "threads.c": "/bin/ksymlab-threads", "rtwrite.c": "/bin/ksymlab-rtwrite"}
DISKS_GUEST_PATH = "/lib/modules/ksymlab_disks.ko"
# Frame pointers everywhere, or the kernel's user stack walk stops early.
GUEST_CFLAGS = ("-static", "-O1", "-fno-omit-frame-pointer", "-fno-optimize-sibling-calls",
                "-Wall", "-Wextra", "-Werror")


def guest_program_key(src):
    """The cache key of a guest program: its source, every header of paths.GUEST (names and
    bytes: a program may include any of them) and the flags."""
    h = hashlib.sha256(src.read_bytes())
    for header in sorted(paths.GUEST.glob("*.h")):
        h.update(b"\0" + header.name.encode() + b"\0" + header.read_bytes())
    h.update(b"\0" + " ".join(GUEST_CFLAGS).encode())
    return h.hexdigest()[:16]      # 64 bits: a few programs, each a file of its own directory


def build_guest_program(source, cache):
    """Compile one guest program, cached by its source, the guest headers and the flags."""
    src = paths.GUEST / source
    key = guest_program_key(src)
    out = Path(cache) / "guest" / key / src.stem
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    # unique per process and thread: guests of one run are prepared concurrently
    tmp = out.with_suffix(f".tmp{os.getpid()}-{threading.get_ident()}")
    p = subprocess.run(["gcc", *GUEST_CFLAGS, "-o", str(tmp), str(src)],
                       capture_output=True, text=True)
    if p.returncode != 0:       # the start of gcc's errors: the report line stays short
        raise HarnessError("initramfs", f"gcc {source}: {p.stderr.strip()[:300]}")
    tmp.replace(out)
    return out


def busybox_applets(busybox=BUSYBOX):
    try:
        # --list returns at once; the timeout only bounds a broken binary
        out = subprocess.run([str(busybox), "--list"], capture_output=True, text=True,
                             check=True, timeout=30).stdout
    except (OSError, subprocess.SubprocessError) as e:
        raise HarnessError("initramfs", f"{busybox}: cannot list applets ({e}); "
                           "install busybox-static") from e
    return set(out.split())


def cpio_spec(module_ko, scenario, params, programs, init=None, busybox=BUSYBOX):
    """The gen_init_cpio file list, one entry per line. `programs` maps guest paths to
    host files of the static guest programs."""
    init = init or paths.GUEST / "init"
    missing = set(APPLETS) - busybox_applets(busybox)
    if missing:
        raise HarnessError("initramfs", f"{busybox} lacks applets: {' '.join(sorted(missing))}")
    for f in (module_ko, scenario, params, init, *programs.values()):
        if not Path(f).is_file():
            raise HarnessError("initramfs", f"{f}: not found")
    lines = [f"dir /{d} 0755 0 0" for d in ("bin", "dev", "etc", "etc/ksymlab", "lib",
                                           "lib/modules", "mnt", "proc", "sys", "tmp")]
    # The kernel opens /dev/console for init before devtmpfs is mounted.
    lines.append("nod /dev/console 0600 0 0 c 5 1")
    lines.append(f"file /bin/busybox {busybox} 0755 0 0")
    lines += [f"slink /bin/{a} busybox 0777 0 0" for a in APPLETS]
    lines += [f"file {guest} {host} 0755 0 0" for guest, host in sorted(programs.items())]
    lines.append(f"file /init {init} 0755 0 0")
    lines.append(f"file /etc/ksymlab/scenario {scenario} 0644 0 0")
    lines.append(f"file /etc/ksymlab/params {params} 0644 0 0")
    lines.append(f"file /lib/modules/ksymlab_probe.ko {module_ko} 0644 0 0")
    return "\n".join(lines) + "\n"


def sh_word(text):
    """`text` as one word of the guest's sh: shlex.quote, inside single quotes even when
    shlex.quote would leave it bare, so that a text without a ' reads as it always has
    (the params file, and with it the initramfs key, stays the same)."""
    q = shlex.quote(text)
    return q if q.startswith("'") else f"'{q}'"


def params_text(variant, mode, insmod_args="", stress=0, bench=0):
    """/etc/ksymlab/params, which the guest's init sources (. /etc/ksymlab/params).
    Variant names are [A-Za-z0-9._-] and modes one of variants.MODES (variants.py checks
    both); the insmod arguments are the user's text, quoted."""
    return (f"KSYMLAB_VARIANT={variant}\nKSYMLAB_MODE={mode}\n"
            f"KSYMLAB_INSMOD_ARGS={sh_word(insmod_args)}\nKSYMLAB_STRESS={int(stress)}\n"
            f"KSYMLAB_BENCH={int(bench)}\n")


def build(tree, module_ko, scenario, workdir, mode, cache, insmod_args="", stress=0, bench=0):
    """Write <workdir>/initramfs.cpio and return its path."""
    workdir.mkdir(parents=True, exist_ok=True)
    params = workdir / "guest-params"
    params.write_text(params_text(tree.variant, mode, insmod_args, stress, bench))
    spec = workdir / "initramfs.list"
    programs = {guest: build_guest_program(src, cache) for src, guest in GUEST_PROGRAMS.items()}
    # a hidden disk and a disk without capacity (issue 43): a guest test module
    programs[DISKS_GUEST_PATH] = modulemod.build_disks(tree, cache)
    spec_text = cpio_spec(module_ko, scenario, params, programs)
    spec.write_text(spec_text)
    out = workdir / "initramfs.cpio"
    if not tree.gen_init_cpio.exists():
        raise HarnessError("initramfs", f"{tree.gen_init_cpio} missing from the built tree")
    key = content_key(spec_text, tree.gen_init_cpio)
    cached = Path(cache) / "initramfs" / f"{key}.cpio"
    with cachemod.entry(cachemod.lock_path(cache, "initramfs", key), cached.exists) as e:
        if not e.missing:
            cachemod.used("initramfs", cache, key)
            shutil.copyfile(cached, out)        # the run directory stays self-contained
            say("initramfs", f"{tree.variant}: cached {cached.name}, "
                             f"{out.stat().st_size // 1024} KiB")
            return out
        tmp = cached.with_suffix(f".tmp{os.getpid()}-{threading.get_ident()}")
        with open(tmp, "wb") as f:
            p = subprocess.run([str(tree.gen_init_cpio), str(spec)], stdout=f,
                               stderr=subprocess.PIPE, text=False)
        if p.returncode != 0:
            tmp.unlink()
            raise HarnessError("initramfs", f"gen_init_cpio exited {p.returncode}: "
                               f"{p.stderr.decode(errors='replace').strip()}")
        tmp.replace(cached)
        e.built("initramfs", cache, key, tree.variant)
        shutil.copyfile(cached, out)
        cachemod.after_new_entry(cache)
    say("initramfs", f"{tree.variant}: built {cached.name}, {out.stat().st_size // 1024} KiB")
    return out


def content_key(spec_text, gen_init_cpio):
    """Key of an initramfs: its file list with each file's content in place of its host
    path (the params file lives in each run directory), and the gen_init_cpio used."""
    h = hashlib.sha256(file_digest(gen_init_cpio).encode() + b"\n")
    for line in spec_text.splitlines():
        parts = line.split()
        if parts and parts[0] == "file":        # file <name> <location> <mode> <uid> <gid>
            parts[2] = file_digest(parts[2])
        h.update(" ".join(parts).encode() + b"\n")
    return h.hexdigest()[:20]
