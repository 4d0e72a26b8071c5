"""Which of lttng-tools' test scripts target the kernel domain.

Every test_* under tests/regression/kernel/, every test_* under
tests/regression/tools/, and every script of the lists LTTng's CI runs as root
after `make check` (tests/root_regression, tests/root_destructive_tests:
lttng-ci's kernel-tests.sh) whose text drives the kernel tracer: it enables a
kernel channel or event, or checks the kernel modules, through utils.sh's
helpers or `lttng ... -k/--kernel`. Read from the built tree, so a release that
adds a script is run without a change here."""

import re
from pathlib import Path

KERNEL_HINT = re.compile(r"validate_lttng_modules_present|check_skip_kernel_test|"
                         r"lttng_enable_kernel|enable_kernel_lttng|--kernel\b|\s-k\s")


# lttng-ci runs these with `prove` as root once `make check` is over (2.13 has both)
ROOT_LISTS = ("root_regression", "root_destructive_tests")


def _is_script(f, prefix="test_"):
    if not f.is_file() or not f.name.startswith(prefix) or f.suffix in (".c", ".o", ".py"):
        return False
    head = f.read_bytes()[:64]
    return head.startswith(b"#!") and b"bash" in head.splitlines()[0]


def _root_listed(tests):
    """The scripts of the root lists, in their order."""
    out = []
    for name in ROOT_LISTS:
        f = tests / name
        if f.is_file():
            out += [tests / line.strip() for line in f.read_text().splitlines()
                    if line.strip() and not line.startswith("#")]
    return out


def kernel_scripts(tree):
    """Paths relative to tests/ ("regression/kernel/test_event_basic", ...), sorted."""
    tests = Path(tree) / "tests"
    out = [f for f in sorted((tests / "regression" / "kernel").glob("test_*")) if _is_script(f)]
    for f in sorted((tests / "regression" / "tools").glob("*/test_*")) + _root_listed(tests):
        if f not in out and _is_script(f, prefix="") and \
                KERNEL_HINT.search(f.read_text(errors="replace")):
            out.append(f)
    return [str(f.relative_to(tests)) for f in out]
