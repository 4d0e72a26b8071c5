"""How the consumer daemon reads LTTng's kernel ring buffers: with the default
"splice" output it splices them into a pipe, which LTTng's ring buffer does
with splice_to_pipe() (a name 2.13.9 resolves on some kernels). The guest
prints each channel's output mode (`lttng --mi xml list`); the row holds when
every channel of the session splices and the trace the consumer wrote has its
events, none discarded."""

from ...model.enums import Source
from . import features

CHANNELS = 2        # k and u (lttng-init)


def rows(summary, guest, lost, why):
    """The lttng:splice/output row."""
    modes = [c.get("output") for c in guest.get("channelout", [])]
    events = sum(summary.get("counts", {}).values())
    sources = {Source.LTTNG_LIST: " ".join(modes) or None,
               Source.LTTNG: f"{events} events, {summary.get('discarded', 0)} discarded"}
    right = modes == ["SPLICE"] * CHANNELS and events > 0 and not summary.get("discarded")
    return [features.lost_row(("lttng", "splice/output"), "splice", events > 0, right, lost, why,
                             sources, {"channels": len(modes)})]
