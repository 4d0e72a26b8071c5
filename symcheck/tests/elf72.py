"""Linux 7.2 ELF layouts decoded with struct, independently of symcheck: the oracle of the
7.2 tests on the k72 fixtures (test_k72.py) and on Debian's own 7.2 kernel (test_distro72.py)."""
import struct


class Elf:
    """Sections ({name: (index, offset, size, addr, info)}), symbols and RELA of an ELF64 LE file."""

    def __init__(self, path):
        self.data = d = open(path, "rb").read()
        shoff, = struct.unpack_from("<Q", d, 0x28)
        shnum, shstrndx = struct.unpack_from("<HH", d, 0x3c)
        hdrs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * 64) for i in range(shnum)]
        stroff = hdrs[shstrndx][4]
        name = lambda off: d[stroff + off:d.index(b"\0", stroff + off)].decode()
        self.sec = {name(h[0]): (i, h[4], h[5], h[3], h[7], h[1]) for i, h in enumerate(hdrs)}
        self.by_index = {i: n for n, (i, *_r) in self.sec.items()}
        self.syms = []
        for n, (i, off, size, addr, info, typ) in self.sec.items():
            if typ == 2:   # SHT_SYMTAB
                soff = hdrs[hdrs[i][6]][4]
                for k in range(size // 24):
                    st_name, _info, _o, shndx, value, _s = struct.unpack_from("<IBBHQQ", d, off + k * 24)
                    sname = d[soff + st_name:d.index(b"\0", soff + st_name)].decode()
                    self.syms.append((sname, shndx, value))

    def bytes(self, name):
        _i, off, size, *_r = self.sec[name]
        return self.data[off:off + size]

    def cstr(self, name, at):
        b = self.bytes(name)
        return b[at:b.index(b"\0", at)].decode()


def decode_vmlinux(path):
    """{name: (class, namespace, crc)}: entry i of __ksymtab, byte i of __kflagstab (bit 0 is
    KSYM_FLAG_GPL_ONLY, include/linux/module_symbol.h:7), u32 i of __kcrctab."""
    e = Elf(path)
    tab, flags = e.bytes("__ksymtab"), e.bytes("__kflagstab")
    # no __kcrctab without CONFIG_MODVERSIONS (Debian's 7.2): no CRC, None
    crcs = e.bytes("__kcrctab") if "__kcrctab" in e.sec else None
    taddr, saddr = e.sec["__ksymtab"][3], e.sec["__ksymtab_strings"][3]
    out = {}
    for i in range(len(tab) // 12):
        _v, n_off, ns_off = struct.unpack_from("<iii", tab, i * 12)
        name = e.cstr("__ksymtab_strings", taddr + i * 12 + 4 + n_off - saddr)
        ns = e.cstr("__ksymtab_strings", taddr + i * 12 + 8 + ns_off - saddr)
        cls = "EXPORT_SYMBOL_GPL" if flags[i] & 1 else "EXPORT_SYMBOL"
        crc = None if crcs is None else "0x%08x" % struct.unpack_from("<I", crcs, i * 4)[0]
        out[name] = (cls, ns, crc)
    return out, list(flags)


def this_module_name(path):
    """The name field (byte 24, 56 bytes) of struct module in .gnu.linkonce.this_module."""
    e = Elf(path)
    if ".gnu.linkonce.this_module" not in e.sec:
        return None
    return e.cstr(".gnu.linkonce.this_module", 24)


def loader_allows(ns, modname):
    """verify_module_namespace() as read in 7.2.12 kernel/module/main.c:1179-1207 (with
    mod_strncmp, 204-220: '-' and '_' compare equal; a pattern ending in '*' is a tail glob)."""
    fold = lambda s: s.replace("-", "_")
    for pat in ns[len("module:"):].split(","):
        if pat.endswith("*"):
            if fold(modname).startswith(fold(pat[:-1])):
                return True
        elif pat and fold(pat) == fold(modname):
            return True
    return False
