"""LTTng, the real client of the seed series: fetch Debian's LTTng, build it against a
variant's tree, trace one session in a guest, check the trace (issue 13)."""
