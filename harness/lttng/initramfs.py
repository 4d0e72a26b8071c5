"""The LTTng boot's initramfs: busybox, Debian's lttng userspace and its libraries,
the LTTng modules built for the tree (with depmod's files made on the host), the
scenario and the guest programs; packed with the tree's usr/gen_init_cpio."""

import os
import shutil
import subprocess
import threading
from pathlib import Path

from ..build import initramfs as base
from .. import paths
from ..errors import HarnessError
from ..progress import say
from . import guestroot

INIT = paths.GUEST / "lttng-init"
APPLETS = ("sh", "mount", "cat", "echo", "sleep", "renice", "stty", "reboot", "uname", "ls",
           "dmesg", "grep", "sed", "mkdir", "awk", "fdisk", "mke2fs", "dd", "sync", "kill",
           "rm", "mkfifo", "ifconfig", "tar", "base64", "head", "hostname")
PROGRAMS = {"sched.c": "/bin/ksymlab-sched", "lttng-ustack.c": "/bin/ksymlab-lttng-ustack"}


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
    for g, h in files.items():
        if not Path(h).is_file():
            raise HarnessError("lttng", f"{h}: not found (for {g})")
    extra_dirs = ["/dev", "/proc", "/sys", "/tmp", "/mnt", "/root", "/var", "/run"]
    lines = [f"dir {d} 0755 0 0" for d in sorted(set(_dirs(files) + extra_dirs),
                                                  key=lambda d: (d.count("/"), d))]
    lines.append("nod /dev/console 0600 0 0 c 5 1")
    lines += [f"slink /bin/{a} busybox 0777 0 0" for a in APPLETS]
    for g, h in sorted(files.items()):
        mode = "0755" if os.access(h, os.X_OK) or g.startswith("/bin/") else "0644"
        lines.append(f"file {g} {h} {mode} 0 0")
    return "\n".join(lines) + "\n"


def build(tree, build_dir, userspace, scenario, workdir, cache, variant, series, prio=True):
    """Write <workdir>/lttng-initramfs.cpio (cached by content) and return it."""
    workdir.mkdir(parents=True, exist_ok=True)
    params = workdir / "lttng-params"
    params.with_name("lttng-group").write_text("root:x:0:\ntracing:x:0:\n")
    params.write_text(f"KSYMLAB_VARIANT={variant}\nKSYMLAB_LTTNG_SERIES={series}\n"
                      f"KSYMLAB_LTTNG_PRIO={int(prio)}\n")
    programs = {g: base.build_guest_program(src, cache) for src, g in PROGRAMS.items()}
    text = spec(build_dir, userspace, scenario, params, programs)
    (workdir / "lttng-initramfs.list").write_text(text)
    out = workdir / "lttng-initramfs.cpio"
    key = base.content_key(text, tree.gen_init_cpio)
    cached = Path(cache) / "lttng" / "initramfs" / f"{key}.cpio"
    cached.parent.mkdir(parents=True, exist_ok=True)
    if not cached.exists():
        tmp = cached.with_suffix(f".tmp{os.getpid()}-{threading.get_ident()}")
        with open(tmp, "wb") as f:
            p = subprocess.run([str(tree.gen_init_cpio), str(workdir / "lttng-initramfs.list")],
                               stdout=f, stderr=subprocess.PIPE)
        if p.returncode != 0:
            tmp.unlink()
            raise HarnessError("lttng", f"gen_init_cpio exited {p.returncode}: "
                               f"{p.stderr.decode(errors='replace').strip()[:300]}")
        tmp.replace(cached)
        say("lttng", f"{variant}: built LTTng initramfs {cached.name}, "
                     f"{cached.stat().st_size // 1024} KiB")
    shutil.copyfile(cached, out)
    return out
