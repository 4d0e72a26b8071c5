from dataclasses import replace

from harness import seeds
from harness.checks import Check, StepError, VariantResult


ALL = tuple(f"{i}/9" for i in range(1, 10))


def result(values, symbols=(), name="exports", error=None, seeds=ALL):
    return VariantResult(name, "test", "exports", symbols=tuple(symbols), values=tuple(values),
                         error=error, seeds=seeds)


def check(kind, key, agree=True):
    return Check(kind, key, {"module": 1}, agree)


GOOD = [check("writeback", "gds_hits"), check("writeback", "bdp_hits"),
        check("writeback", "dirty_limit/tracepoint-arg"), check("bpf", "arg12/readable"),
        check("bpf", "arg13/readable"), check("bpf", "arg12/arg1-domain"),
        check("prio", "pid 1")]


def row(rows, seed):
    (r,) = [r for r in rows if r["seed"] == seed]
    return r


def test_every_seed_listed_once():
    assert [s["seed"] for s in seeds.SEEDS] == [f"{i}/9" for i in range(1, 10)]
    assert {s["status"] for s in seeds.SEEDS} == {"ported", "superseded"}


def test_holds_when_its_checks_agree():
    rows = seeds.evaluate({"exports": result(GOOD, [check("symbol", "task_prio")])})
    assert row(rows, "1/9")["holds"] is True and row(rows, "1/9")["checks"] == 2
    assert row(rows, "3/9")["holds"] is True
    assert row(rows, "5/9")["checks"] == 2          # the symbol and the prio value


def test_fails_on_disagreement_or_missing_evidence():
    bad = [replace(v, agree=False) if v.key == "bdp_hits" else v for v in GOOD]
    rows = seeds.evaluate({"exports": result(bad)})
    assert row(rows, "1/9")["holds"] is False
    assert row(rows, "6/9")["holds"] is False        # no migratetype evidence at all
    assert "exports: migratetype:*" in row(rows, "6/9")["missing"]


def test_a_renamed_check_is_missing_evidence_not_less_evidence():
    # The dirty-limit check under another key: seed 3 must not hold on what is left.
    renamed = [replace(v, key="dirty_limit/other") if v.key.startswith("dirty_limit") else v
               for v in GOOD]
    r = row(seeds.evaluate({"exports": result(renamed)}), "3/9")
    assert r["holds"] is False and r["missing"] == ["exports: writeback:dirty_limit/tracepoint-arg"]
    # a new display label changes nothing: selection is by id
    relabelled = [replace(v, label="something else") for v in GOOD]
    assert row(seeds.evaluate({"exports": result(relabelled)}), "3/9")["holds"] is True


def test_not_run_without_a_variant_that_carries_it():
    rows = seeds.evaluate({"kallsyms": result(GOOD, name="kallsyms", seeds=())})
    assert all(r["holds"] is None and r["variants"] == [] for r in rows)
    # every variant that carries a seed is checked for it
    two = {"exports": result(GOOD), "bpf13": result(GOOD, name="bpf13")}
    assert row(seeds.evaluate(two), "1/9")["variants"] == ["exports", "bpf13"]
    assert row(seeds.evaluate(two), "1/9")["checks"] == 4
    err = StepError("panic", "boom", 31, "panic")
    rows = seeds.evaluate({"exports": result(GOOD, error=err)})
    assert all(r["holds"] is None for r in rows)
