"""Crafted bad inputs: symcheck must exit 2 with one line 'symcheck: FILE: problem' on stderr."""
import json
import os
import random
import shutil

import pytest

from symcheck_testlib import symcheck, FIX

KO = os.path.join(FIX, "fake_mod.ko")
BUILD = os.path.join(FIX, "fake_build")


def assert_bad(r, path=None):
    assert r.returncode == 2, (r.returncode, r.stdout[:200], r.stderr)
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("symcheck: ")
    if path is not None:
        assert lines[0].startswith("symcheck: %s: " % path), lines[0]


def patched(tmp_path, name, src, offset, data):
    b = bytearray(open(src, "rb").read())
    b[offset:offset + len(data)] = data
    p = tmp_path / name
    p.write_bytes(bytes(b))
    return p


@pytest.mark.parametrize("cmd", ["module", "audit"])
def test_bad_ko(cmd, tmp_path):
    raw = open(KO, "rb").read()
    cases = {
        "empty.ko": b"",
        "text.ko": b"0x1\tfoo\tvmlinux\tEXPORT_SYMBOL\t\n",
        "trunc.ko": raw[:200],
        "trunc_end.ko": raw[:-1],
        "magic_only.ko": b"\x7fELF",
    }
    for name, data in cases.items():
        p = tmp_path / name
        p.write_bytes(data)
        assert_bad(symcheck(cmd, p), p)
    assert_bad(symcheck(cmd, patched(tmp_path, "c32.ko", KO, 4, b"\x01")))
    r = symcheck(cmd, patched(tmp_path, "arm.ko", KO, 18, b"\xb7\x00"))
    assert_bad(r)
    assert "aarch64" in r.stderr
    assert_bad(symcheck(cmd, tmp_path / "missing.ko"), tmp_path / "missing.ko")
    assert_bad(symcheck(cmd, tmp_path), tmp_path)
    assert_bad(symcheck(cmd, os.path.join(BUILD, "vmlinux")))


def test_random_mutations_never_crash(tmp_path):
    """Byte mutations of a real-ish .ko: exit 0/1 or a clean exit 2, never a signal."""
    raw = bytearray(open(KO, "rb").read())
    rnd = random.Random(1234)
    p = tmp_path / "m.ko"
    for i in range(150):
        b = bytearray(raw)
        for _ in range(rnd.randint(1, 8)):
            b[rnd.randrange(len(b))] = rnd.randrange(256)
        p.write_bytes(bytes(b))
        for cmd in ("module", "audit"):
            r = symcheck(cmd, p)
            assert r.returncode in (0, 1, 2), (i, r.returncode, r.stderr)
            if r.returncode == 2:
                assert_bad(r)
            r = symcheck("--json", cmd, p)
            if r.returncode in (0, 1):
                json.loads(r.stdout)
            else:
                assert_bad(r)
        r = symcheck("check", p, BUILD)
        assert r.returncode in (0, 1, 2)
        r = symcheck("exports", p)   # as a vmlinux
        assert r.returncode == 2


def test_truncated_vmlinux(tmp_path):
    raw = open(os.path.join(BUILD, "vmlinux"), "rb").read()
    for n in (10, 64, 100, 1000, len(raw) // 2, len(raw) - 1):
        d = tmp_path / ("b%d" % n)
        d.mkdir()
        (d / "vmlinux").write_bytes(raw[:n])
        r = symcheck("exports", d)
        assert_bad(r, d / "vmlinux")


def test_bad_symvers(tmp_path):
    good = "0x00000001\tfoo\tvmlinux\tEXPORT_SYMBOL\t\n"
    cases = {
        "few": "0x1\tfoo\tvmlinux\n",
        "many": "0x1\tfoo\tvmlinux\tEXPORT_SYMBOL\tNS\tx\n",
        "crc": "0xg1\tfoo\tvmlinux\tEXPORT_SYMBOL\t\n",
        "crc_long": "0x1234567890\tfoo\tvmlinux\tEXPORT_SYMBOL\t\n",
        "type": "0x1\tfoo\tvmlinux\tEXPORT_SYMBOL_GPL_FUTURE\t\n",
        "spaces": "0x1 foo vmlinux EXPORT_SYMBOL\n",
        "dup": good + good,
        "late_garbage": good * 3 + "garbage\n",
        "long": "0x1\t" + "a" * 10000 + "\tvmlinux\tEXPORT_SYMBOL\t\n",
        "huge_line": "x" * 200000,
        "blank": "\n\n",
        "empty": "",
        "binary": "\x00\x01\x02\x7fELF",
    }
    for name, txt in cases.items():
        d = tmp_path / name
        d.mkdir()
        (d / "Module.symvers").write_text(txt)
        for args in (("exports", d), ("diff", d, BUILD), ("diff", BUILD, d), ("check", KO, d),
                     ("seed-report", d)):
            assert_bad(symcheck(*args), d / "Module.symvers")
    r = symcheck("exports", tmp_path / "late_garbage" / "Module.symvers")
    assert "line 4" in r.stderr


def test_usage_errors():
    for args in ([], ["bogus"], ["module"], ["module", KO, KO], ["check", KO], ["diff", BUILD],
                 ["exports"], ["exports", "--nope", BUILD], ["seed-report"], ["seed-report", "--symbols"],
                 ["audit"], ["check", "--frob", KO, BUILD]):
        r = symcheck(*args)
        assert_bad(r)


def test_special_files():
    assert_bad(symcheck("module", "/dev/null"), "/dev/null")
    assert_bad(symcheck("exports", "/dev/null"), "/dev/null")


def test_distro_truncated_and_corrupt(distro, tmp_path):
    ko = distro.sample()[3]
    raw = open(ko, "rb").read()
    for n in (64, 1000, len(raw) // 2):
        p = tmp_path / ("t%d.ko" % n)
        p.write_bytes(raw[:n])
        assert_bad(symcheck("module", p), p)
        assert_bad(symcheck("check", p, distro.build), p)
    # vmlinux cut in the middle: section headers (at the end) are gone
    d = tmp_path / "build"
    d.mkdir()
    with open(distro.vmlinux, "rb") as f:
        (d / "vmlinux").write_bytes(f.read(4 << 20))
    shutil.copyfile(distro.symvers, d / "Module.symvers")
    assert_bad(symcheck("exports", d), d / "vmlinux")
    # one over-long line inside the real Module.symvers
    lines = open(distro.symvers).read().splitlines(True)
    lines[100] = lines[100].rstrip("\n") + "X" * 5000 + "\n"
    (d / "Module.symvers").write_text("".join(lines))
    r = symcheck("check", ko, d)
    assert_bad(r, d / "Module.symvers")
    assert "line 101" in r.stderr
