"""bench.py's table, ratios and JSON from fake measurements (no build, no guest)."""

import json

from harness import paths
from harness.prepare import variants
from harness.tools import bench


def cold(variants, total):
    return {"cache": "/var/tmp/x", "seconds": total, "variants": variants}


ALONE = cold([{"variant": "exports", "seconds": 400.0, "derived_from": None,
               "steps": {"extract": 20.0, "patch": 1.0, "configure": 5.0, "build": 374.0}}], 400.0)
ALL = cold([{"variant": "stock", "seconds": 390.0, "derived_from": None,
             "steps": {"extract": 20.0, "patch": 0.0, "configure": 5.0, "build": 365.0}},
            {"variant": "kallsyms", "seconds": 40.0, "derived_from": "stock",
             "steps": {"copy": 30.0, "patch": 0.1, "configure": 0.0, "build": 9.9}},
            {"variant": "exports", "seconds": 150.0, "derived_from": "stock",
             "steps": {"copy": 30.0, "patch": 0.5, "configure": 0.0, "build": 119.5},
             "build_cpu": 230.4}], 580.0)


def test_cold_rows_list_every_step_and_derivation():
    rows = bench.cold_rows("cold all variants", ALL)
    steps = [(r["variant"], r["step"]) for r in rows]
    assert ("stock", "extract") in steps and ("kallsyms", "extract") not in steps
    assert ("kallsyms", "copy") in steps and ("stock", "copy") not in steps
    copy = next(r for r in rows if r["variant"] == "exports" and r["step"] == "copy")
    assert copy["seconds"] == 30.0 and copy["note"] == "from stock tree"
    build = next(r for r in rows if r["variant"] == "exports" and r["step"] == "build")
    assert build["seconds"] == 119.5 and build["note"] == "cpu 230 s"
    assert rows[-1] == {"phase": "cold all variants", "step": "total", "variant": "all",
                        "seconds": 580.0, "note": ""}
    assert bench.cold_rows("cold one variant", ALONE)[-1]["variant"] == "exports"


def test_ratios_and_targets():
    r = bench.ratios(ALONE, ALL, 25.04)
    assert r[0]["value"] == 1.45 and r[0]["ok"] is True and "(exports)" in r[0]["name"]
    assert r[1] == {"name": "warm make run seconds", "value": 25.0, "target": "<= 30",
                    "ok": True}
    r = bench.ratios(ALONE, cold(ALL["variants"], 620.0), 31.0)
    assert r[0]["value"] == 1.55 and r[0]["ok"] is False and r[1]["ok"] is False


def test_skipped_cold_is_said_not_measured():
    r = bench.ratios(None, None, 20.0)
    assert r[0]["value"] is None and r[0]["note"] == "skipped (--skip-cold)"
    text = bench.format_table([bench._row("cold", "skipped", "", None, "--skip-cold")], r)
    assert "skipped (--skip-cold)" in text and "1.5" in text
    assert "warm make run seconds: 20 (target <= 30) met" in text


def test_warm_rows_take_run_timings_and_mark_missing():
    report = {"timings": {"kernel": {"exports": 0.1, "stock": 0.2},
                          "boot": {"exports": 9.0}, "report": 0.4,
                          "guests": 14.0, "guest_workers": 2},
              "variants": {"exports": {},
                           "stock": {"timings": {"boot": 7.5, "initramfs": 1.25,
                                                 "compare": 0.5}}}}
    rows = bench.warm_rows(report, 27.3, 0)
    get = {(r["step"], r["variant"]): r for r in rows}
    assert get[("kernel", "stock")]["seconds"] == 0.2
    assert get[("boot", "exports")]["seconds"] == 9.0          # run-level timings.boot
    assert get[("boot", "stock")]["seconds"] == 7.5            # the variant's own timing
    assert get[("initramfs", "stock")]["seconds"] == 1.2       # per-variant timings
    assert get[("compare", "stock")]["seconds"] == 0.5
    assert ("compare", "exports") not in get                   # optional, absent
    assert get[("guests (all)", "")] == {"phase": "warm make run", "step": "guests (all)",
                                         "variant": "", "seconds": 14.0,
                                         "note": "concurrent, 2 workers"}
    assert get[("module", "exports")] == {"phase": "warm make run", "step": "module",
                                          "variant": "exports", "seconds": None,
                                          "note": "not in report.json"}
    assert ("gdb verification", "stock") in get
    assert get[("report", "")]["seconds"] == 0.4
    assert get[("total", "")]["seconds"] == 27.3
    assert bench.warm_rows(None, 5.0, 2)[-1]["note"] == "make run exit status 2, no report.json"


def test_table_and_json():
    rows = bench.cold_rows("cold one variant", ALONE) + bench.cold_rows("cold all variants", ALL)
    ratio_rows = bench.ratios(ALONE, ALL, 40.0)
    text = bench.format_table(rows, ratio_rows)
    lines = text.splitlines()
    assert lines[0].split() == ["phase", "step", "variant", "seconds", "note"]
    assert len(lines) == 1 + len(rows) + 2
    assert "cold all variants / one variant alone (exports): 1.45 (target <= 1.5) met" in text
    assert "warm make run seconds: 40 (target <= 30) NOT met" in text
    icount = bench.icount_rows([{"exports": {"load": 200.0, "direct": 10.0}},
                                {"exports": {"load": 210.0}}], ["exports"], variants.builtin())
    assert icount == [{"variant": "exports", "mode": "exports", "figure": "load",
                       "run1": 200.0, "run2": 210.0, "diff_percent": 5.0}]
    assert "finit_module (ns)" in bench.format_icount(icount)
    data = json.loads(json.dumps(bench.bench_json(rows, ratio_rows, icount, False)))
    assert data["steps"] == rows and data["ratios"] == ratio_rows and data["rows"] == icount
    assert data["cold_skipped"] is False and data["cold_alone_variant"] == "exports"


def test_figures_median_per_call():
    entry = {"bench": [{"kind": "direct", "ns": 1000, "calls": 100},
                       {"kind": "direct", "ns": 3000, "calls": 100},
                       {"kind": "direct", "ns": 2000, "calls": 100}]}
    assert bench.figures(entry) == {"direct": 20.0}


def fake_runs(tmp_path, monkeypatch):
    """bench's runs faked: no build, no guest; returns the warm run's directory."""
    runs = []

    def fake_run(names, opts):
        d = tmp_path / f"icount{len(runs)}"
        d.mkdir()
        load = 200.0 + len(runs) * 2
        (d / "report.json").write_text(json.dumps({"variants": {n: {"bench": [
            {"kind": "load", "ns": load, "calls": 1}]} for n in names}}))
        runs.append(d)
        return 1, d, None

    warm = tmp_path / "warm"
    warm.mkdir()
    (warm / "report.json").write_text(json.dumps({"timings": {}, "variants": {}}))

    def no_cold(*a):
        raise AssertionError("--skip-cold must not build")

    monkeypatch.setattr(bench, "run", fake_run)
    monkeypatch.setattr(bench, "cold_build", no_cold)
    monkeypatch.setattr(bench, "warm_make_run", lambda root, names: (12.5, 0, warm))
    return warm


def test_main_knows_the_users_variant_files(tmp_path, monkeypatch, capsys):
    """A variant in $KSYMLAB_VARIANTS is benchmarked like a built-in one."""
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "myprobe.toml").write_text(
        (paths.REPO / "variants" / "stock.toml").read_text().replace("default = true",
                                                                     "default = false"))
    monkeypatch.setenv("KSYMLAB_VARIANTS", str(mine))
    warm = fake_runs(tmp_path, monkeypatch)
    assert bench.main(["--skip-cold", "--variants", "myprobe", "--runs-dir",
                       str(tmp_path)]) == 0
    data = json.loads((warm / "bench.json").read_text())
    assert [(r["variant"], r["mode"]) for r in data["rows"]] == [("myprobe", "kprobe")]


def test_main_bad_variant_file_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "broken.toml").write_text("not = [toml\n")
    monkeypatch.setenv("KSYMLAB_VARIANTS", str(mine))
    fake_runs(tmp_path, monkeypatch)
    assert bench.main(["--skip-cold", "--runs-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err.startswith(f"ksymlab: usage: {mine / 'broken.toml'}:1:")


def test_main_skip_cold_prints_one_table_and_writes_json(tmp_path, monkeypatch, capsys):
    """main() wiring with the runs faked: no build, no guest."""
    runs = []

    def fake_run(names, runs_root=None, bench=0):
        d = tmp_path / f"icount{len(runs)}"
        d.mkdir()
        load = 200.0 + len(runs) * 2
        (d / "report.json").write_text(json.dumps({"variants": {n: {"bench": [
            {"kind": "load", "ns": load, "calls": 1}]} for n in names}}))
        runs.append(d)
        return 1, d, None

    warm = tmp_path / "warm"
    warm.mkdir()
    (warm / "report.json").write_text(json.dumps({
        "timings": {"kernel": {"stock": 0.1}}, "variants": {"stock": {"timings": {"boot": 6.0}}}}))

    def no_cold(*a):
        raise AssertionError("--skip-cold must not build")

    monkeypatch.setattr(bench, "run", fake_run)
    monkeypatch.setattr(bench, "cold_build", no_cold)
    monkeypatch.setattr(bench, "warm_make_run", lambda root, names: (12.5, 0, warm))
    assert bench.main(["--skip-cold", "--variants", "stock", "--runs-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "cold builds skipped (--skip-cold)" in out
    assert "warm make run seconds: 12.5 (target <= 30) met" in out
    assert out.count("phase") == 1                                  # one step table
    data = json.loads((warm / "bench.json").read_text())
    assert data["cold_skipped"] is True and data["ratios"][0]["value"] is None
    assert data["rows"] == [{"variant": "stock", "mode": "kprobe", "figure": "load",
                             "run1": 200.0, "run2": 202.0, "diff_percent": 1.0}]
    assert {"phase": "warm make run", "step": "boot", "variant": "stock", "seconds": 6.0,
            "note": ""} in data["steps"]
