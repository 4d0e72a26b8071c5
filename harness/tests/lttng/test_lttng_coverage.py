"""How the coverage table tells an export, a tracepoint argument and a name lookup
apart, from objects built here; and the [lttng] table of a variant file."""

import subprocess

import pytest

from harness.prepare import variants
from harness.errors import HarnessError
from harness.lttng.rows import coverage, coverage_md


def _obj(tmp_path, name, source):
    (tmp_path / "ko").mkdir(exist_ok=True)
    c = tmp_path / f"{name}.c"
    c.write_text(source)
    subprocess.run(["gcc", "-c", "-O1", "-o", str(tmp_path / "ko" / f"{name}.ko"), str(c)],
                   check=True)


@pytest.fixture
def build_dir(tmp_path):
    _obj(tmp_path, "tracer", "extern int task_prio(void *);\n"
         "int f(void *p) { return task_prio(p); }\n"
         "const char *n = \"stack_trace_save_user\";\n")
    return tmp_path


def test_import_is_export_string_is_lookup(build_dir):
    how = coverage.how(build_dir, True, "2.13.9")
    assert how["task_prio"] == "export"
    assert how["stack_trace_save_user"].startswith("kprobe trick")
    assert how["global_wb_domain"] == "tracepoint argument"
    assert how["irq_to_desc"].startswith("not used")


def test_with_the_switch_a_lookup_is_not_available(build_dir):
    how = coverage.how(build_dir, False, "2.13.9")
    assert how["stack_trace_save_user"].startswith("not available")


def test_global_wb_domain_named_is_a_lookup(build_dir):
    _obj(build_dir, "wb", "const char *n = \"global_wb_domain\";\n")
    assert coverage.how(build_dir, True, "2.13.9")["global_wb_domain"].startswith("kprobe")


def test_feature_status_follows_the_rows(build_dir):
    from harness.model.results import Check
    good = [Check("lttng", "prio/nice0", {}, True)]
    bad = [Check("lttng", "prio/nice0", {}, False)]
    row = {c.key: c for c in coverage.rows(build_dir, True, good, (), "2.13.9")}["task_prio"]
    assert row.get("feature").startswith("works")
    row = {c.key: c for c in coverage.rows(build_dir, True, bad, (), "2.13.9")}["task_prio"]
    assert row.get("feature").startswith("wrong")


def test_an_unchecked_row_beside_agreeing_ones_leaves_the_feature_working(build_dir):
    """The writeback rows of every LTTng run: five agree, three derived values
    (writeback/derived/*) have no oracle. Before, "all agree" read the unchecked
    ones as failures: global_wb_domain said "wrong or missing" on every variant."""
    from harness.model.results import Check
    rows = [Check("lttng", "writeback/global_dirty_state", {}, True),
            Check("lttng", "writeback/derived/paused", {}, None)]
    got = {c.key: c for c in coverage.rows(build_dir, True, rows, (), "2.13.9")}
    assert got["global_wb_domain"].get("feature").startswith("works")
    bad = rows + [Check("lttng", "writeback/dirty_limit-at-stop", {}, False)]
    got = {c.key: c for c in coverage.rows(build_dir, True, bad, (), "2.13.9")}
    assert got["global_wb_domain"].get("feature").startswith("wrong")
    only = [Check("lttng", "writeback/derived/paused", {}, None)]
    got = {c.key: c for c in coverage.rows(build_dir, True, only, (), "2.13.9")}
    assert got["global_wb_domain"].get("feature") == "no evidence"
    lost = {c.key: c for c in coverage.rows(build_dir, True, rows, ("writeback",), "2.13.9")}
    assert lost["global_wb_domain"].get("feature") == coverage.LOST


def test_report_table_only_when_lttng_ran():
    assert coverage_md.coverage({"stock": {"values": []}}) == []
    rows = coverage_md.coverage({"stock": {"values": [
        {"kind": "lttng-coverage", "key": "task_prio",
         "sources": {"how": "export", "feature": "works"}}]}})
    assert rows[0]["variants"]["stock"]["how"] == "export"
    out = []
    coverage_md.markdown({"lttng_coverage": rows, "variants": {"stock": {}}}, out)
    assert "| name | LTTng feature | stock (LTTng 2.13.9) |" in out
    assert any(line.startswith("| `task_prio` |") and "export; works" in line for line in out)


def test_variant_lttng_table(tmp_path):
    text = (variants.BUILTIN_DIR / "exports.toml").read_text()
    assert "[lttng]" in text
    v = variants.parse(variants.BUILTIN_DIR / "exports.toml")
    assert (v.lttng_series, v.lttng_kallsyms, v.lttng_lost) == ("exports", False,
                                                                 ("statedump_irq",))
    f = tmp_path / "mine.toml"
    f.write_text(text.replace('lost = ["statedump_irq"]', 'lost = ["prio", "nonsense"]'))
    with pytest.raises(HarnessError) as e:
        variants.parse(f)
    assert "nonsense" in e.value.message


def test_the_prio_crash_finding_is_cited_when_lttng_ran():
    """report.json/md cite the shipped prio-context crash whenever a variant ran
    LTTng, with the boots' series checked for the fix; nothing without LTTng."""
    assert coverage_md.findings({"stock": {"values": []}}) == []
    variants_ = {"exports": {"lttng": {"series": "exports"}},
                 "stock": {"lttng": {"series": "stock"}},
                 "mine": {"lttng": {"error": "lttng", "wall_s": 1.0}}}
    (f,) = coverage_md.findings(variants_)
    assert f["rerun_in_this_run"] is False
    assert f["fix_in_booted_series"] == {"exports": {"series": "exports", "has_fix": True},
                                         "stock": {"series": "stock", "has_fix": True}}
    # a booted series without the fix is named as such
    (g,) = coverage_md.findings({"x": {"lttng": {"series": "shipped"}}})
    assert g["fix_in_booted_series"]["x"]["has_fix"] is False
    # a later release's boot is not counted as one without the fix: it is fixed upstream
    (h,) = coverage_md.findings({"s12": {"lttng": {"series": "2.13.18/stock", "version": "2.13.18"}},
                            "stock": {"lttng": {"series": "stock"}}})
    assert h["fix_in_booted_series"] == {"stock": {"series": "stock", "has_fix": True}}
    assert h["not_affected"] == {"s12": "2.13.18"}
    md = []
    coverage_md._findings_markdown({"lttng_findings": [h]}, md)
    assert "s12 (LTTng 2.13.18)" in md[2] and "v2.13.11" in md[2]
    out = []
    coverage_md.markdown({"lttng_coverage": [], "lttng_findings": [f], "variants": variants_}, out)
    assert out == []        # no coverage table, no LTTng section
    rows = coverage_md.coverage({"stock": {"values": [
        {"kind": "lttng-coverage", "key": "task_prio",
         "sources": {"how": "export", "feature": "works"}}]}})
    coverage_md.markdown({"lttng_coverage": rows, "lttng_findings": [f],
                     "variants": variants_}, out)
    text = "\n".join(out)
    assert "prio_record" in text and coverage_md.PRIO_CRASH_TEST in text
    assert "Not re-run by this run" in text and "oops=panic" in text


def test_the_prio_crash_finding_points_at_what_exists():
    """The test the finding cites exists, and the fix it names is what the shipped
    series lacks and the kallsyms and stock series carry."""
    from harness import paths
    from harness.lttng.supply import modbuild
    path, func = coverage_md.PRIO_CRASH_TEST.split("::")
    assert f"def {func}(" in (paths.REPO / path).read_text()
    names = {s: [p.name for p in modbuild.series(s)] for s in ("shipped", "kallsyms", "stock",
                                                            "exports")}
    assert coverage_md.PRIO_FIX not in names["shipped"]
    assert all(coverage_md.PRIO_FIX in names[s] for s in ("kallsyms", "stock", "exports"))


def test_a_name_a_release_no_longer_looks_up(tmp_path):
    """LTTng 2.13.18 neither imports nor names task_prio (inlined since v2.13.11): the
    table says so instead of "version-gated"; for 2.13.9 the same build is "not used"."""
    _obj(tmp_path, "tracer", "const char *n = \"stack_trace_save_user\";\n")
    assert coverage.how(tmp_path, True, "2.13.18")["task_prio"] == \
        "not looked up: inlined as p->prio - MAX_RT_PRIO since v2.13.11 (7f1fa63204f0)"
    assert coverage.how(tmp_path, True, "2.13.9")["task_prio"].startswith("not used")
    # an import still wins: a build that calls an export of it says so
    _obj(tmp_path, "prio", "extern int task_prio(void *);\n"
         "int f(void *p) { return task_prio(p); }\n")
    assert coverage.how(tmp_path, True, "2.13.18")["task_prio"] == "export"


def test_an_lttng_row_names_its_release_wherever_it_is_shown():
    """report.md's and report.html's row labels (report/rows.label) carry the LTTng
    release an LTTng row judged, beside a task's comm; other rows are unchanged."""
    from harness.report.jsonrows import label
    assert label({"key": "prio/nice0", "info": {"lttng_version": "2.13.18"}}) == \
        "prio/nice0 (LTTng 2.13.18)"
    assert label({"key": "prio/x", "info": {"comm": "ksym-nice", "lttng_version": "2.13.9"}}) \
        == "prio/x (ksym-nice, LTTng 2.13.9)"
    assert label({"key": "prio/x", "info": {"comm": "ksym-nice"}}) == "prio/x (ksym-nice)"
    assert label({"key": "k", "label": "L", "info": {}}) == "L"


def test_a_name_handed_over_through_a_variable_is_a_lookup_of_its_own(build_dir):
    # only stack_trace_save_user is in build_dir: its string must not count for
    # stack_trace_save (the strings are compared whole, not as prefixes)
    assert coverage.how(build_dir, True, "2.13.9")["stack_trace_save"].startswith("not used")
    _obj(build_dir, "cs", "extern unsigned long lookup(const char *);\n"
         "unsigned long g(void) { const char *func_name = \"stack_trace_save\";\n"
         "return lookup(func_name); }\n")
    assert coverage.how(build_dir, True, "2.13.9")["stack_trace_save"].startswith("kprobe")
    assert coverage.how(build_dir, False, "2.13.9")["stack_trace_save"].startswith(
        "not available")


def test_every_module_of_the_build_counts(build_dir):
    """The imports of all modules, read by one nm: an export only a later module
    imports (a probe's) is an export, not a lookup."""
    _obj(build_dir, "zz_probe", "extern unsigned long get_pfnblock_flags_mask(void *, "
         "unsigned long, unsigned long);\n"
         "unsigned long g(void *p) { return get_pfnblock_flags_mask(p, 0, 7); }\n")
    how = coverage.how(build_dir, True, "2.13.9")
    assert how["get_pfnblock_flags_mask"] == "export" and how["task_prio"] == "export"
    assert coverage._undefined([]) == set()


def test_the_v2_interfaces_replace_their_names(tmp_path):
    """A build that imports the v2 walks and static-call trampolines gets the names
    they replace through them, even where the kallsyms wrapper still carries the
    string (lttng-wrapper's irq_to_desc); without the imports the same strings
    are lookups. Kills: an INTERFACES entry dropped, an import ignored, strings
    checked before interfaces."""
    _obj(tmp_path, "wrapper", "const char *n = \"irq_to_desc\";\n")
    before = coverage.how(tmp_path, True, "2.13.9")
    assert before["irq_to_desc"].startswith("kprobe trick")
    assert before["block_class"].startswith("not used")
    _obj(tmp_path, "statedump", "extern int blk_walk_visible_disks(void *, void *);\n"
         "extern int irq_walk_actions(void *, void *);\n"
         "int f(void) { return blk_walk_visible_disks(0, 0) + irq_walk_actions(0, 0); }\n")
    _obj(tmp_path, "kvm", "extern void __SCT__kvm_x86_get_exit_info(void);\n"
         "void g(void) { __SCT__kvm_x86_get_exit_info(); }\n")
    how = coverage.how(tmp_path, True, "2.13.9")
    assert how["irq_to_desc"] == "export (irq_walk_actions())"
    assert how["block_class"] == how["disk_type"] == "export (blk_walk_visible_disks())"
    assert how["kvm_x86_ops"].startswith("export (static calls kvm_x86_get_exit_info")


def test_the_v2_series_computes_task_prio(tmp_path):
    """patches/lttng v2 computes task_prio in LTTng: the table says so for that series
    only; the same modules under another series are "not used" (version-gated)."""
    _obj(tmp_path, "tracer", "int x;\n")
    assert coverage.how(tmp_path, True, "2.13.9", "v2")["task_prio"].startswith(
        "not looked up: computed in LTTng")
    assert coverage.how(tmp_path, True, "2.13.9", "exports")["task_prio"].startswith(
        "not used")


def test_a_name_only_the_audit_found_gets_a_row_of_its_own(build_dir):
    """A name a module hands to a resolver that NAMES does not list (symcheck audit's
    by-name finding) is a row, a lookup, and "unknown to ksymlab"; the table misses
    no name the modules resolve. Kills: rows() built from NAMES alone."""
    how = coverage.how(build_dir, True, "2.13.9", resolved=["some_internal"])
    assert how["some_internal"].startswith("kprobe trick")
    rows = {c.key: c for c in coverage.rows(build_dir, True, [], (), "2.13.9", resolved=["some_internal"])}
    assert rows["some_internal"].info["feature"].startswith("unknown to ksymlab")
    assert "some_internal" not in {c.key for c in coverage.rows(build_dir, True, [], (), "2.13.9")}


def test_a_failing_nm_is_the_steps_error_not_an_empty_table(build_dir):
    # a .ko nm cannot read: nm -u exits 1, and its output lacks this module's imports
    (build_dir / "ko" / "truncated.ko").write_bytes(b"not an object\n")
    with pytest.raises(HarnessError) as e:
        coverage.how(build_dir, True, "2.13.9")
    assert e.value.step == "lttng" and e.value.exit_status == 23
    assert e.value.message.startswith("nm -u exited 1: ")
    assert "truncated.ko" in e.value.message and "format not recognized" in e.value.message


def test_a_forgotten_version_is_an_error_not_2_13_9(build_dir):
    with pytest.raises(TypeError):
        coverage.how(build_dir, True)
    with pytest.raises(TypeError):
        coverage.rows(build_dir, True, [], ())
