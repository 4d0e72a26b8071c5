"""symcheck audit (and check) on module sets: synthetic fixtures compiled like kernel code from
tests/fixtures/audit/*.c, whose "expect:" comment lines are the oracle (what each module resolves
by name, which of its functions resolve names for others, its kprobe instrumentation), binutils'
objdump for where the findings point, and a real LTTng build (the harness builds the stock
variant's, or KSYMLAB_LTTNG_MODULES names one)."""
import json
import os
import re
import shutil

import pytest

from symcheck_testlib import FIX, HERE, symcheck, elf_sections, objdump_listing, read_symvers_text

SRC = os.path.join(HERE, "fixtures", "audit")
KOS = os.path.join(FIX, "audit")
NAMES = ["chain", "caller", "resolver", "kp_instr", "kp_trick", "kp_frame"]
NAME_KINDS = ("by-name", "kprobe-trick")


def ko(name):
    return os.path.join(KOS, name + ".ko")


def expectations(name):
    """{'findings': {(kind, what, via)}, 'resolvers': set, 'instrumentation': set, 'existence': set}
    from the source (.c, or .S for hand-written code)."""
    out = {"findings": set(), "resolvers": set(), "instrumentation": set(), "existence": set()}
    src = os.path.join(SRC, name + ".c")
    with open(src if os.path.exists(src) else src[:-2] + ".S") as f:
        for line in f:
            m = re.match(r"\s*\*?\s*expect: (\S+) (.*?)\s*$", line)
            if not m:
                continue
            kind, rest = m.groups()
            if kind in NAME_KINDS:
                what, via = (rest.split(" ", 1) + [None])[:2] if not rest.startswith("(") else \
                    (rest[:rest.index(")") + 1], rest[rest.index(")") + 2:] or None)
                out["findings"].add((kind, what, via))
            elif kind == "resolver":
                out["resolvers"].add(rest)
            elif kind == "instrumentation":
                out["instrumentation"].add(rest)
            elif kind == "existence":
                out["existence"].add(rest)
    return out


def audit_json(*paths, rc=1):
    r = symcheck("--json", "audit", *paths)
    assert r.returncode == rc, (r.returncode, r.stderr)
    assert r.stderr == ""
    return json.loads(r.stdout)


def got(mod):
    """What symcheck says, in the shape of expectations(); via without the '(module)' suffix."""
    return {
        "findings": {(f["kind"], f["what"], f["via"].split(" (")[0] if not f["via"].startswith("(") else f["via"])
                     for f in mod["findings"] if f["kind"] in NAME_KINDS},
        "resolvers": set(mod["resolvers"]),
        "instrumentation": {n["symbol_name"] for n in mod["instrumentation"]},
        "existence": {n["symbol_name"] for n in mod["existence_checks"]},
    }


def test_fixture_set_matches_sources():
    d = audit_json(*[ko(n) for n in NAMES])
    assert [m["name"] for m in d["modules"]] == NAMES
    for m in d["modules"]:
        assert got(m) == expectations(m["name"]), m["name"]
        # the former name-level kinds stay, for the kallsyms API only
        assert {f["what"] for f in m["findings"] if f["kind"] not in NAME_KINDS} <= {"kallsyms_lookup_name"}
    flagged = [n for n in NAMES if expectations(n)["findings"]]
    assert d["flagged"] == flagged
    assert d["findings_total"] == sum(len(m["findings"]) for m in d["modules"])


@pytest.mark.parametrize("order", [NAMES[::-1], ["resolver", "kp_trick", "chain", "kp_instr", "caller"]])
def test_order_does_not_matter(order):
    d = audit_json(*[ko(n) for n in order])
    for m in d["modules"]:
        assert got(m) == expectations(m["name"]), (order, m["name"])


def test_tree_is_the_same_set(tmp_path):
    tree = tmp_path / "lib" / "modules"
    for n in NAMES:
        (tree / n).mkdir(parents=True)
        shutil.copy(ko(n), tree / n / (n + ".ko"))
    d = audit_json("--tree", str(tree))
    assert sorted(m["name"] for m in d["modules"]) == sorted(NAMES)
    for m in d["modules"]:
        assert got(m) == expectations(m["name"])
    r = symcheck("audit", "--tree", str(tree))
    assert r.returncode == 1
    assert r.stdout.rstrip().endswith("6 module(s) audited, 5 flagged: caller, chain, kp_frame, kp_trick, resolver")


def test_resolver_is_only_known_from_the_set():
    """Alone, caller.ko calls an unknown function fake_lookup_name: nothing follows from it
    (single-module JSON keeps the former shape: one module object)."""
    d = audit_json(ko("caller"), rc=0)
    assert d["name"] == "caller" and d["flagged"] is False and d["findings"] == []
    d = audit_json(ko("caller"), ko("resolver"))
    assert ("by-name", "task_prio", "fake_lookup_name") in got(d["modules"][0])["findings"]


def test_disabled_wrapper_resolves_nothing():
    """With the exported wrapper compiled down to "not found" (stub.ko), the same literal calls
    in caller.ko and chain.ko are no by-name resolution."""
    d = audit_json(ko("chain"), ko("caller"), ko("stub"), rc=0)
    assert d["flagged"] == [] and all(m["resolvers"] == [] for m in d["modules"])


def test_instrumentation_is_not_a_finding():
    d = audit_json(ko("kp_instr"), rc=0)
    assert d["flagged"] is False and d["findings"] == []
    assert {(n["function"], n["symbol_name"]) for n in d["instrumentation"]} == \
        {("probe_user", "(not a literal)"), ("probe_fixed", "do_sys_open")}
    r = symcheck("audit", ko("kp_instr"))
    assert r.returncode == 0
    assert "kprobe instrumentation (not a finding): probe_fixed on do_sys_open" in r.stdout


def test_existence_check_is_not_a_finding():
    """kp_frame.S: a kprobe registered and unregistered whose kp.addr is never read (only its
    neighbours nmissed and symbol_name are: the state where an off-by-one-field reader errs) is
    an existence check; every other way of reaching .addr, or of losing track of it, stays a trick."""
    d = audit_json(ko("kp_frame"))
    assert {(n["function"], n["symbol_name"]) for n in d["existence_checks"]} == \
        {("t_neighbours", "t_neighbours"), ("t_leave", "t_leave")}
    assert d["instrumentation"] == []
    r = symcheck("audit", ko("kp_frame"))
    assert "kprobe existence check (not a finding): t_neighbours on t_neighbours at t_neighbours+0x26" in r.stdout


def test_findings_point_at_calls():
    d = audit_json(*[ko(n) for n in NAMES])
    n = 0
    for m in d["modules"]:
        insns, _ = objdump_listing(ko(m["name"]))
        for f in m["findings"]:
            if f["kind"] in NAME_KINDS:
                fn, off = f["where"].rsplit("+", 1)
                assert insns[(fn, int(off, 16))] in ("call", "jmp"), f
                n += 1
    assert n == sum(len(expectations(name)["findings"]) for name in NAMES) == 21


def test_text_output():
    r = symcheck("audit", ko("chain"), ko("caller"), ko("resolver"))
    assert r.returncode == 1 and r.stderr == ""
    assert re.search(r"by-name +disk_type +caller_lookup \(caller\) +init_module\+0x", r.stdout)
    assert "resolves names for others: caller_local_lookup caller_lookup" in r.stdout
    assert r.stdout.rstrip().endswith("3 module(s) audited, 3 flagged: chain, caller, resolver")


@pytest.mark.parametrize("args", [["audit"], ["audit", "--tree"], ["audit", "--frob", "x.ko"],
                                  ["audit", "--tree", "/", "x.ko"]])
def test_usage_errors(args):
    r = symcheck(*args)
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("symcheck: ") and len(r.stderr.splitlines()) == 1


def test_bad_module_in_set(tmp_path):
    bad = tmp_path / "bad.ko"
    bad.write_bytes(open(ko("caller"), "rb").read()[:300])
    r = symcheck("audit", ko("resolver"), str(bad))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("symcheck: %s: " % bad)


# ------------------------------------------------------------------ check on the set

def fake_build(tmp_path):
    b = tmp_path / "build"
    b.mkdir()
    rows = [(0x1, "_printk"), (0x2, "register_kprobe"), (0x3, "unregister_kprobe"), (0x4, "memset")]
    (b / "Module.symvers").write_text("".join("0x%08x\t%s\tvmlinux\tEXPORT_SYMBOL\t\n" % r for r in rows))
    return str(b)


def test_check_resolves_exports_of_the_set(tmp_path):
    b = fake_build(tmp_path)
    r = symcheck("--json", "check", ko("chain"), ko("caller"), ko("resolver"), b)
    assert r.returncode == 0, r.stdout
    d = json.loads(r.stdout)
    assert d["findings_total"] == 0
    syms = {(m["name"], s["name"]): s for m in d["modules"] for s in m["symbols"]}
    # oracle: the CRCs and class written in the fixtures' FAKE_EXPORT_GPL lines
    s = syms[("caller", "fake_lookup_name")]
    assert (s["status"], s["build_crc"], s["class"]) == ("ok", "0x12345678", "EXPORT_SYMBOL_GPL")
    assert s["provider"] == ko("resolver")[:-3]
    s = syms[("chain", "caller_lookup")]
    assert (s["status"], s["build_crc"], s["provider"]) == ("ok", "0x2468ace0", ko("caller")[:-3])


def test_check_without_the_provider(tmp_path):
    b = fake_build(tmp_path)
    d = json.loads(symcheck("--json", "check", ko("caller"), b).stdout)
    assert [(f["kind"], f["symbol"]) for f in d["modules"][0]["findings"]] == [("unknown-symbol", "fake_lookup_name")]


def test_check_set_export_namespace(tmp_path):
    """chain.ko exports chain_ns_sym in namespace FAKE_CHAIN_NS (fixture source); kp_instr.ko uses
    it without MODULE_IMPORT_NS."""
    b = fake_build(tmp_path)
    d = json.loads(symcheck("--json", "check", ko("kp_instr"), ko("chain"), b).stdout)
    m = d["modules"][0]
    s = {s["name"]: s for s in m["symbols"]}["chain_ns_sym"]
    assert (s["namespace"], s["build_crc"], s["module_crc"]) == ("FAKE_CHAIN_NS", "0x0c0ffee0", "0x0c0ffee0")
    assert [(f["kind"], f["symbol"]) for f in m["findings"]] == [("namespace-not-imported", "chain_ns_sym")]


def test_check_doctored_provider_crc(tmp_path):
    b = fake_build(tmp_path)
    raw = open(ko("resolver"), "rb").read()
    crc = (0x12345678).to_bytes(4, "little")
    assert raw.count(crc) == 1
    doctored = tmp_path / "resolver.ko"
    doctored.write_bytes(raw.replace(crc, (0x12345679).to_bytes(4, "little")))
    r = symcheck("--json", "check", ko("caller"), str(doctored), b)
    assert r.returncode == 1
    d = json.loads(r.stdout)
    assert [(f["kind"], f["symbol"]) for f in d["modules"][0]["findings"]] == [("crc-mismatch", "fake_lookup_name")]


# ------------------------------------------------------------------ real LTTng

# what LTTng 2.13.9 resolves through its wrapper (issue 13; reference.md), plus stack_trace_save
# (its kernel callstack context) and the wrapper's own kprobe target
LTTNG_NAMES = {"task_prio", "stack_trace_save_user", "save_stack_trace_user", "get_pfnblock_flags_mask",
               "get_pageblock_flags_mask", "global_wb_domain", "global_dirty_limit", "block_class", "disk_type",
               "irq_to_desc", "splice_to_pipe", "__vmalloc_node_range", "tracepoint_module_notify",
               "uprobe_register", "uprobe_unregister", "kvm_x86_ops", "vmalloc_sync_mappings",
               "vmalloc_sync_all", "stack_trace_save", "kallsyms_lookup_name"}


def rodata_identifiers(path):
    """NUL-terminated strings of the .rodata.str* sections (read here, not by symcheck)."""
    data = open(path, "rb").read()
    out = set()
    for name, (off, size, _) in elf_sections(path).items():
        if name.startswith(".rodata.str"):
            out |= {s.decode(errors="replace") for s in data[off:off + size].split(b"\0")}
    return out


@pytest.fixture(scope="module")
def lttng_build():
    """(modules dir, its .ko files, kernel tree) of a real LTTng 2.13.9 build with its kallsyms wrapper.

    KSYMLAB_LTTNG_MODULES (and KSYMLAB_LTTNG_KERNEL) name one; otherwise the harness builds, or
    takes from its cache, the stock variant's (series stock: as Debian ships it plus the fixes)."""
    mods = os.environ.get("KSYMLAB_LTTNG_MODULES")
    if mods:
        tree = os.environ.get("KSYMLAB_LTTNG_KERNEL")
        assert tree, "KSYMLAB_LTTNG_MODULES needs KSYMLAB_LTTNG_KERNEL, the tree it was built against"
    else:
        from harness.prepare import kernel
        from harness.lttng.supply import modbuild
        from harness.options import RunOptions
        opts = RunOptions.from_env()
        (v,) = opts.select(["stock"])
        t = kernel.prepare(v, opts.cache)
        mods = str(modbuild.build(t, v.lttng_series, opts.cache, kallsyms=v.lttng_kallsyms) / "ko")
        tree = str(t.src)
    kos = sorted(os.path.join(dp, f) for dp, _, fs in os.walk(mods) for f in fs if f.endswith(".ko"))
    assert kos, "no .ko under %s" % mods
    return mods, kos, tree


@pytest.mark.e2e
def test_lttng_audit(lttng_build):
    lttng, mods, _ = lttng_build
    d = audit_json("--tree", lttng)
    assert len(d["modules"]) == len(mods)
    for m in d["modules"]:
        names = {f["what"] for f in m["findings"] if f["kind"] in NAME_KINDS}
        # oracle: the resolved names are the LTTng names present as literals in the module
        assert names == rodata_identifiers(m["file"]) & LTTNG_NAMES, m["name"]
    by = {m["name"]: m for m in d["modules"]}
    assert by["lttng_wrapper"]["resolvers"] == ["wrapper_kallsyms_lookup_name"]
    assert {f["what"] for f in by["lttng_tracer"]["findings"]} >= {"task_prio", "stack_trace_save_user"}
    for k in ("lttng_kprobes", "lttng_kretprobes"):
        assert by[k]["findings"] == [] and len(by[k]["instrumentation"]) == 1, k


@pytest.mark.e2e
def test_lttng_check_against_tree(lttng_build):
    lttng, _, tree = lttng_build
    assert os.path.exists(os.path.join(tree, "Module.symvers")), tree
    r = symcheck("--json", "check", "--tree", lttng, tree)
    assert r.returncode == 0, r.stdout[-2000:]
    d = json.loads(r.stdout)
    assert d["findings_total"] == 0
    own = os.path.join(lttng, "Module.symvers")
    assert os.path.exists(own), own
    # oracle: LTTng's own modpost output for the symbols its modules export to each other
    sv = read_symvers_text(own)
    inter = [(s, m) for m in d["modules"] for s in m["symbols"] if s["provider"] != "vmlinux"]
    assert inter
    for s, m in inter:
        crc, module, typ, _ = sv[s["name"]]
        assert (int(s["build_crc"], 16), s["class"]) == (crc, typ), (m["name"], s["name"])
        assert s["provider"].endswith(module.rsplit("/", 1)[-1])
