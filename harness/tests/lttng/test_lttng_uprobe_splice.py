"""The userspace-probe and splice-output rows of the LTTng boot, on doctored summaries."""

import subprocess

import pytest

from harness.errors import HarnessError
from harness.lttng.boot import guestlines, trace
from harness.lttng.rows import splice, uprobe
from harness.lttng.rows.inputs import Inputs

SYMS = {"level1": 0x401800, "level2": 0x4017c0, "level3": 0x401765}
GUEST = "ustack-expect pid=139 tgid=138 depth=1 ret=0x401766\n"


def guest(text=GUEST):
    return guestlines.parse(text + guestlines.END + "\n")


def summary(*events, counts=None, discarded=0):
    s = trace.new_summary()
    for tid, ip in events:
        trace.add_event(s, trace.UPROBE_EVENT, {"tid": tid, "ip": ip})
    s["counts"].update(counts or {})
    s["discarded"] = discarded
    return s


def row(s, g=None, lost=()):
    (r,) = uprobe.rows(Inputs(trace.TraceSummary.parse(s), g or guest(), None, lost,
                              {"uprobe": "why"}), SYMS)
    return r


def test_the_probe_hit_once_at_level2_agrees():
    r = row(summary((139, 0x4017c0)))
    assert r.agrees and r.key == "uprobe/level2"
    assert r.get("lttng uprobe") == "0x4017c0 x1" and r.get("program symbols") == "0x4017c0 x1"
    assert r.info["confusions"]["the neighbouring function's"] == [0x4017c0, 0x401800]


@pytest.mark.parametrize("events", [
    [(139, 0x4017c1)],                      # the trap's ip, not rewound
    [(139, 0x401800)],                      # the neighbouring function
    [(139, 0x4017c0), (139, 0x4017c0)],     # hit twice
    [(140, 0x4017c0)],                      # another thread
    [(139, 0x4017c0), (140, 0x4017c0)],     # an extra hit elsewhere
])
def test_a_wrong_ip_count_or_thread_disagrees(events):
    assert not row(summary(*events)).agrees


def test_no_event_is_a_missing_feature_unless_lost():
    r = row(summary())
    assert not r.agrees and r.reason.startswith("LTTng recorded no uprobe")
    assert row(summary(), lost=("uprobe",)).agrees
    assert not row(summary((139, 0x4017c0)), lost=("uprobe",)).agrees


def test_functions_reads_the_programs_text_symbols(tmp_path):
    src = tmp_path / "p.c"
    src.write_text("static int __attribute__((noinline)) level2(int x) { return x + 1; }\n"
                   "int main(int c, char **v) { (void)v; return level2(c); }\n")
    subprocess.run(["gcc", "-O1", "-no-pie", "-o", str(tmp_path / "p"), str(src)], check=True)
    syms = uprobe.functions(tmp_path / "p")
    nm = subprocess.run(["readelf", "-sW", str(tmp_path / "p")], capture_output=True,
                        text=True, check=True).stdout
    (line,) = [ln for ln in nm.splitlines() if ln.endswith(" level2")]
    assert syms["level2"] == int(line.split()[1], 16) and "main" in syms


SPLICED = "channelout output=SPLICE\nchannelout output=SPLICE\n"


def srow(g, s, lost=()):
    (r,) = splice.rows(Inputs(trace.TraceSummary.parse(s), guest(g), None, lost,
                              {"splice": "why"}))
    return r


def test_every_channel_spliced_with_events_agrees():
    assert srow(SPLICED, summary(counts={"sched_switch": 10})).agrees


@pytest.mark.parametrize("g,s", [
    ("channelout output=SPLICE\nchannelout output=MMAP\n", summary(counts={"a": 1})),
    ("channelout output=SPLICE\n", summary(counts={"a": 1})),
    (SPLICED, summary(counts={"a": 1}, discarded=3)),
    (SPLICED, summary()),
])
def test_mmap_a_missing_channel_discards_or_no_events_disagree(g, s):
    assert not srow(g, s).agrees


def test_a_failing_nm_is_the_steps_error(tmp_path):
    (tmp_path / "p").write_text("#!/bin/sh\n")
    with pytest.raises(HarnessError) as e:
        uprobe.functions(tmp_path / "p")
    assert e.value.step == "lttng" and e.value.exit_status == 23
    assert e.value.message.startswith("nm ") and "format not recognized" in e.value.message
