"""harness/oracles/hang.py: the one line a silent guest's gdb reading gives, and
QemuSession's on_hang hook (a shell script stands in for QEMU)."""

import pytest

from harness.errors import HarnessError
from harness.oracles import hang
from harness.tests.guest.test_qemu_faults import FakeGuest

# A reading as gdbscripts/ksymlab_hang.py writes it: vCPU 0 halted in the idle
# loop, vCPU 1 never started by a kernel without SMP (its pc in the BIOS);
# state words as include/linux/sched.h has them.
READING = {
    "vcpus": [{"vcpu": 0, "pc": 0xffffffff81a0b2f4,
               "frames": ["native_safe_halt", "default_idle", "default_idle_call", "do_idle"]},
              {"vcpu": 1, "pc": 0xfff0, "frames": []}],
    "tasks": [{"pid": 0, "comm": "swapper", "state": 0},           # the idle task: not named
              {"pid": 1, "comm": "init", "state": 0x1},
              {"pid": 9, "comm": "kworker/0:1", "state": 0x402},  # TASK_IDLE: I, not D
              {"pid": 77, "comm": "lttng-consumerd", "state": 0x2,
               "wchan": ["rb_wait_write+0x2a/0x90", "module:0xffffffffa0012345"]},
              {"pid": 412, "comm": "select_poll_epo", "state": 0x0},
              {"pid": 413, "comm": "yes", "state": 0x20}],
}


def test_the_summary_names_idle_vcpus_runnable_and_blocked_tasks():
    assert hang.summary(READING) == (
        "vcpu0 idle (native_safe_halt); vcpu1 pc 0xfff0; "
        "runnable: select_poll_epo[412]; blocked (D): lttng-consumerd[77] in rb_wait_write+0x2a/0x90")


def test_a_busy_vcpu_shows_its_call_chain_and_an_empty_class_a_dash():
    r = {"vcpus": [{"vcpu": 0, "pc": 1, "frames": ["lib_ring_buffer_poll", "do_sys_poll",
                                                   "__x64_sys_ppoll", "do_syscall_64"]}],
         "tasks": [{"pid": 5, "comm": "sh", "state": 1}]}
    assert hang.summary(r) == ("vcpu0 in lib_ring_buffer_poll <- do_sys_poll <- __x64_sys_ppoll; "
                               "runnable: -; blocked (D): -")


def test_samples_name_what_the_tick_interrupted_and_the_task_once_each():
    tick = ["do_raw_write_seqcount_end", "do_write_seqcount_end", "tick_periodic"]
    cur = {"pid": 88, "comm": "lttng-sessiond"}
    samples = [{"vcpus": [{"vcpu": 0, "pc": 1 << 63 | 5, "frames": tick, "current": cur,
                           "interrupted": "lttng_abi_release+0x1c/0x40"}]},
               {"vcpus": [{"vcpu": 0, "pc": 1 << 63 | 7, "frames": ["lttng_abi_release"],
                           "current": cur, "interrupted": None}]},
               {"vcpus": [{"vcpu": 0, "pc": 1 << 63 | 5, "frames": tick, "current": cur,
                           "interrupted": "lttng_abi_release+0x1c/0x40"}]},
               {"vcpus": [{"vcpu": 0, "pc": 1, "frames": ["default_idle"]}], "tasks": [],
                "clock": {"jiffies": 4294967296 + 750}, "host_s": 9.02}]
    samples[0].update(clock={"jiffies": 4294967296}, host_s=0.0)
    for s in samples[1:3]:
        s.update(clock={"jiffies": 4294967296 + 300}, host_s=4.5)
    assert hang.summary(samples) == (
        "vcpu0 in lttng_abi_release+0x1c/0x40 (under do_raw_write_seqcount_end) as "
        "lttng-sessiond[88] | in lttng_abi_release as lttng-sessiond[88] | idle (default_idle); "
        "jiffies +750 in 9.0 s; runnable: -; blocked (D): -")


@pytest.mark.parametrize("state,letter", [(0, "R"), (1, "S"), (2, "D"), (0x402, "I"), (4, "T"),
                                          (8, "T"), (0x20, "Z"), (0x80, "X"), (0x40, "P")])
def test_task_state_letters(state, letter):
    assert hang.Task(1, "x", state).letter == letter


def test_no_socket_or_no_vmlinux_is_one_line_not_an_error(tmp_path):
    class T:
        vmlinux = tmp_path / "vmlinux"
    assert hang.read(T, tmp_path / "none.sock", tmp_path / "h.json") == \
        "post-mortem: no gdbstub socket"
    (tmp_path / "s.sock").write_text("")
    assert hang.read(T, tmp_path / "s.sock", tmp_path / "h.json") == \
        f"post-mortem: no {tmp_path / 'vmlinux'}"


def test_a_hang_message_carries_the_hook_line(tmp_path):
    seen = []

    def on_hang(session):
        seen.append(session)
        return "vcpu0 idle (default_idle); runnable: -; blocked (D): init[1]"
    with pytest.raises(HarnessError) as e:
        with FakeGuest("echo booting; sleep 30", tmp_path, hang_timeout=1, boot_timeout=20,
                       on_hang=on_hang) as g:
            g.wait_ready()
    assert e.value.step == "hang" and seen == [g]
    assert e.value.message.endswith("(boot and sampling); vcpu0 idle (default_idle); runnable: -; "
                                    "blocked (D): init[1]")
