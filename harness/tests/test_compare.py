from harness import compare


def data(addr=0x1000, prio=25, tasks=None, errors=()):
    return {
        "symbols": [{"name": "task_prio", "addr": addr, "method": "export"}],
        "tasks": tasks if tasks is not None else [{"pid": 7, "policy": "nice", "value": 5}],
        "prio": [{"pid": 1, "prio": 20, "comm": "init", "policy": 0},
                 {"pid": 7, "prio": prio, "comm": "sleep", "policy": 0}],
        "errors": list(errors),
    }


TRUTH = {"symbols": {"task_prio": 0x1000},
         "tasks": {"1": {"prio": 20, "comm": "init"}, "7": {"prio": 25, "comm": "sleep"},
                   "9": {"prio": 20, "comm": "kworker"}}}


def test_all_agree():
    r = compare.compare_variant(data(), TRUTH)
    assert r["verdict"] == "pass"
    assert r["symbols"] == [{"name": "task_prio", "method": "export", "module_addr": "0x1000",
                             "gdb_addr": "0x1000", "agree": True}]
    assert r["counts"] == {"symbols": 1, "symbols_agree": 1, "values": 2, "values_agree": 2}
    assert [v["scenario"] for v in r["values"] if "scenario" in v] == [25]
    # a task only gdb saw is a note, not a disagreement
    assert any("9" in n for n in r["notes"])


def test_address_mismatch_fails():
    r = compare.compare_variant(data(addr=0x1008), TRUTH)
    assert r["verdict"] == "fail"
    assert r["symbols"][0]["agree"] is False


def test_scenario_oracle_catches_value_both_sides_share():
    truth = {"symbols": TRUTH["symbols"],
             "tasks": {"1": {"prio": 20}, "7": {"prio": 26}}}
    r = compare.compare_variant(data(prio=26), truth)
    # module and gdb agree on 26, but nice 5 must be 25
    assert r["verdict"] == "fail"
    bad = [v for v in r["values"] if not v["agree"]]
    assert bad == [{"kind": "prio", "key": "pid 7", "comm": "sleep", "module": 26, "gdb": 26,
                    "scenario": 25, "agree": False}]


def test_missing_scenario_task_and_guest_error_fail():
    d = data(tasks=[{"pid": 7, "policy": "nice", "value": 5},
                    {"pid": 8, "policy": "nice", "value": 0}])
    r = compare.compare_variant(d, TRUTH)
    assert r["verdict"] == "fail"
    assert any(v["key"] == "pid 8" and v["module"] is None for v in r["values"])
    r = compare.compare_variant(data(errors=["insmod exited 1"]), TRUTH)
    assert r["verdict"] == "fail"


def test_gdb_missing_symbol_fails():
    truth = dict(TRUTH, symbols={"task_prio": None})
    assert compare.compare_variant(data(), truth)["verdict"] == "fail"
