"""Unit tests of the LTTng comparison (harness/lttng/): each doctored input must
turn a passing row into a failing one."""

import copy

import pytest

from harness.errors import HarnessError
from harness.lttng import checks, guestlines, session

GUEST_TEXT = """guest kernel=6.1.192 lttng_series=stock
task pid=50 policy=nice value=-20
task pid=51 policy=fifo value=50
task pid=52 policy=deadline value=1000000 deadline=10000000 period=100000000
module name=lttng_probe_kmem
module name=lttng_tracer
ftrace event=global_dirty_state dirty=3 writeback=0 bg_thresh=1 thresh=2 limit=7 dirtied=9 written=1
ftrace event=global_dirty_state dirty=3 writeback=0 bg_thresh=1 thresh=2 limit=6 dirtied=9 written=1
ftrace event=balance_dirty_pages limit=6 setpoint=3 dirty=4 bdi_setpoint=1
ustack-expect pid=60 depth=1 ret=0x401656
ustack-expect pid=60 depth=2 ret=0x40166c
ustack-expect pid=60 depth=3 ret=0x401684
sysblock name=ram0 dev=1:0
sysblock name=ram0p1 dev=259:0
partitions name=ram0 major=1 minor=0
partitions name=ram0p1 major=259 minor=0
KSYMLAB-LTTNG-END
"""

SUMMARY = {
    "counts": {"sched_switch": 6, "lttng_statedump_process_state": 20,
               "lttng_statedump_block_device": 2, "writeback_global_dirty_state": 1,
               "writeback_balance_dirty_pages": 1, "kmem_mm_page_alloc": 2,
               "syscall_entry_getppid": 1},
    "sched_switch": [{"prev_tid": 50, "prev_prio": 0, "prio": 0},
                     {"prev_tid": 51, "prev_prio": -51, "prio": -51},
                     {"prev_tid": 52, "prev_prio": -101, "prio": -101},
                     {"prev_tid": 1, "prev_prio": 20, "prio": 20}],
    "block": [{"name": "ram0", "dev": "1:0"}, {"name": "ram0p1", "dev": "259:0"}],
    "process_state": 20,
    "writeback": {"writeback_global_dirty_state": [{"dirty_limit": 6, "background_thresh": 1,
                                                    "dirty_thresh": 2}],
                  "writeback_balance_dirty_pages": [{"limit": 6, "setpoint": 3, "dirty": 4}]},
    "page_alloc": [{"gfp_flags": 0x100cca, "migratetype": 1},
                   {"gfp_flags": 0xcc0, "migratetype": 0}],
    "getppid": [{"tid": 60, "stack": [0x401650, 0x401656, 0x40166c, 0x401684, 0x4017aa]}],
    "discarded": 0,
}


def rows(summary=None, text=GUEST_TEXT, lost=()):
    return {c.key: c for c in checks.compare(summary or SUMMARY, guestlines.parse(text), lost)}


def failing(result):
    return sorted(k for k, c in result.items() if c.agree is False)


def test_the_undoctored_inputs_pass():
    assert failing(rows()) == []


@pytest.mark.parametrize("path,value,killed", [
    (("sched_switch", 1, "prio"), -50, "prio/fifo50"),             # context off by one
    (("sched_switch", 2, "prev_prio"), -100, "prio/deadline1000000"),
    (("block", 1, "dev"), "259:1", "blockdev/ram0p1"),             # wrong dev_t decoding
    (("writeback", "writeback_global_dirty_state", 0, "dirty_limit"), 0,
     "writeback/global_dirty_state"),                             # lookup failed: limit 0
    (("writeback", "writeback_balance_dirty_pages", 0, "setpoint"), 4,
     "writeback/balance_dirty_pages"),
    (("getppid", 0, "stack", 2), 0x401670, "ustack/depth2"),       # a frame off
    (("page_alloc", 0, "migratetype"), 0, "kmem/migratetype"),
])
def test_a_doctored_trace_field_fails_its_row(path, value, killed):
    doctored = copy.deepcopy(SUMMARY)
    target = doctored
    for p in path[:-1]:
        target = target[p]
    target[path[-1]] = value
    assert killed in failing(rows(doctored))


def test_a_missing_feature_fails_unless_expected_lost():
    doctored = copy.deepcopy(SUMMARY)
    for s in doctored["sched_switch"]:
        s["prio"] = None
    assert "feature/prio" in failing(rows(doctored))
    assert "prio/nice-20" in failing(rows(doctored))
    assert failing(rows(doctored, lost=("prio",))) == []


def test_a_wrong_expectation_fails():
    """Listing a feature as lost while LTTng records it right is a failure."""
    got = rows(lost=("prio",))
    assert "feature/prio" in failing(got)
    assert "expected lost" in got["feature/prio"].reason


def test_a_lost_block_statedump_must_be_empty():
    doctored = copy.deepcopy(SUMMARY)
    doctored["block"] = []
    doctored["counts"]["lttng_statedump_block_device"] = 0
    assert "blockdev/ram0" in failing(rows(doctored))
    assert failing(rows(doctored, lost=("statedump_block",))) == []


def test_the_kmem_probe_must_load():
    text = GUEST_TEXT.replace("module name=lttng_probe_kmem\n", "")
    assert "kmem/probe-loaded" in failing(rows(text=text))


def test_an_event_kind_missing_fails_its_count():
    doctored = copy.deepcopy(SUMMARY)
    doctored["counts"].pop("lttng_statedump_process_state")
    assert "count/lttng_statedump_process_state" in failing(rows(doctored))


def test_discarded_events_fail():
    doctored = dict(SUMMARY, discarded=3)
    assert "count/discarded" in failing(rows(doctored))


def test_a_guest_error_line_fails():
    text = GUEST_TEXT.replace("KSYMLAB-LTTNG-END", "error lttng start exited 1\nKSYMLAB-LTTNG-END")
    assert "guest/0" in failing(rows(text=text))


def test_guest_lines_need_the_end_marker():
    with pytest.raises(HarnessError) as e:
        guestlines.parse(GUEST_TEXT.replace("KSYMLAB-LTTNG-END\n", ""))
    assert e.value.step == "verify"


def test_guest_lines_reject_a_non_integer():
    with pytest.raises(HarnessError):
        guestlines.parse("task pid=x1 policy=nice value=0\nKSYMLAB-LTTNG-END\n")


def test_ftrace_limit_must_line_up_in_order():
    """LTTng's events must be a contiguous, in-order run of the kernel's own."""
    text = GUEST_TEXT.replace("limit=6 dirtied", "limit=8 dirtied")
    assert "writeback/global_dirty_state" in failing(rows(text=text))


def test_trace_port_roundtrip(tmp_path):
    import base64
    import io
    import tarfile
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = b"ctf"
        info = tarfile.TarInfo("trace/kernel/metadata")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    b64 = base64.encodebytes(buf.getvalue()).decode()
    text = f"noise\n{session.TRACE_BEGIN}\n{b64}{session.TRACE_END}\n"
    assert session.decode_trace(text, tmp_path) == len(buf.getvalue())
    assert (tmp_path / "trace/kernel/metadata").read_bytes() == b"ctf"
    with pytest.raises(HarnessError):
        session.decode_trace(text.replace(session.TRACE_END, ""), tmp_path / "x")
    damaged = text.replace(b64[:8], "!!!!!!!!")
    with pytest.raises(HarnessError):
        session.decode_trace(damaged, tmp_path / "y")
