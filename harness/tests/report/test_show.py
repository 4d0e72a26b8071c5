"""`python3 -m harness show`: the summary and every disagreement of a run, or exit 2."""

import json
import subprocess
import sys

import pytest

from harness import paths
from harness.report import assemble, html, show
from report_fixture import make_report


def harness_show(*args, runs):
    return subprocess.run([sys.executable, "-m", "harness", "show", *args], cwd=paths.REPO,
                          capture_output=True, text=True, env={"KSYMLAB_RUNS": str(runs),
                                                               "PATH": "/usr/bin:/bin"})


@pytest.fixture
def runs(tmp_path):
    """runs/<id> written the way a run writes it, with `latest` pointing to it."""
    rundir = tmp_path / "20240101-120000"
    rundir.mkdir()
    rep = make_report()
    (rundir / "report.json").write_text(json.dumps(rep, indent=2))
    (rundir / "report.md").write_text(assemble.markdown(rep))
    (rundir / "report.ktap").write_text(assemble.ktap(rep))
    (rundir / "report.html").write_text(html.render(rep))
    for v in rep["variants"]:
        (rundir / v).mkdir()
        for log in ("console.log", "gdb.log"):
            (rundir / v / log).write_text("x\n")
    (tmp_path / "latest").symlink_to(rundir.name)
    return tmp_path


def test_show_prints_summary_every_disagreement_and_the_files(runs):
    p = harness_show(runs=runs)
    assert p.returncode == 0 and p.stderr == ""
    out = p.stdout
    assert out.startswith("run 20240101-120000: verdict fail")
    assert "stock        kprobe        6/6       164        1         2  fail" in out
    assert "3 disagreement(s):" in out
    assert ("  kallsyms: pageblock DMA32 pfn 0x3000: module=1 memory=1 gdb_bitmap=0  "
            "(module 1 != gdb_bitmap 0)") in out
    assert "  stock: prio pid 103 (sleep): module=21 memory=21 gdb=21 scenario=25" in out
    assert "  across variants: scenario task priorities (in scenario order) differ" in out
    latest = runs / "latest"
    for name in ("report.md", "report.html", "report.json", "report.ktap"):
        assert f"  {latest / name}\n" in out
    assert f"  {latest / 'bpf13'}/: console.log, gdb.log" in out


def test_show_names_a_run_by_id_or_directory(runs):
    by_id = harness_show("20240101-120000", runs=runs)
    by_dir = harness_show(str(runs / "20240101-120000"), runs=runs)
    assert by_id.returncode == by_dir.returncode == 0
    assert by_id.stdout == by_dir.stdout and "20240101-120000/report.md" in by_id.stdout


def test_show_without_disagreements(runs, capsys):
    rep = json.loads((runs / "latest" / "report.json").read_text())
    for v in rep["variants"].values():
        for c in v["values"]:
            if c["agree"] is False:
                c["agree"] = True
    rep["across"] = []
    (runs / "latest" / "report.json").write_text(json.dumps(rep))
    assert show.main(str(runs / "latest")) == 0
    assert "No disagreement." in capsys.readouterr().out


def test_show_an_error_step(runs, capsys):
    rep = json.loads((runs / "latest" / "report.json").read_text())
    rep["variants"]["exports"]["error"] = {"step": "panic", "verdict": "panic",
                                           "message": "Kernel panic - not syncing: x",
                                           "exit_status": 31, "log": "/r/exports/console.log"}
    (runs / "latest" / "report.json").write_text(json.dumps(rep))
    assert show.main(str(runs / "latest")) == 0
    out = capsys.readouterr().out
    assert ("  exports: step panic failed (exit 31): Kernel panic - not syncing: x  "
            "[log: /r/exports/console.log]") in out
    assert "exports      exports       6/6       165        0         2  panic" in out


def test_open_prints_only_the_html_path(runs):
    p = harness_show("--open", runs=runs)
    assert p.returncode == 0
    assert p.stdout == f"{(runs / '20240101-120000' / 'report.html').resolve()}\n"


@pytest.mark.parametrize("case", ["missing", "no-json", "corrupt", "not-a-report", "no-latest",
                                  "open-no-html"])
def test_bad_run_is_one_line_and_exit_2(tmp_path, runs, case):
    args = ["nonexistent-run"]
    if case == "no-json":
        (runs / "empty").mkdir()
        args = ["empty"]
    elif case == "corrupt":
        (runs / "latest" / "report.json").write_text('{"variants": {"exports": ')
        args = []
    elif case == "not-a-report":
        (runs / "latest" / "report.json").write_text("[1, 2]")
        args = []
    elif case == "no-latest":
        (runs / "latest").unlink()
        args = []
    elif case == "open-no-html":
        (runs / "latest" / "report.html").unlink()
        args = ["--open"]
    p = harness_show(*args, runs=runs)
    assert p.returncode == 2, p
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("ksymlab: show: "), p.stderr
