from harness import seeds


def entry(values, symbols=()):
    return {"values": values, "symbols": list(symbols), "error": None}


GOOD = [{"kind": "writeback", "key": "gds_hits", "agree": True},
        {"kind": "writeback", "key": "bdp_hits", "agree": True},
        {"kind": "writeback", "key": "dirty_limit (tracepoint-arg)", "agree": True},
        {"kind": "bpf", "key": "argument 1 is &global_wb_domain", "agree": True},
        {"kind": "prio", "key": "pid 1", "agree": True}]


def row(rows, seed):
    (r,) = [r for r in rows if r["seed"] == seed]
    return r


def test_every_seed_listed_once():
    assert [s["seed"] for s in seeds.SEEDS] == [f"{i}/9" for i in range(1, 10)]
    assert {s["status"] for s in seeds.SEEDS} == {"ported", "superseded"}


def test_holds_when_its_checks_agree():
    rows = seeds.evaluate({"exports": entry(GOOD, [{"name": "task_prio", "agree": True}])})
    assert row(rows, "1/9")["holds"] is True and row(rows, "1/9")["checks"] == 2
    assert row(rows, "3/9")["holds"] is True
    assert row(rows, "5/9")["checks"] == 2          # the symbol and the prio value


def test_fails_on_disagreement_or_missing_evidence():
    bad = [dict(v, agree=False) if v["key"] == "bdp_hits" else v for v in GOOD]
    rows = seeds.evaluate({"exports": entry(bad)})
    assert row(rows, "1/9")["holds"] is False
    assert row(rows, "6/9")["holds"] is False        # no migratetype evidence at all


def test_not_run_without_its_variant():
    rows = seeds.evaluate({"kallsyms": entry(GOOD)})
    assert all(r["holds"] is None for r in rows)
