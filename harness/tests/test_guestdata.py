import pytest

from harness import guestdata
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
    assert d["tasks"] == [{"pid": 61, "policy": "nice", "value": -20}]
    assert d["symbols"] == [{"name": "task_prio", "addr": 0xffffffff81060a30, "method": "export"}]
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
    ("KSYMLAB-DATA-BEGIN variant=x\nsymbol name=a addr=zz\nKSYMLAB-DATA-END\n", "not hex"),
    ("KSYMLAB-DATA-BEGIN variant=x\nprio pid\nKSYMLAB-DATA-END\n", "not key=value"),
])
def test_malformed(text, needle):
    with pytest.raises(HarnessError) as e:
        guestdata.parse(text)
    assert e.value.step == "verify"
    assert needle in e.value.message
