"""The fields LTTng's balance_dirty_pages event derives from several kernel values
(issue 43), against the same formula evaluated on gdb's reading at the stop.

setpoint = (dirty_limit + (thresh + bg_thresh) / 2) / 2 (LTTng's writeback.h, as
the kernel's own ftrace event): dirty_limit is global_wb_domain's, which gdb reads
at the stop and which the last balance_dirty_pages event before it carries
(gdb_rows' writeback/bdp-limit-at-stop); thresh and bg_thresh are what
domain_dirty_limits() gives a writer that is not real-time from the dirty sysctls
gdb reads (the writers are dd). In the guest's state (a limit lifted by a
real-time writer far above thresholds of 2 and 1 pages) a formula that swaps the
limit and the threshold gives another value: the confusion the audit reads.

Every derived field is also compared event by event with the kernel's own ftrace
event (features.writeback_rows, trace.BDP_FIELDS). Not checked against gdb, with
the reason: the fields whose inputs no oracle reads at the stop (UNCHECKED).
"""

from ...checks.confusions import pair
from ...checks.writeback import global_dirty_thresholds
from ...model.results import Check

BDP = "writeback_balance_dirty_pages"
SWAPPED = "setpoint with the limit and thresh swapped"
# LTTng 2.16.0's events for 6.14.2 and later left out the halving of thresh + bg_thresh
# (patches/lttng/2.16.0/0002 fixes it): 733 where the kernel gives 732 on 7.2.12
UNHALVED = "setpoint without halving thresh + bg_thresh (LTTng 2.16.0)"

UNCHECKED = {
    "bdi_setpoint": "setpoint * bdi_thresh / (thresh + 1): bdi_thresh is a local of "
                    "balance_dirty_pages() (wb_calc_thresh() of the writeback's share at "
                    "that instant) that no oracle reads at the stop; compared event by "
                    "event with the kernel's ftrace event only",
    "paused": "(jiffies - start_time) * 1000 / HZ: each probe reads jiffies itself, so a "
              "tick between the ftrace and LTTng probes differs; start_time is a local",
    "think": "(jiffies - current->dirty_paused_when) * 1000 / HZ: jiffies as for paused",
}


def setpoint(limit, thresh, bg_thresh):
    """LTTng's (and the kernel's) setpoint of balance_dirty_pages."""
    return (limit + (thresh + bg_thresh) // 2) // 2


def derived_rows(ctx):
    """writeback/bdp-setpoint-at-stop, and an unchecked row per field of UNCHECKED."""
    rows = [_setpoint_row(ctx)]
    rows += [Check("lttng", f"writeback/derived/{name}", {"lttng": None}, None, {},
                   f"unchecked: {why}") for name, why in UNCHECKED.items()]
    return rows


def _setpoint_row(ctx):
    truth, stops = ctx.truth, ctx.summary.stops
    stop = stops[0] if len(stops) == 1 else None
    index = stop.last_balance_dirty_pages if stop else None
    value = ctx.summary.writeback[BDP][index]["setpoint"] if index is not None else None
    limits = global_dirty_thresholds(truth.dirty_sysctl) \
        if truth is not None and truth.dirty_sysctl is not None else None
    right = info = None
    if limits is not None:
        bg_thresh, thresh = limits
        limit = truth.global_wb_domain.dirty_limit
        right = setpoint(limit, thresh, bg_thresh)
        info = {"limit": limit, "thresh": thresh, "bg_thresh": bg_thresh,
                "confusions": {SWAPPED: pair(right, setpoint(thresh, limit, bg_thresh)),
                               UNHALVED: pair(right, (limit + thresh + bg_thresh) // 2)}}
    sources = {"lttng last event before the stop": value, "formula on gdb's reading": right}
    return ctx.expect("writeback").row("writeback/bdp-setpoint-at-stop", bool(value),
                                       value is not None and value == right, sources,
                                       info or {})
