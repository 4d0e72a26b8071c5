"""Compressed distro modules (.ko.xz, .ko.zst, .ko.gz made here with the xz, zstd and gzip
tools): symcheck must read the same __versions CRCs and undefined symbols as from the plain
file, and the same as kmod (modprobe --dump-modversions) and binutils (nm -u) read."""
import json
import os
import shutil

import pytest

from symcheck_testlib import (COMPRESSORS, compress, dump_modversions, kmod_features, nm_undefined,
                              symcheck)

SAMPLE = 12


def module_doc(path):
    r = symcheck("--json", "module", path)
    assert r.returncode == 0, (path, r.stderr)
    return json.loads(r.stdout)


def versions(doc):
    return [(v["name"], int(v["crc"], 16)) for v in doc["versions"]]


def undefined(doc):
    return {u["name"]: u["weak"] for u in doc["undefined"]}


@pytest.mark.parametrize("ext", sorted(COMPRESSORS))
def test_compressed_equals_plain_and_kmod(distro, tmp_path, ext):
    if shutil.which(COMPRESSORS[ext][0]) is None:
        pytest.fail(COMPRESSORS[ext][0] + " is not installed: `make deps` installs it "
                    "(harness/debian-packages.txt)", pytrace=False)
    kmod_reads = {"xz": "XZ", "zst": "ZSTD", "gz": "ZLIB"}[ext] in kmod_features()
    compared = 0
    for ko in distro.sample(SAMPLE):
        plain_dump = dump_modversions(ko)
        plain_undef = nm_undefined(ko)
        z = compress(ko, str(tmp_path / (os.path.basename(ko) + "." + ext)), ext)
        doc = module_doc(z)
        assert versions(doc) == plain_dump, z
        assert undefined(doc) == plain_undef, z
        if kmod_reads:   # Debian's kmod 30 has no zlib: then the plain file is the oracle
            assert dump_modversions(z) == plain_dump, z
        plain_doc = module_doc(ko)
        del doc["file"], plain_doc["file"]
        assert doc == plain_doc
        compared += 1
    assert compared == SAMPLE


def test_compressed_check_and_audit(distro, tmp_path):
    mods = distro.sample(SAMPLE)
    zs = [compress(ko, str(tmp_path / (os.path.basename(ko) + ".xz")), "xz") for ko in mods[:6]]
    zs += [compress(ko, str(tmp_path / (os.path.basename(ko) + ".zst")), "zst") for ko in mods[6:]]
    r = symcheck("--json", "check", *zs, distro.build)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert [m["file"] for m in doc["modules"]] == zs and doc["findings_total"] == 0
    for m, ko in zip(doc["modules"], mods):
        assert {s["name"] for s in m["symbols"]} == set(nm_undefined(ko))
    for z, ko in zip(zs, mods):
        a, b = symcheck("--json", "audit", z), symcheck("--json", "audit", ko)
        assert a.returncode == b.returncode and json.loads(a.stdout)["findings"] == json.loads(b.stdout)["findings"]


def test_truncated_and_corrupt_compressed(distro, tmp_path):
    ko = distro.sample(SAMPLE)[3]
    for ext in sorted(COMPRESSORS):
        z = compress(ko, str(tmp_path / ("m.ko." + ext)), ext)
        data = open(z, "rb").read()
        bad = bytearray(data)
        bad[len(bad) // 2] ^= 0xFF
        for name, blob in (("half", data[:len(data) // 2]), ("corrupt", bytes(bad)), ("magic", data[:6])):
            p = tmp_path / ("%s.ko.%s" % (name, ext))
            p.write_bytes(blob)
            for cmd in ("module", "audit"):
                r = symcheck(cmd, p)
                assert r.returncode == 2, (p, r.stderr)
                assert r.stderr.count("\n") == 1 and r.stderr.startswith("symcheck: %s: " % p), r.stderr
