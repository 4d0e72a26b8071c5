"""The names of a run's timed steps, in the order they happen.

One list for every place that names them: variantjob.py records its laps under
these names, the timing tables of report.md and report.html show them in
this order (harness/report/timings.py, html_charts.py), and harness/tools/bench.py
reads them back from report.json.
"""

# timings.kernel.<variant> of report.json: kernel.prepare of each variant, in
# the main thread before any guest starts
KERNEL = "kernel"

# What kernel.prepare records in its tree's manifest ("steps"), shown by
# bench's cold builds; "copy" is a derived tree's copy of its base.
KERNEL_BUILD = ("extract", "copy", "patch", "configure", "build")

# variants.<variant>.timings of report.json: variantjob.run_variant's laps
# (steps.lap), each the seconds since the one before. "lttng" only for a
# variant with an [lttng] table, in a run without --no-lttng; "suite" only
# with --lttng-suite (lttng-tools' own tests).
GUEST = ("module", "initramfs", "boot", "gdb", "guest_rest", "drgn", "compare", "lttng",
         "suite")

# A variant's timed steps, a row each in the timing tables
TIMED = (KERNEL,) + GUEST


def label(step):
    """The step as the reports print it: guest_rest -> "guest rest"."""
    return step.replace("_", " ")
