"""LTTng's own kernel regression tests on one variant (`run --lttng-suite`).

lttng-tools 2.13.9's tests (tools.py: built on the host from Debian's source),
run in guests of the variant's kernel with the LTTng modules of its LTTng boot
(guest.py), every TAP point read (tap.py). The result is report.json's
`lttng_suite.<variant>`: the LTTng release and kernel, and every point as
{name, result, reason} (a point that does not pass also its `cause`, causes.py);
a step that fails (no source, a failed build) is one failed point naming it, and
the rest of the report is kept."""

import time
from pathlib import Path

from ...errors import HarnessError
from ...options import RunOptions
from ...progress import say
from ..supply import image
from ..supply.modbuild import kernel_release
from . import causes, guest, rootfs, scripts, tap, tools

DEFAULT_TIMEOUT = RunOptions.lttng_suite_timeout     # seconds per script in the guest


def select(found, only=(), exact=False):
    """The scripts of `found` to run: all when `only` is empty, else those that
    contain one of `only` (`exact`: those that are one of `only`)."""
    return [s for s in found if not only or
            (s in only if exact else any(o in s for o in only))]


def _etc(etc):
    """The suite guest's own /etc files (guest.spec packs every file under `etc`)."""
    etc.mkdir(exist_ok=True)
    (etc / "group").write_text("root:x:0:\ntracing:x:0:\n")
    (etc / "passwd").write_text("root:x:0:0:root:/root:/bin/sh\n")
    # useradd keeps shadow files in step when they exist; su asks PAM (rootok, permit)
    (etc / "shadow").write_text("root:*:19000:0:99999:7:::\n")
    (etc / "gshadow").write_text("root:*::\ntracing:*::\n")
    pam = etc / "pam.d"
    pam.mkdir(exist_ok=True)
    (pam / "su").write_text("auth sufficient pam_rootok.so\naccount required pam_permit.so\n"
                            "session required pam_permit.so\n")
    (pam / "other").write_text("auth required pam_permit.so\naccount required pam_permit.so\n"
                               "session required pam_permit.so\npassword required pam_permit.so\n")
    # the live and streaming tests connect to net://localhost
    (etc / "hosts").write_text("127.0.0.1 localhost\n::1 localhost\n")
    (etc / "nsswitch.conf").write_text("passwd: files\ngroup: files\nhosts: files\n")
    return etc


def run_suite(variant, tree, lttng_build_dir, vdir, opts, timeout=DEFAULT_TIMEOUT, only=(),
              exact=False):
    """report.json's lttng_suite entry of `variant`; `only`: substrings of the script
    paths to run (all kernel scripts when empty), whole paths with `exact` (the
    retry: test_ns_contexts is a substring of test_ns_contexts_change)."""
    t0 = time.monotonic()
    sdir = Path(vdir) / "lttng-suite"
    sdir.mkdir(parents=True, exist_ok=True)
    tree_dir = tools.build(opts.cache)
    found = scripts.kernel_scripts(tree_dir)
    chosen = select(found, only, exact)
    if not chosen:
        raise HarnessError("usage", f"--lttng-suite-only {','.join(only)}: no kernel test "
                                    f"script matches (there are {len(found)})")
    files = rootfs.files(tree_dir)
    params = sdir / "suite-params"
    params.write_text(f"KSYMLAB_VARIANT={variant.name}\nKSYMLAB_SUITE_TIMEOUT={timeout}\n")
    etc = _etc(sdir / "etc")

    def initrd_for(left, n):
        listing = sdir / f"scripts-{n}"
        listing.write_text("\n".join(left) + "\n")
        text = guest.spec(lttng_build_dir, files, params, listing, etc)
        return image.pack(text, tree, None, sdir / f"suite-initramfs-{n}",
                                    variant.name, step="suite")

    say("suite", f"{variant.name}: {len(chosen)} of lttng-tools' kernel test scripts, "
                 f"LTTng {variant.lttng_version}")
    boots = guest.run(tree, initrd_for, chosen, sdir, opts, timeout)
    results = guest.results(boots, chosen, timeout)
    secs = {script: t for b in boots for script, t in b.seconds}    # a script's last run
    tests = [p.to_json() for r in results for p in r.points]
    out = {"lttng_version": variant.lttng_version, "kernel": kernel_release(tree),
           "tools": tools.TOOLS.version, "timeout_s": timeout, "boots": len(boots),
           "faults": [b.fault for b in boots if b.fault],
           "clocks": [b.clock for b in boots],
           "scripts": [{"script": r.script, "planned": r.planned, "ended": r.ended,
                        "pass": r.count("pass"), "fail": r.count("fail"),
                        "skip": r.count("skip"), "cannot_run": tap.cannot_run(r),
                        "seconds": secs.get(r.script)}
                       for r in results],
           "not_selected": [s for s in found if s not in chosen],
           "tests": tests, "seconds": round(time.monotonic() - t0, 1)}
    out = causes.annotate(out, variant.kernel_line, causes.load())
    n = {k: sum(t["result"] == k for t in tests) for k in ("pass", "fail", "skip")}
    say("suite", f"{variant.name}: {n['pass']} passed, {n['fail']} failed, {n['skip']} "
                 f"skipped in {out['seconds']} s")
    return out


def run_or_failure(variant, tree, lttng_build_dir, vdir, opts, timeout=DEFAULT_TIMEOUT,
                   only=(), exact=False):
    """run_suite, with a failed step (no source, a failed build) as one failed point."""
    try:
        return run_suite(variant, tree, lttng_build_dir, vdir, opts, timeout, only, exact)
    except HarnessError as err:
        if err.step in ("interrupted", "usage"):
            raise
        say("error", f"suite: {err.one_line()}")
        point = tap.SuitePoint("suite", 0, tap.FAILED, tap.NOT_RUN_DESC, err.one_line())
        return {"lttng_version": variant.lttng_version, "error": err.step,
                "tests": [point.to_json()]}
