"""lttng-tools' own kernel regression tests, run in the guest (issue 23)."""
