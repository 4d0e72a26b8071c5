"""How the consumer daemon reads LTTng's kernel ring buffers: with the default
"splice" output it splices them into a pipe, which LTTng's ring buffer does
with splice_to_pipe() (a name 2.13.9 resolves on some kernels). The guest
prints each channel's output mode (`lttng --mi xml list`); the row holds when
every channel of the session splices and the trace the consumer wrote has its
events, none discarded."""

from ...model.enums import Source

CHANNELS = 2        # k and u (lttng-init)


def rows(ctx):
    """The lttng:splice/output row of an Inputs (rows/inputs.py)."""
    modes = [c.output for c in ctx.guest.channelout]
    events = sum(ctx.summary.counts.values())
    discarded = ctx.summary.discarded
    sources = {Source.LTTNG_LIST: " ".join(m or "" for m in modes) or None,
               Source.LTTNG: f"{events} events, {discarded} discarded"}
    right = modes == ["SPLICE"] * CHANNELS and events > 0 and not discarded
    return [ctx.expect("splice").row("splice/output", events > 0, right, sources,
                                     {"channels": len(modes)})]
