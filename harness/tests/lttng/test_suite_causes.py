"""harness/lttng/suite/causes.py and the rule on it: every point of the suite that
does not pass carries a cause, and a stock variant that ran the whole suite passes
at least 98 % of it (compare.coverage_reasons; report.md groups the points by cause)."""

import pytest

from harness.errors import HarnessError
from harness.lttng.suite import causes, compare, suite_md

TOML = '''
[tcg-slow]
kind = "TCG limit"
text = "the script needs more than its timeout under TCG"
ref = "docs/lttng.md"
scripts = ["regression/tools/clear/test_kernel"]

[compat-612]
kind = "upstream bug"
text = "only on 6.12"
ref = "lttng-modules 1ab4126a90a1"
scripts = ["regression/kernel/test_syscall"]
points = [3]
lines = ["6.12"]
'''


def _entry(results, not_selected=()):
    """A suite entry as runner.py writes it: {script: [result of point 1, 2, ...]}."""
    tests = [{"name": f"{script}:{i} p{i}", "result": r, "reason": ""}
             for script, rs in results.items() for i, r in enumerate(rs, 1)]
    return {"tests": tests, "not_selected": list(not_selected)}


@pytest.fixture
def found(tmp_path):
    f = tmp_path / "causes.toml"
    f.write_text(TOML)
    return causes.load(f)


def test_the_committed_file_loads():
    assert all(isinstance(c.kind, causes.Kind) for c in causes.load())


def test_a_point_gets_the_first_cause_that_covers_its_script_number_and_line(found):
    e = _entry({"regression/tools/clear/test_kernel": ["pass", "fail", "skip"],
                "regression/kernel/test_syscall": ["pass", "pass", "fail", "fail"]})
    on612 = causes.annotate(e, "6.12", found)
    assert [t.get("cause", "-") for t in on612["tests"]] == [
        "-", "tcg-slow", "tcg-slow", "-", "-", "compat-612", None]
    assert on612["coverage"] == {"planned": 7, "passed": 3, "no_cause": 1, "rate": 0.4286}
    assert set(on612["causes"]) == {"tcg-slow", "compat-612"}
    assert on612["causes"]["compat-612"]["kind"] == "upstream bug"
    # the 6.12-only cause does not cover the same point on 6.1
    on61 = causes.annotate(e, "6.1", found)
    assert [t.get("cause", "-") for t in on61["tests"]][5:] == [None, None]
    assert "tests" in e and "cause" not in e["tests"][1], "the input entry is not changed"


def test_a_reason_regex_narrows_a_cause_to_the_points_it_explains(tmp_path):
    f = tmp_path / "causes.toml"
    f.write_text('[cut]\nkind = "TCG limit"\ntext = "t"\nref = "r"\n'
                 'scripts = ["regression/tools/x"]\nreason = "^TAP stream cut short: timeout"\n')
    e = {"tests": [{"name": "regression/tools/x:1 a", "result": "fail", "reason": "got 3"},
                   {"name": "regression/tools/x:2 (not run)", "result": "fail",
                    "reason": "TAP stream cut short: timeout after 300 s"}]}
    got = causes.annotate(e, "6.1", causes.load(f))
    assert [t["cause"] for t in got["tests"]] == [None, "cut"]


@pytest.mark.parametrize("text,why", [
    ('[x]\nkind = "TCG limit"\ntext = "t"\nref = "r"\nscripts = []\nreason = "("\n',
     "reason: missing )"),
    ('[x]\nkind = "flaky"\ntext = "t"\nref = "r"\nscripts = []\n', "kind 'flaky' is not one of"),
    ('[x]\nkind = "TCG limit"\ntext = "t"\nscripts = []\n', "ref, scripts required"),
    ('[x]\nkind = "TCG limit"\ntext = "t"\nref = "r"\nscripts = []\nwhy = 1\n', "keys must be"),
    ('[x\n', "causes.toml"),
])
def test_a_bad_causes_file_is_one_usage_line(tmp_path, text, why):
    f = tmp_path / "causes.toml"
    f.write_text(text)
    with pytest.raises(HarnessError) as e:
        causes.load(f)
    assert e.value.step == "usage" and why in e.value.message


def _variants(entry, role="stock"):
    return {"stock": {"role": role, "lttng_suite": entry}}


def test_the_rule_fails_a_whole_stock_suite_under_98_percent_or_with_a_point_without_cause(found):
    script = "regression/tools/clear/test_kernel"
    # 98 of 100 pass, the other two have a cause: passes
    ok = causes.annotate(_entry({script: ["pass"] * 98 + ["fail"] * 2}), "6.1", found)
    assert compare.coverage_reasons(_variants(ok)) == []
    # 97 of 100: under the rate
    low = causes.annotate(_entry({script: ["pass"] * 97 + ["fail"] * 3}), "6.1", found)
    assert compare.coverage_reasons(_variants(low)) == [
        "lttng-suite: stock: 97/100 points pass (97.0%), under 98%"]
    # 99 of 100, but the failing point's script has no cause
    other = causes.annotate(_entry({script: ["pass"] * 99, "regression/kernel/t": ["fail"]}),
                            "6.1", found)
    assert compare.coverage_reasons(_variants(other)) == [
        "lttng-suite: stock: 1 point(s) that do not pass have no cause "
        "(harness/lttng/suite/causes.toml)"]
    # not judged: a variant that is not stock, a suite of chosen scripts only
    assert compare.coverage_reasons(_variants(low, role="exports")) == []
    part = causes.annotate(_entry({script: ["fail"] * 3}, not_selected=["x"]), "6.1", found)
    assert compare.coverage_reasons(_variants(part)) == []


def test_report_md_groups_the_points_by_cause_no_cause_last(found):
    e = causes.annotate(_entry({"regression/kernel/t": ["fail"],
                                "regression/tools/clear/test_kernel": ["pass", "fail", "fail"]}),
                        "6.1", found)
    out = []
    suite_md.markdown({"lttng_suite": {"stock": e}}, out)
    text = "\n".join(out)
    assert "by cause: stock: 1/4 points pass (25.0%); 1 of the others have no cause" in text
    rows = [line for line in out if line.startswith("| `tcg-slow`") or "**no cause**" in line]
    assert rows == [
        "| `tcg-slow` | TCG limit | 2 | `regression/tools/clear/test_kernel` | the script "
        "needs more than its timeout under TCG | docs/lttng.md |",
        "| **no cause** | none | 1 | `regression/kernel/t` | no cause known |  |"]


def test_report_md_lists_the_ten_slowest_scripts_slowest_first():
    scripts = [{"script": f"regression/kernel/t{i}", "seconds": float(i)} for i in range(12)]
    scripts.append({"script": "regression/kernel/never", "seconds": None})
    rep = {"lttng_suite": {"stock": {"tests": [{"name": "regression/kernel/t1:1 a",
                                                "result": "pass", "reason": ""}],
                                     "scripts": scripts, "seconds": 99.0}}}
    assert [s for _, _, s in suite_md.slowest(rep)] == \
        [f"regression/kernel/t{i}" for i in range(11, 1, -1)]
    out = []
    suite_md.markdown(rep, out)
    assert "Suite time per variant: stock 99.0 s. The 10 slowest scripts:" in out
    assert "| 11.0 | stock | `regression/kernel/t11` |" in out
