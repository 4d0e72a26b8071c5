"""balance_dirty_pages' per-writeback fields under the names 7.2 gives them
(harness/lttng/boot/trace.py RENAMED), on LTTng's side and on ftrace's."""

from harness.lttng.boot import guestlines, trace


def test_the_per_wb_fields_are_read_under_their_72_names():
    """7.2's event (and LTTng 2.16's) names bdi_setpoint and bdi_dirty wb_setpoint and
    wb_dirty: read under either name, on both sides. Before, both sides read None
    there and the comparison of the two fields held without comparing anything."""
    out = trace.new_summary()
    trace.add_event(out, "writeback_balance_dirty_pages",
                    {"limit": 9, "setpoint": 3, "wb_setpoint": 5, "wb_dirty": 4})
    (got,) = out["writeback"]["writeback_balance_dirty_pages"]
    assert (got["bdi_setpoint"], got["bdi_dirty"], got["setpoint"]) == (5, 4, 3)
    ftrace = guestlines.Ftrace("balance_dirty_pages", {"wb_setpoint": 5, "bdi_dirty": 6})
    assert trace.renamed(ftrace.values, "bdi_setpoint") == 5
    assert trace.renamed(ftrace.values, "bdi_dirty") == 6      # the older name first
    assert trace.renamed(ftrace.values, "limit") is None
