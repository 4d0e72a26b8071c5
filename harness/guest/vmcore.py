"""Have QEMU write a vmcore of the guest while gdb holds it at the snapshot.

QEMU's QMP monitor (a unix socket beside the gdbstub's, harness/guest/qemu.py)
runs `dump-guest-memory`; with `-device vmcoreinfo` QEMU adds the guest
kernel's VMCOREINFO note, whose physical address the guest's fw_cfg driver
(qemu_fw_cfg.ioport= on the kernel command line) wrote to fw_cfg's
etc/vmcoreinfo at boot. The dump is synchronous: QMP answers once the file
is complete. gdb stays attached and the VM stays stopped throughout (QEMU
only restarts a VM it stopped itself).

drgn (harness/oracles/drgn.py, which runs harness/oracles/drgn_vmcore.py)
then reads the file on the host.
"""

import json
import shutil
import socket
import struct
import time
from pathlib import Path

from ..errors import HarnessError
from ..progress import say

# "elf" keeps every byte of guest RAM (512 MiB, zero pages too). QEMU 7.2's
# kdump formats would be 15 MiB, but it writes them in makedumpfile's
# flattened (streaming) layout, which neither drgn 0.0.22 nor libkdumpfile
# reads ("not an ELF core file"; QEMU 8.2 added `reassembled`).
DEFAULT_FORMAT = "elf"
FORMATS = ("elf",)
QMP_TIMEOUT = 300


class Qmp:
    """A minimal QMP client: the greeting, qmp_capabilities, then commands."""

    def __init__(self, path, timeout=QMP_TIMEOUT):
        self.path = str(path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        try:
            self.sock.connect(self.path)
        except OSError as e:
            self.sock.close()
            raise HarnessError("vmcore", f"cannot connect to QMP at {path}: {e}") from e
        self.reader = self.sock.makefile("r", encoding="utf-8")
        greeting = self._read()
        if "QMP" not in greeting:
            raise HarnessError("vmcore", f"{path}: not a QMP greeting: {greeting}")
        self.execute("qmp_capabilities")

    def _read(self):
        try:
            line = self.reader.readline()
        except OSError as e:           # socket.timeout included
            raise HarnessError("vmcore", f"QMP {self.path}: {e}") from e
        if not line:
            raise HarnessError("vmcore", f"QMP {self.path}: QEMU closed the monitor")
        try:
            return json.loads(line)
        except ValueError as e:
            raise HarnessError("vmcore", f"QMP {self.path}: not JSON: {line[:80]!r}") from e

    def execute(self, command, **arguments):
        msg = {"execute": command}
        if arguments:
            msg["arguments"] = arguments
        self.sock.sendall((json.dumps(msg) + "\n").encode())
        while True:
            reply = self._read()
            if "return" in reply:
                return reply["return"]
            if "error" in reply:
                err = reply["error"]
                raise HarnessError("vmcore", f"QMP {command}: {err.get('class')}: "
                                   f"{err.get('desc')}")
            # asynchronous events (STOP, DUMP_COMPLETED, ...) are skipped

    def close(self):
        self.reader.close()
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def dump(qmp_socket, path, fmt=DEFAULT_FORMAT, variant=""):
    """Write the guest's memory to `path`; return {path, format, bytes, seconds, status}."""
    if fmt not in FORMATS:
        raise HarnessError("usage", f"vmcore format {fmt!r}: not one of {', '.join(FORMATS)}")
    path = Path(path)
    if path.exists():
        path.unlink()
    t0 = time.monotonic()
    with Qmp(qmp_socket) as qmp:
        status = qmp.execute("query-status").get("status")
        # paging=false: physical memory as it is; drgn translates addresses with
        # the kernel's own page tables, found through VMCOREINFO.
        qmp.execute("dump-guest-memory", paging=False, protocol=f"file:{path}",
                    format=fmt)
        seconds = round(time.monotonic() - t0, 2)
        after = qmp.execute("query-status").get("status")
    if not path.exists():
        raise HarnessError("vmcore", f"{variant}: dump-guest-memory returned but wrote no {path}")
    size = path.stat().st_size
    say("vmcore", f"{variant}: {fmt} vmcore of {size / 2**20:.1f} MiB in {seconds} s "
                  f"(guest {status})")
    return {"path": str(path), "format": fmt, "bytes": size, "seconds": seconds,
            "status": status, "status_after": after}


# ---- what is in the file (read on the host, no drgn needed) ----

PT_NOTE = 4


def elf_notes(path):
    """(name, descriptor bytes) of every note of a little-endian ELF64 core; [] if not one."""
    with open(path, "rb") as f:
        ident = f.read(64)
        if len(ident) < 64 or ident[:4] != b"\x7fELF" or ident[4] != 2 or ident[5] != 1:
            return []
        phoff, = struct.unpack_from("<Q", ident, 32)
        phentsize, phnum = struct.unpack_from("<HH", ident, 54)
        out = []
        for i in range(phnum):
            f.seek(phoff + i * phentsize)
            p_type, _flags, p_offset, _va, _pa, p_filesz = struct.unpack("<IIQQQQ", f.read(40))
            if p_type != PT_NOTE:
                continue
            f.seek(p_offset)
            notes = f.read(p_filesz)
            off = 0
            while off + 12 <= len(notes):
                namesz, descsz, _type = struct.unpack_from("<III", notes, off)
                off += 12
                name = notes[off:off + namesz].rstrip(b"\0").decode(errors="replace")
                off += (namesz + 3) & ~3
                out.append((name, notes[off:off + descsz]))
                off += (descsz + 3) & ~3
    return out


def vmcoreinfo_text(path):
    """The text of the vmcore's VMCOREINFO note, or None (no note, or not an ELF core)."""
    for name, desc in elf_notes(path):
        if name == "VMCOREINFO":
            return desc.rstrip(b"\0").decode(errors="replace")
    return None


def take(qmp_socket, vdir, variant="", fmt=DEFAULT_FORMAT):
    """dump() into the variant's run directory; a failure is recorded, not raised,
    so gdb's checks still run and the drgn rows say why they have no values."""
    try:
        return dump(qmp_socket, Path(vdir) / "vmcore", fmt, variant)
    except HarnessError as e:
        say("vmcore", f"{variant}: {e.message}")
        return {"error": e.message}


def add_vmcoreinfo(src, dst, text):
    """Copy the ELF core `src` to `dst` with one more note, VMCOREINFO `text`.

    The fallback for a guest kernel that did not hand QEMU its own note (no
    crash_core or no fw_cfg): the new note and a new program header table
    go at the end of the copy, e_phoff and e_phnum point there; the memory
    segments are untouched. Returns dst.
    """
    shutil.copyfile(src, dst)
    name = b"VMCOREINFO\0"
    desc = text.encode()
    note = struct.pack("<III", len(name), len(desc), 0)
    note += name + b"\0" * (-len(name) % 4) + desc + b"\0" * (-len(desc) % 4)
    with open(dst, "r+b") as f:
        ehdr = bytearray(f.read(64))
        if ehdr[:4] != b"\x7fELF" or ehdr[4] != 2 or ehdr[5] != 1:
            raise HarnessError("vmcore", f"{src}: not a little-endian ELF64 core")
        phoff, = struct.unpack_from("<Q", ehdr, 32)
        phentsize, phnum = struct.unpack_from("<HH", ehdr, 54)
        f.seek(phoff)
        table = f.read(phentsize * phnum)
        end = f.seek(0, 2)
        note_off = (end + 7) & ~7
        f.write(b"\0" * (note_off - end) + note)
        phdr = struct.pack("<IIQQQQQQ", PT_NOTE, 0, note_off, 0, 0, len(note), len(note), 4)
        new_phoff = (note_off + len(note) + 7) & ~7
        f.seek(new_phoff)
        f.write(phdr + table)
        struct.pack_into("<Q", ehdr, 32, new_phoff)
        struct.pack_into("<H", ehdr, 56, phnum + 1)
        f.seek(0)
        f.write(ehdr)
    return dst
