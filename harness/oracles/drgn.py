"""The third oracle: drgn reads the vmcore QEMU wrote at the snapshot.

This is the harness half (any Python): read() writes drgn-in.json and runs
the drgn half, harness/oracles/drgn_vmcore.py, as
`/usr/bin/python3 -m harness.oracles.drgn_vmcore IN OUT` (Debian's
python3-drgn lives in /usr/bin/python3's dist-packages), logging to drgn.log,
and reads back its drgn.json as a DrgnReading (harness/oracles/readings.py).
A failure comes back as a DrgnReading with only `error` set, never as an
exception, so gdb's checks still count and the drgn rows say what is
missing. What the drgn half reads is listed in its docstring.

Also here, because they need no drgn: Bad (the drgn half's one-line failure,
exit status 43) and symbol_place() (the .ko's symbol table, through readelf).
"""

import json
import subprocess
import time
from dataclasses import replace
from pathlib import Path

from .. import paths
from ..errors import HarnessError
from ..guest import vmcore
from ..guest.kaslr import symbol_addresses
from ..proc import run_logged
from ..progress import say
from .readings import DrgnReading

PYTHON = "/usr/bin/python3"
# The module /usr/bin/python3 runs under drgn (harness/oracles/drgn_vmcore.py).
CHILD = "harness.oracles.drgn_vmcore"
DRGN_TIMEOUT = 600

# Where VMCOREINFO comes from when the guest handed it to QEMU; anything else
# (a note synthesized from vmlinux) is a fallback.
VMCOREINFO_FROM_GUEST = ("note",)


def read(dumped, tree, claims, vdir, variant="", slide=0, keep=True):
    """Run drgn on the vmcore `dumped` (vmcore.take()); return its DrgnReading (only
    `error` set when drgn could not read). Unless `keep`, a vmcore drgn has read
    is removed (it is as large as the guest's RAM); one drgn could not read stays
    for a look."""
    failed = DrgnReading.failed
    if not dumped:
        return failed("no vmcore: the snapshot was never held for a dump")
    if dumped.get("error"):
        return failed(f"no vmcore: {dumped['error']}")
    vdir = Path(vdir).resolve()
    in_file, out_file, log = vdir / "drgn-in.json", vdir / "drgn.json", vdir / "drgn.log"
    for f in (out_file, log):
        if f.exists():
            f.unlink()
    core, synthesized = str(Path(dumped["path"]).resolve()), False
    try:
        if dumped.get("format") == "elf" and vmcore.vmcoreinfo_text(core) is None:
            # The guest gave QEMU no VMCOREINFO (a kernel without crash_core or
            # fw_cfg): drgn still reads the dump with one made from vmlinux,
            # and the vmcoreinfo row fails, saying so.
            core = str(vmcore.add_vmcoreinfo(core, vdir / "vmcore.synthesized",
                                             synthesized_vmcoreinfo(tree, slide)))
            synthesized = True
    except (OSError, HarnessError) as e:
        return failed(f"{core}: {e}")
    in_file.write_text(json.dumps({
        "vmcore": core, "synthesized": synthesized,
        "vmlinux": str(tree.vmlinux), "module": claims["module"],
        "sections": claims["sections"], "symbols": claims["symbols"],
        "pageblock_order": claims["pageblock_order"]}, indent=1))
    t0 = time.monotonic()
    try:
        run_logged("drgn", [PYTHON, "-m", CHILD, in_file, out_file], log,
                   cwd=paths.REPO, timeout=DRGN_TIMEOUT)
        out = json.loads(out_file.read_text())
    except HarnessError as e:
        if e.message == "interrupted":
            raise
        return failed(_last_line(log) or e.message)
    except (OSError, ValueError) as e:
        return failed(f"{out_file}: {e}")
    try:
        reading = DrgnReading.parse(out, str(out_file))
    except HarnessError as e:
        return failed(e.message)
    if reading.error:
        return reading
    reading = replace(reading, seconds=round(time.monotonic() - t0, 2))
    if not keep:
        for f in {Path(dumped["path"]), Path(core)}:
            f.unlink(missing_ok=True)
    say("drgn", f"{variant}: read {len(reading.tasks)} tasks, {len(reading.pageblocks)} "
                f"pageblocks, {len(reading.disks)} block devices from the vmcore in "
                f"{reading.seconds} s")
    return reading


def synthesized_vmcoreinfo(tree, slide=0):
    """The VMCOREINFO lines drgn (through libkdumpfile) needs, from vmlinux:
    kernel/crash_core.c and arch/x86/kernel/crash_core_64.c write the same
    keys. phys_base 0 holds only where the kernel runs at its link-time
    physical address (nokaslr); with KASLR the physical base moves too, and
    a synthesized note cannot know it."""
    syms = symbol_addresses(tree.vmlinux, ("init_top_pgt", "mem_section"))
    release = (Path(tree.vmlinux).parent / "include/config/kernel.release").read_text().strip()
    return "".join(f"{k}={v}\n" for k, v in (
        ("OSRELEASE", release), ("PAGESIZE", 4096),
        # drgn wants swapper_pg_dir, libkdumpfile init_top_pgt: one table on x86_64
        ("SYMBOL(swapper_pg_dir)", f"{syms['init_top_pgt'] + slide:x}"),
        ("SYMBOL(init_top_pgt)", f"{syms['init_top_pgt'] + slide:x}"),
        ("SYMBOL(mem_section)", f"{syms['mem_section'] + slide:x}"),
        # arch/x86/include/asm/sparsemem.h, x86_64
        ("NUMBER(SECTION_SIZE_BITS)", 27),
        ("NUMBER(phys_base)", 0), ("NUMBER(pgtable_l5_enabled)", 0),
        ("KERNELOFFSET", f"{slide:x}")))


def _last_line(log):
    try:
        lines = [x for x in Path(log).read_text(errors="replace").splitlines() if x.strip()]
    except OSError:
        return None
    for line in lines:
        if line.startswith("ksymlab-drgn:"):
            return line
    return lines[-1] if lines else None


def summary(dumped, reading):
    """What the report states about the vmcore and drgn's read (a variant fact)."""
    out = {k: dumped.get(k) for k in ("format", "bytes", "seconds", "status", "error")
           if dumped.get(k) is not None}
    if reading.error:
        out["drgn_error"] = reading.error
    else:
        out["drgn_seconds"] = reading.seconds
        out["vmcoreinfo"] = reading.vmcoreinfo.present
    return out


# ---- shared with the drgn half (no drgn needed) ----

class Bad(Exception):
    """Input drgn cannot read: one line, exit status 43 (errors.EXIT["drgn"])."""


def symbol_place(ko, name):
    """(section name, offset) of a symbol of a relocatable ELF (readelf)."""
    shdrs = subprocess.run(["readelf", "-SW", ko], capture_output=True, text=True,
                           check=True).stdout
    names = {}
    for line in shdrs.splitlines():
        line = line.strip()
        if line.startswith("[") and "]" in line:
            idx, rest = line[1:].split("]", 1)
            if idx.strip().isdigit() and rest.split():
                names[int(idx)] = rest.split()[0]
    syms = subprocess.run(["readelf", "-sW", ko], capture_output=True, text=True,
                          check=True).stdout
    for line in syms.splitlines():
        f = line.split()
        if len(f) == 8 and f[7] == name and f[6].isdigit():
            return names[int(f[6])], int(f[1], 16)
    raise Bad(f"{ko}: no symbol {name}")
