"""Progress lines on stderr so a person can follow long steps."""

import sys
import time

_START = time.monotonic()


def say(step, message):
    elapsed = time.monotonic() - _START
    print(f"[{elapsed:7.1f}s] {step}: {message}", file=sys.stderr, flush=True)
