"""rows.json's rows: each Check's id and its verdict in words."""

from harness.model.results import Check
from harness.session import rows


def test_each_verdict_has_its_word_and_the_id_is_kind_and_key():
    checks = [Check("prio", "pid 1", {"module": 20, "gdb": 20}, True),
              Check("prio", "pid 2", {"module": 20, "gdb": 19}, False),
              Check("bpf", "arg 13", {"module": None}, None)]
    assert rows.row_dicts(checks) == (
        {"id": "prio:pid 1", "agree": "agree"},
        {"id": "prio:pid 2", "agree": "disagree"},
        {"id": "bpf:arg 13", "agree": "unchecked"})
