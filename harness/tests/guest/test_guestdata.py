import dataclasses

import pytest

from harness.guest import dataport, schema
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
    d = dataport.parse(SAMPLE)
    assert d.variant == "exports"
    assert d.guest == schema.Guest(kernel="6.1.192", mode="exports")
    assert d.task == (schema.Task(pid=61, policy="nice", value=-20),)
    assert d.symbol == (schema.Symbol(name="task_prio", addr=0xffffffff81060a30,
                                        method="export"),)
    assert d.prio[0] == schema.Prio(pid=1, policy=0, prio=20, comm="init")
    # seq_escape octal escapes come back as the original characters
    assert d.prio[1].comm == "my sleep=x"


def test_error_lines_are_collected():
    d = dataport.parse("KSYMLAB-DATA-BEGIN variant=k\nerror insmod exited 1\nKSYMLAB-DATA-END\n")
    assert d.errors == ("insmod exited 1",)


@pytest.mark.parametrize("text,needle", [
    ("", "no KSYMLAB-DATA-BEGIN"),
    ("KSYMLAB-DATA-BEGIN variant=x\nprio pid=1 policy=0 prio=2 comm=a\n",
     "without KSYMLAB-DATA-END"),
    ("KSYMLAB-DATA-BEGIN variant=x\nbogus a=b\nKSYMLAB-DATA-END\n", "unknown kind"),
    ("KSYMLAB-DATA-BEGIN variant=x\nprio pid=one\nKSYMLAB-DATA-END\n", "not an integer"),
    ("KSYMLAB-DATA-BEGIN variant=x\nsymbol name=a addr=zz\nKSYMLAB-DATA-END\n", "not an integer"),
    ("KSYMLAB-DATA-BEGIN variant=x\nprio pid\nKSYMLAB-DATA-END\n", "not key=value"),
])
def test_malformed(text, needle):
    with pytest.raises(HarnessError) as e:
        dataport.parse(text)
    assert e.value.step == "verify"
    assert needle in e.value.message


def test_every_sampler_kind():
    d = dataport.parse("\n".join([
        "KSYMLAB-DATA-BEGIN variant=stock",
        "symbol name=kallsyms_lookup_name addr=0xffffffff81001000 method=kprobe",
        "resolve mode=kprobe ns=123456",
        "sampler name=ustack available=0 missing=stack_trace_save_user",
        "pageblock node=0 zone=DMA32 pfn=0x200 mt=1",
        "mthist node=0 zone=DMA32 mt=1 count=57",
        "ptinfo node=0 zone=DMA32 mt=1 count=57",
        "bdev name=ram0p1 dev=1:1 sectors=8192 whole=0",
        "sysblock name=ram0p1 dev=1:1 sectors=8192 whole=0",
        "writeback gds_hits=3 bdp_hits=9 background_thresh=256 dirty_thresh=512",
        "dirtylimit source=global_wb_domain gds=500 bdp=510",
        "frame pid=70 idx=1 ip=0x401a2b",
        "ustack-expect pid=70 tgid=69 depth=1 ret=0x401a2b",
        "unavailable sampler=ustack",
        "bench kind=pointer calls=1000000 ns=4000000",
        "KSYMLAB-DATA-END",
    ]))
    assert d.resolve == (schema.Resolve(mode="kprobe", ns=123456),)
    assert d.sampler[0] == schema.Sampler(name="ustack", available=0,
                                            missing="stack_trace_save_user")
    assert d.pageblock[0].pfn == 0x200 and d.mthist[0].count == 57
    assert d.bdev[0] == schema.Bdev(name="ram0p1", dev="1:1", sectors=8192, whole=0)
    assert d.writeback[0].bdp_hits == 9 and d.dirtylimit[0].bdp == 510
    assert d.frame[0].ip == d.ustack_expect[0].ret == 0x401a2b
    assert d.bench[0].ns == 4000000 and d.bench[0].sum is None


def test_scenario_task_lines_from_ksymlab_sched():
    d = dataport.parse("\n".join([
        "KSYMLAB-DATA-BEGIN variant=exports",
        "task pid=70 policy=fifo value=99",
        "task pid=71 policy=idle value=-7",
        "task pid=72 policy=deadline value=1000000 deadline=10000000 period=100000000",
        "KSYMLAB-DATA-END",
    ]))
    assert d.task == (
        schema.Task(pid=70, policy="fifo", value=99),
        schema.Task(pid=71, policy="idle", value=-7),
        schema.Task(pid=72, policy="deadline", value=1000000, deadline=10000000,
                      period=100000000))


# ---- the typed record ----

def test_parse_gives_typed_frozen_rows():
    d = dataport.parse(SAMPLE)
    assert isinstance(d, schema.GuestData) and d.variant == "exports"
    assert d.guest == schema.Guest(kernel="6.1.192", mode="exports")
    assert d.task == (schema.Task(pid=61, policy="nice", value=-20),)
    assert d.task[0].deadline is None and d.task[0].pi_owner is None
    assert d.symbol[0].addr == 0xffffffff81060a30 and d.symbol[0].method == "export"
    assert [p.comm for p in d.prio] == ["init", "my sleep=x"]
    assert d.pageblock == () and d.errors == () and dict(d.at) == {}
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.prio[0].prio = 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        d.variant = "other"


def test_values_are_converted_once_by_their_field_type():
    d = dataport.parse("\n".join([
        "KSYMLAB-DATA-BEGIN variant=k",
        "phase name=booted uptime=1.25",
        "frame pid=70 idx=0 ip=0x401000",
        "memstate@2 action=offline block=-1 start_pfn=-32768 pages=32768 state=no-movable-block",
        "bpf arg=13 result=rejected errno=13 verifier=R1_invalid_mem_access",
        "KSYMLAB-DATA-END"]))
    assert d.phase[0].uptime == 1.25 and isinstance(d.phase[0].uptime, float)
    assert d.frame[0].ip == 0x401000
    assert d.at[2].memstate[0].block == -1 and d.at[2].memstate[0].start_pfn == -32768
    assert d.bpf[0].verifier == "R1_invalid_mem_access" and d.bpf[0].hits is None


def test_later_snapshots_are_rows_of_their_own():
    d = dataport.parse("\n".join([
        "KSYMLAB-DATA-BEGIN variant=k",
        "prio pid=1 policy=0 prio=20 comm=init",
        "prio@2 pid=1 policy=0 prio=25 comm=init",
        "snapshot@2 kind=prio seq=2",
        "KSYMLAB-DATA-END"]))
    assert [p.prio for p in d.prio] == [20] and d.snapshot == ()
    assert [p.prio for p in d.at[2].prio] == [25] and d.at[2].snapshot[0].seq == 2
    assert isinstance(d.at[2], schema.Rows) and d.at[2].pageblock == ()


def test_partial_stops_where_the_guest_is():
    text = "KSYMLAB-DATA-BEGIN variant=k\nsnapshots count=2\narmed-data\n"
    d = dataport.parse(text, partial=True)
    assert d.snapshots[0].count == 2 and d.armed_data == (schema.ArmedData(),)
    with pytest.raises(HarnessError, match="without KSYMLAB-DATA-END"):
        dataport.parse(text)


def test_the_schema_is_kinds():
    """KINDS alone names the kinds, their classes and GuestData's attributes."""
    row_fields = {f.name for f in dataclasses.fields(schema.Rows)}
    assert row_fields == {k.replace("-", "_") for k in dataport.KINDS} - {"guest", "error"}
    for kind, cls in dataport.KINDS.items():
        assert dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen, kind


def test_row_dict_is_the_line_as_report_json_has_it():
    """report.json's bench facts: the keys the line carried, in the order written."""
    d = dataport.parse("\n".join([
        "KSYMLAB-DATA-BEGIN variant=k",
        "bench kind=load calls=1 ns=900 round=0",
        "bench kind=resolve calls=1 ns=800 sum=7",
        "KSYMLAB-DATA-END"]))
    got = [dataport.row_dict(b) for b in d.bench]
    assert got == [{"kind": "load", "calls": 1, "ns": 900, "round": 0},
                   {"kind": "resolve", "calls": 1, "ns": 800, "sum": 7}]
    assert [list(b) for b in got] == [["kind", "calls", "ns", "round"],
                                      ["kind", "calls", "ns", "sum"]]


BEGIN_LINE = "KSYMLAB-DATA-BEGIN variant=x"


@pytest.mark.parametrize("line,message", [
    # unknown kind, at the first snapshot and a later one
    ("bogus a=b", "data line 2: unknown kind 'bogus': 'bogus a=b'"),
    ("bogus@2 a=b", "data line 2: unknown kind 'bogus@2': 'bogus@2 a=b'"),
    ("Prio pid=1", "data line 2: unknown kind 'Prio': 'Prio pid=1'"),
    # kinds a later snapshot does not have
    ("guest@2 kernel=6.1 mode=exports", "data line 2: guest@2: a later snapshot has no "
                                        "guest lines"),
    ("error@3 insmod failed", "data line 2: error@3: a later snapshot has no error lines"),
    # a missing key: never a None in the row
    ("prio pid=1 prio=2 comm=a", "data line 2: prio: policy: missing"),
    ("prio@2 pid=1 policy=0 comm=a", "data line 2: prio@2: prio: missing"),
    ("sysblock name=ram0 dev=1:0 sectors=8", "data line 2: sysblock: whole: missing"),
    ("task pid=7 value=5", "data line 2: task: policy: missing"),
    ("memstate@2 action=offline block=2 start_pfn=0 pages=1",
     "data line 2: memstate@2: state: missing"),
    # what one bpf result always carries (bpf13.c), another need not
    ("bpf arg=13 result=ok value=0x1 arg1=0x2 writes=1 jiffies=0x3",
     "data line 2: bpf: hits: missing (result=ok)"),
    ("bpf arg=12 result=rejected verifier=R1_invalid", "data line 2: bpf: errno: missing "
                                                       "(result=rejected)"),
    # a key the kind does not have
    ("prio pid=1 policy=0 prio=2 comm=a cpu=3", "data line 2: prio: unknown field 'cpu'"),
    ("armed-data now=1", "data line 2: armed-data: unknown field 'now'"),
    ("ktext addr=0x1 addr=0x2", "data line 2: ktext: addr given twice"),
    # the wrong type
    ("prio pid=one policy=0 prio=1 comm=a", "data line 2: prio: pid='one' is not an integer"),
    ("procstat pid=1 prio=", "data line 2: procstat: prio='' is not an integer"),
    ("section name=.text addr=ffffffffc0000000",
     "data line 2: section: addr='ffffffffc0000000' is not an integer"),
    ("symbol name=a addr=\\012 method=export",
     "data line 2: symbol: addr='\\n' is not an integer"),
    ("phase name=booted uptime=soon", "data line 2: phase: uptime='soon' is not a number"),
    # not key=value
    ("prio pid", "data line 2: prio: field 'pid' is not key=value"),
    ("bdev =ram0", "data line 2: bdev: field '=ram0' is not key=value"),
])
def test_a_doctored_line_fails_at_the_parse_in_one_line(line, message):
    with pytest.raises(HarnessError) as e:
        dataport.parse(f"{BEGIN_LINE}\n{line}\nKSYMLAB-DATA-END\n")
    assert e.value.step == "verify" and e.value.message == message
    assert "\n" not in e.value.message


def test_a_second_guest_line_is_refused():
    text = f"{BEGIN_LINE}\nguest kernel=a mode=b\nguest kernel=c mode=d\nKSYMLAB-DATA-END\n"
    with pytest.raises(HarnessError) as e:
        dataport.parse(text)
    assert e.value.message == "data line 3: guest: a second guest line"
