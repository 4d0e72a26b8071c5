"""A tree's configuration: tinyconfig plus the variant's fragments, and the check that
every option a fragment asks for survived olddefconfig."""

import re
import time

from .. import paths
from ..errors import HarnessError
from ..proc import run_logged
from ..progress import say


def _requested_options(fragment_text):
    want = {}
    for line in fragment_text.splitlines():
        m = re.match(r"^(CONFIG_\w+)=(.*)$", line)
        if m:
            want[m.group(1)] = m.group(2)
            continue
        m = re.match(r"^# (CONFIG_\w+) is not set$", line)
        if m:
            want[m.group(1)] = "n"
    return want


def check_config(fragment_text, config_text):
    """Options of the fragment that did not survive olddefconfig, as text lines."""
    have = _requested_options(config_text)     # the same syntax on both sides
    bad = []
    for opt, val in _requested_options(fragment_text).items():
        got = have.get(opt, "n")
        if got != val:
            bad.append(f"{opt}={val} requested, .config has {opt}={got}")
    return bad


def check_fragments(variant, src, log):
    """A HarnessError(configure) naming every option of the variant's fragments that
    <src>/.config does not have."""
    config = (src / ".config").read_text()
    # one text in merge order: a later fragment's value of an option wins
    merged = "\n".join((paths.KCONFIG / f).read_text() for f in variant.fragments)
    bad = check_config(merged, config)
    if bad:
        raise HarnessError("configure", "; ".join(bad), log)


def configure(variant, src, log, env):
    start = time.monotonic()
    say("configure", "tinyconfig + " + ", ".join(variant.fragments))
    run_logged("configure", ["make", "tinyconfig"], log, cwd=src, env=env)
    frags = [paths.KCONFIG / f for f in variant.fragments]
    run_logged("configure", ["scripts/kconfig/merge_config.sh", "-m", ".config", *frags],
               log, cwd=src, env=env)
    run_logged("configure", ["make", "olddefconfig"], log, cwd=src, env=env)
    check_fragments(variant, src, log)
    return time.monotonic() - start
