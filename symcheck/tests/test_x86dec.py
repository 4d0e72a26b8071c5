"""The x86-64 decoder under the audit's existence checks (src/x86dec.c), held against binutils'
objdump: every function of a module must split into the same instructions (build/x86dec_dump
prints the decoder's boundaries). Inputs: the compiled fixtures, and Debian's own 7.2 modules
(compiled by Debian's gcc with its kernel config: AVX/AVX-512 crypto, KVM, alternatives,
retpolines, .cold parts), sampled across the tree."""
import lzma
import os
import shutil

import pytest

from symcheck_testlib import FIX, SYMCHECK_DIR, fetched_line, objdump_listing, run

DUMP = os.path.join(SYMCHECK_DIR, "build", "x86dec_dump")


def decoded(path):
    """{function: ([instruction offsets], fail offset or None)} from x86dec_dump."""
    r = run([DUMP, path])
    assert r.returncode == 0, r.stderr
    out = {}
    for line in r.stdout.splitlines():
        parts = line.split("\t")
        offs, fail = out.setdefault(parts[0], ([], [None]))
        if parts[1] == "FAIL":
            fail[0] = int(parts[2])
        else:
            offs.append(int(parts[1]))
    return {fn: (offs, fail[0]) for fn, (offs, fail) in out.items()}


def objdumped(path):
    """{function: {instruction offset: mnemonic}} from objdump, and the names seen twice."""
    insns, twice = objdump_listing(path)
    out = {}
    for (fn, off), mnemonic in insns.items():
        out.setdefault(fn, {})[off] = mnemonic
    return out, twice


def compare(path):
    """(functions compared, [disagreements]): objdump's instructions inside each function's
    decoded extent are exactly the decoder's."""
    ours, (theirs, twice) = decoded(path), objdumped(path)
    bad, n = [], 0
    for fn, (offs, fail) in ours.items():
        if fn in twice or fn not in theirs:
            continue
        n += 1
        end = offs[-1] + 1 if offs else 0
        want = sorted(o for o in theirs[fn] if o < end)
        if offs != want:
            diff = sorted(set(offs) ^ set(want))
            bad.append(f"{os.path.basename(path)}:{fn}: first disagreement at +{diff[0]:#x}")
        if fail is not None and theirs[fn].get(fail) != "(bad)":
            bad.append(f"{os.path.basename(path)}:{fn}: decoder stops at +{fail:#x}, objdump has "
                       f"{theirs[fn].get(fail)}")
    return n, bad


def test_fixtures_split_like_objdump():
    kos = [os.path.join(dp, f) for dp, _, fs in os.walk(FIX) for f in fs if f.endswith(".ko")]
    assert len(kos) >= 10
    total = 0
    for ko in kos:
        n, bad = compare(ko)
        assert bad == [], bad
        total += n
    assert total >= 40


def test_undecodable_bytes_stop_the_decoder():
    """kp_frame.S ends t_undecodable with 06 07 (push/pop %es: invalid in 64-bit mode)."""
    ours = decoded(os.path.join(FIX, "audit", "kp_frame.ko"))
    offs, fail = ours["t_undecodable"]
    assert fail == offs[-1] + 1          # right after the one-byte ret
    assert all(f is None for fn, (_, f) in ours.items() if fn != "t_undecodable")


@pytest.mark.e2e
def test_debian_72_modules_split_like_objdump(tmp_path):
    """Every 25th module of Debian's 7.2 tree, plus the x86 crypto ones (VEX/EVEX)."""
    dest, ver = fetched_line("7.2")
    root = os.path.join(dest, "root", "usr", "lib", "modules", ver, "kernel")
    kos = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(root) for f in fs if f.endswith(".ko.xz"))
    pick = kos[::25] + [k for k in kos if "/arch/x86/crypto/" in k]
    assert len(pick) > 150
    functions, bad = 0, []
    for k in pick:
        plain = tmp_path / os.path.basename(k)[:-3]
        with lzma.open(k) as src, open(plain, "wb") as dst:
            shutil.copyfileobj(src, dst)
        n, b = compare(str(plain))
        functions += n
        bad += b
        plain.unlink()
    assert bad == [], bad[:20]
    assert functions > 5000
