"""The judge (harness/judge.py) on doctored results: a failing seed claim, a rule
across variants broken, a variant's failed step. Every expected verdict, reason
and exit status is written here by hand; report/assemble.py only renders it."""

from dataclasses import replace

from harness import judge
from harness.model.results import Check, StepError, VariantResult
from harness.judge import Verdict
from harness.report import assemble


def _symbol(name="task_prio"):
    return Check("symbol", name, {"module": "0x1", "gdb": "0x1"}, True, info={"method": "export"})


def _prio(pid=1, module=20):
    return Check("prio", f"pid {pid}", {"module": module, "gdb": 20, "scenario": module},
                 module == 20,
                 info={"comm": "x", "pid": pid})


def _dev(dev="1:0 100"):
    return Check("blockdev", "ram0", {"module": dev, "sysfs": dev}, True)


def _result(name, values=None, seeds=(), **kw):
    values = values if values is not None else (_prio(1), _dev())
    return VariantResult(name, name, name, symbols=(_symbol(),), values=tuple(values),
                         seeds=tuple(seeds), kernel_line="6.1", role=name, **kw)


def _judge(*results):
    order = [r.name for r in results]
    return judge.judge({r.name: r for r in results}, order)


def test_two_agreeing_variants_pass_with_exit_0():
    got = _judge(_result("exports"), _result("kallsyms"))
    assert (got.verdict, got.reasons, got.exit_status, got.first_error) == \
        (Verdict.PASS, (), 0, None)
    assert got.variants == {"exports": Verdict.PASS, "kallsyms": Verdict.PASS}


def test_a_seed_claim_that_fails_fails_the_run():
    claim = Check("seed", "5/9/export/task_prio",
                  {"seed_patch": "task_prio", "symvers": "task_prio"}, True)
    good = _result("exports", values=(_prio(1), claim), seeds=("5/9",))
    assert _judge(good).verdict is Verdict.PASS
    # the port no longer exports what seed 5/9 exports: its claim row disagrees
    broken = replace(good, values=(_prio(1), replace(claim, agreement=False)))
    got = _judge(broken)
    assert got.verdict is Verdict.FAIL and got.exit_status == 1
    assert got.reasons == ("seed 5/9: its claim does not hold", "variant exports: fail")
    # the seed's evidence missing (no prio row) fails the seed though every row agrees
    no_prio = replace(good, values=(claim, _dev()))
    got = _judge(no_prio)
    assert got.variants == {"exports": Verdict.PASS}
    assert (got.verdict, got.reasons, got.exit_status) == \
        (Verdict.FAIL, ("seed 5/9: its claim does not hold",), 1)


def test_a_difference_that_must_not_exist_across_variants_fails_the_run():
    got = _judge(_result("exports"), _result("kallsyms", values=(_prio(1), _dev("1:0 200"))))
    assert got.variants == {"exports": Verdict.PASS, "kallsyms": Verdict.PASS}
    assert got.verdict is Verdict.FAIL and got.exit_status == 1
    assert got.reasons == (
        "across variants: block devices (name, dev, sectors) differs where it must not",)


def test_a_failed_step_gives_the_first_failed_variants_exit_status():
    boot = StepError("boot", "QEMU exited", 30, "boot")
    panic = StepError("panic", "Kernel panic", 31, "panic", "/r/console.log")
    got = _judge(_result("exports"), _result("kallsyms", values=(), error=boot),
                 _result("stock", values=(), error=panic))
    assert got.verdict is Verdict.FAIL
    assert (got.exit_status, got.first_error) == (30, boot)
    assert got.reasons == ("variant kallsyms: fail", "variant stock: fail")
    assert got.error().one_line() == "ksymlab: boot: QEMU exited"
    # in the order asked for: stock first, its panic's status
    results = {r.name: r for r in (_result("kallsyms", values=(), error=boot),
                                   _result("stock", values=(), error=panic))}
    assert judge.judge(results, ["stock", "kallsyms"]).exit_status == 31


def test_no_variant_is_a_failed_run():
    got = judge.judge({}, [])
    assert (got.verdict, got.reasons, got.exit_status) == (Verdict.FAIL, ("no variant ran",), 1)


def test_the_report_renders_the_judges_verdict_and_decides_nothing():
    a, b = _result("exports"), _result("kallsyms")
    snap, order = {"exports": a, "kallsyms": b}, ["exports", "kallsyms"]
    decided = judge.judge(snap, order)
    rep = assemble.assemble({"run_id": "r"}, snap, order, decided)
    assert rep["verdict"] == "pass" and rep["variants"]["kallsyms"]["verdict"] == "pass"
    # doctored decisions: the report shows them, whatever the rows say
    rep = assemble.assemble({"run_id": "r"}, snap, order, replace(decided, verdict=Verdict.FAIL))
    assert rep["verdict"] == "fail" and rep["variants"]["kallsyms"]["verdict"] == "pass"
    doctored = replace(decided, verdict=Verdict.FAIL,
                       variants={"exports": Verdict.PASS, "kallsyms": Verdict.FAIL})
    rep = assemble.assemble({"run_id": "r"}, snap, order, doctored)
    assert rep["verdict"] == "fail" and rep["variants"]["kallsyms"]["verdict"] == "fail"
    assert rep["matrix"]["rows"][1]["cells"]["6.1"]["verdict"] == "fail"
    assert assemble.ktap(rep).splitlines()[-2:] == ["not ok 2 kallsyms",
                                                    "# ksymlab run r: verdict fail"]


def test_a_whole_stock_suite_under_98_percent_fails_the_run():
    tests = [{"name": f"regression/kernel/t:{i} p", "result": "pass" if i <= 96 else "fail",
              "reason": "", "cause": "c" if i > 96 else None} for i in range(1, 101)]
    cov = {"planned": 100, "passed": 96, "no_cause": 0, "rate": 0.96}
    suite = {"tests": tests, "not_selected": [], "coverage": cov, "causes": {}}
    got = _judge(_result("stock", facts={"lttng_suite": suite}))
    assert got.verdict is Verdict.FAIL and got.exit_status == 1
    assert got.reasons == ("lttng-suite: stock: 96/100 points pass (96.0%), under 98%",)
    # the same suite of chosen scripts only (make check's) is not held to the rate
    part = _judge(_result("stock", facts={"lttng_suite": {**suite, "not_selected": ["other"]}}))
    assert part.verdict is Verdict.PASS


def test_report_md_and_json_say_why_the_run_fails():
    tests = [{"name": f"regression/kernel/t:{i} p", "result": "pass" if i <= 96 else "fail",
              "reason": "", "cause": None} for i in range(1, 101)]
    cov = {"planned": 100, "passed": 96, "no_cause": 4, "rate": 0.96}
    r = _result("stock", facts={"lttng_suite": {"tests": tests, "not_selected": [],
                                                "coverage": cov, "causes": {}}})
    decided = _judge(r)
    reasons = ["lttng-suite: stock: 96/100 points pass (96.0%), under 98%",
               "lttng-suite: stock: 4 point(s) that do not pass have no cause "
               "(harness/lttng/suite/causes.toml)"]
    rep = assemble.assemble({"run_id": "r"}, {"stock": r}, ["stock"], decided)
    assert rep["verdict"] == "fail" and rep["verdict_reasons"] == reasons
    md = assemble.markdown(rep).splitlines()
    assert md[md.index("Why it fails:") + 2:md.index("Why it fails:") + 4] == \
        [f"- {x}" for x in reasons]
    # a passing run says nothing of the kind
    ok = assemble.assemble({"run_id": "r"}, {"a": _result("a")}, ["a"], _judge(_result("a")))
    assert ok["verdict_reasons"] == [] and "Why it fails:" not in assemble.markdown(ok)
