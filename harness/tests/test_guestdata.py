import pytest

from harness.guest import dataport as guestdata
from harness.errors import HarnessError

SAMPLE = """\
noise before the channel starts\r
KSYMLAB-DATA-BEGIN variant=exports\r
guest kernel=6.1.192 mode=exports\r
task pid=61 policy=nice value=-20\r
symbol name=task_prio addr=0xffffffff81060a30 method=export\r
prio pid=1 policy=0 prio=20 comm=init\r
prio pid=61 policy=0 prio=0 comm=my\\040sleep\\075x\r
KSYMLAB-DATA-END\r
garbage after the end is ignored=\r
"""


def test_parse_sample():
    d = guestdata.parse(SAMPLE)
    assert d["variant"] == "exports"
    assert d["guest"] == {"kernel": "6.1.192", "mode": "exports"}
    assert d["task"] == [{"pid": 61, "policy": "nice", "value": -20}]
    assert d["symbol"] == [{"name": "task_prio", "addr": 0xffffffff81060a30, "method": "export"}]
    assert d["prio"][0] == {"pid": 1, "policy": 0, "prio": 20, "comm": "init"}
    # seq_escape octal escapes come back as the original characters
    assert d["prio"][1]["comm"] == "my sleep=x"


def test_error_lines_are_collected():
    d = guestdata.parse("KSYMLAB-DATA-BEGIN variant=k\nerror insmod exited 1\nKSYMLAB-DATA-END\n")
    assert d["errors"] == ["insmod exited 1"]


@pytest.mark.parametrize("text,needle", [
    ("", "no KSYMLAB-DATA-BEGIN"),
    ("KSYMLAB-DATA-BEGIN variant=x\nprio pid=1 prio=2 comm=a\n", "without KSYMLAB-DATA-END"),
    ("KSYMLAB-DATA-BEGIN variant=x\nbogus a=b\nKSYMLAB-DATA-END\n", "unknown kind"),
    ("KSYMLAB-DATA-BEGIN variant=x\nprio pid=one\nKSYMLAB-DATA-END\n", "not an integer"),
    ("KSYMLAB-DATA-BEGIN variant=x\nsymbol name=a addr=zz\nKSYMLAB-DATA-END\n", "not an integer"),
    ("KSYMLAB-DATA-BEGIN variant=x\nprio pid\nKSYMLAB-DATA-END\n", "not key=value"),
])
def test_malformed(text, needle):
    with pytest.raises(HarnessError) as e:
        guestdata.parse(text)
    assert e.value.step == "verify"
    assert needle in e.value.message


def test_every_sampler_kind():
    d = guestdata.parse("\n".join([
        "KSYMLAB-DATA-BEGIN variant=stock",
        "symbol name=kallsyms_lookup_name addr=0xffffffff81001000 method=kprobe",
        "resolve mode=kprobe ns=123456",
        "sampler name=ustack available=0 missing=stack_trace_save_user",
        "pageblock node=0 zone=DMA32 pfn=0x200 mt=1",
        "mthist node=0 zone=DMA32 mt=1 count=57",
        "ptinfo node=0 zone=DMA32 mt=1 count=57",
        "bdev name=ram0p1 dev=1:1 sectors=8192 whole=0",
        "sysblock name=ram0p1 dev=1:1 sectors=8192",
        "writeback gds_hits=3 bdp_hits=9 background_thresh=256 dirty_thresh=512",
        "dirtylimit source=global_wb_domain gds=500 bdp=510",
        "frame pid=70 idx=1 ip=0x401a2b",
        "ustack-expect pid=70 depth=1 ret=0x401a2b",
        "unavailable sampler=ustack",
        "bench kind=pointer calls=1000000 ns=4000000",
        "KSYMLAB-DATA-END",
    ]))
    assert d["resolve"] == [{"mode": "kprobe", "ns": 123456}]
    assert d["sampler"][0] == {"name": "ustack", "available": 0,
                               "missing": "stack_trace_save_user"}
    assert d["pageblock"][0]["pfn"] == 0x200 and d["mthist"][0]["count"] == 57
    assert d["bdev"][0] == {"name": "ram0p1", "dev": "1:1", "sectors": 8192, "whole": 0}
    assert d["writeback"][0]["bdp_hits"] == 9 and d["dirtylimit"][0]["bdp"] == 510
    assert d["frame"][0]["ip"] == d["ustack-expect"][0]["ret"] == 0x401a2b
    assert d["bench"][0]["ns"] == 4000000


def test_scenario_task_lines_from_ksymlab_sched():
    d = guestdata.parse("\n".join([
        "KSYMLAB-DATA-BEGIN variant=exports",
        "task pid=70 policy=fifo value=99",
        "task pid=71 policy=idle value=-7",
        "task pid=72 policy=deadline value=1000000 deadline=10000000 period=100000000",
        "KSYMLAB-DATA-END",
    ]))
    assert d["task"] == [
        {"pid": 70, "policy": "fifo", "value": 99},
        {"pid": 71, "policy": "idle", "value": -7},
        {"pid": 72, "policy": "deadline", "value": 1000000, "deadline": 10000000,
         "period": 100000000}]
