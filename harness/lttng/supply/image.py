"""The LTTng boot's initramfs: busybox, Debian's lttng userspace and its libraries,
the LTTng modules built for the tree (with depmod's files made on the host), the
scenario and the guest programs; packed with the tree's usr/gen_init_cpio."""

import os
import shutil
import subprocess
import threading
from pathlib import Path

from ...prepare import cache as cachemod
from ...prepare import initramfs as base
from ...prepare import formods
from ...prepare import module as modulemod
from ... import paths
from ...errors import HarnessError
from ...progress import say
from . import guestroot

INIT = paths.GUEST / "lttng-init"
APPLETS = ("sh", "mount", "cat", "echo", "sleep", "renice", "stty", "reboot", "uname", "ls",
           "dmesg", "grep", "sed", "mkdir", "awk", "fdisk", "mke2fs", "dd", "sync", "kill",
           "rm", "mkfifo", "ifconfig", "tar", "base64", "head", "hostname", "modprobe", "find",
           "insmod")
PROGRAMS = {"sched.c": "/bin/ksymlab-sched", "lttng-ustack.c": "/bin/ksymlab-lttng-ustack",
            "rtwrite.c": "/bin/ksymlab-rtwrite", "threads.c": "/bin/ksymlab-threads"}
SHIRQ_GUEST_PATH = "/lib/modules/ksymlab_shirq.ko"


def _dirs(guest_paths):
    out = set()
    for g in guest_paths:
        parts = Path(g).parent.parts[1:]
        for i in range(1, len(parts) + 1):
            out.add("/" + "/".join(parts[:i]))
    return sorted(out, key=lambda d: (d.count("/"), d))


def spec(build_dir, userspace, scenario, params, programs, busybox=base.BUSYBOX):
    missing = set(APPLETS) - base.busybox_applets(busybox)
    if missing:
        raise HarnessError("lttng", f"{busybox} lacks applets: {' '.join(sorted(missing))}")
    files = dict(guestroot.closure(userspace))
    stage = Path(build_dir) / "stage"
    for f in sorted(stage.rglob("*")):
        if f.is_file():
            files["/" + str(f.relative_to(stage))] = f
    files["/bin/busybox"] = busybox
    files["/init"] = INIT
    files["/etc/ksymlab/scenario"] = Path(scenario)
    files["/etc/ksymlab/params"] = Path(params)
    # sessiond validates session files (and its autoload) against this schema
    files["/usr/share/xml/lttng/session.xsd"] = Path(userspace) / "usr/share/xml/lttng/session.xsd"
    # the tracing group lttng-sessiond gives its sockets to
    files["/etc/group"] = Path(params).with_name("lttng-group")
    files.update(programs)
    return cpio_list(files, APPLETS)


def cpio_list(files, applets, step="lttng", link_copies=False):
    """gen_init_cpio's list: `files` ({guest path: host file}), their directories and
    the usual mount points, /dev/console, and busybox links for `applets`.
    `link_copies`: a host file given under several guest paths is packed once, the
    others are symbolic links to it (python3 and python3.11, perl and perl5.36.0)."""
    for g, h in files.items():
        if not Path(h).is_file():
            raise HarnessError(step, f"{h}: not found (for {g})")
    extra_dirs = ["/dev", "/proc", "/sys", "/tmp", "/mnt", "/root", "/var", "/run"]
    lines = [f"dir {d} 0755 0 0" for d in sorted(set(_dirs(files) + extra_dirs),
                                                  key=lambda d: (d.count("/"), d))]
    lines.append("nod /dev/console 0600 0 0 c 5 1")
    lines += [f"slink /bin/{a} busybox 0777 0 0" for a in applets]
    first = {}
    for g, h in sorted(files.items()):
        st = os.stat(h)
        same = (st.st_dev, st.st_ino)       # hard links too (perl, perl5.36.0)
        if link_copies and same in first:
            lines.append(f"slink {g} {first[same]} 0777 0 0")
            continue
        first[same] = g
        mode = "0755" if os.access(h, os.X_OK) or g.startswith("/bin/") or g == "/init" \
            else "0644"
        lines.append(f"file {g} {h} {mode} 0 0")
    return "\n".join(lines) + "\n"


def build(tree, build_dir, userspace, scenario, workdir, cache, variant, series, prio=True,
          restricted=False):
    """Write <workdir>/lttng-initramfs.cpio (cached by content) and return it.
    `restricted`: the tree restricts its tracer exports to LTTng's names; add the three
    test modules the guest loads under other names (harness/prepare/formods.py)."""
    workdir.mkdir(parents=True, exist_ok=True)
    params = workdir / "lttng-params"
    params.with_name("lttng-group").write_text("root:x:0:\ntracing:x:0:\n")
    params.write_text(f"KSYMLAB_VARIANT={variant}\nKSYMLAB_LTTNG_SERIES={series}\n"
                      f"KSYMLAB_LTTNG_PRIO={int(prio)}\n")
    programs = {g: base.build_guest_program(src, cache) for src, g in PROGRAMS.items()}
    # two handlers on one shared interrupt line for the interrupt statedump (issue 43)
    programs[SHIRQ_GUEST_PATH] = modulemod.build_shirq(tree, cache)
    # a hidden disk and a disk without capacity for the block statedump (issue 43)
    programs[base.DISKS_GUEST_PATH] = modulemod.build_disks(tree, cache)
    if restricted:
        programs.update(formods.build_all(tree, cache))
    text = spec(build_dir, userspace, scenario, params, programs)
    return pack(text, tree, cache, workdir / "lttng-initramfs", variant)


KIND = "lttng/initramfs"    # its kind in the build cache (prepare/cachelayout.py)


def pack(text, tree, cache, out, variant, step="lttng"):
    """Write `out`.list and `out`.cpio (packed by the tree's gen_init_cpio) and return
    the .cpio. With a `cache`, the image is an entry of it (cache.entry()), keyed by
    content: packed once under its exclusive lock, then copied; `cache` None: packed
    into `out` only."""
    listing = out.with_suffix(".list")
    listing.write_text(text)
    target = out.with_suffix(".cpio")
    if cache is None:
        target.unlink(missing_ok=True)
        _gen_init_cpio(tree, listing, target, step)
        say(step, f"{variant}: built {target.name}, {target.stat().st_size // 1024} KiB")
        return target
    key = base.content_key(text, tree.gen_init_cpio)
    cached = cachemod.entry_path(cache, KIND, key)
    with cachemod.entry(cachemod.lock_path(cache, KIND, key), cached.exists) as e:
        if not e.missing:
            cachemod.used(KIND, cache, key)
        else:
            _gen_init_cpio(tree, listing, cached, step)
            e.built(KIND, cache, key, variant)
            say(step, f"{variant}: built {out.name} {cached.name}, "
                      f"{cached.stat().st_size // 1024} KiB")
        shutil.copyfile(cached, target)
        if e.missing:
            cachemod.after_new_entry(cache)     # never this image: its lock is held
    return target


def _gen_init_cpio(tree, listing, dest, step):
    """Pack `listing` into `dest` (a temporary file renamed into place)."""
    tmp = dest.with_suffix(f".tmp{os.getpid()}-{threading.get_ident()}")
    try:
        with open(tmp, "wb") as f:
            p = subprocess.run([str(tree.gen_init_cpio), str(listing)],
                               stdout=f, stderr=subprocess.PIPE)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise HarnessError(step, f"cannot run {tree.gen_init_cpio}: {err.strerror}") from err
    if p.returncode != 0:
        tmp.unlink()
        raise HarnessError(step, f"gen_init_cpio exited {p.returncode}: "
                           f"{p.stderr.decode(errors='replace').strip()[:300]}")
    tmp.replace(dest)
