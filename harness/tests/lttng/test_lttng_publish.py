"""harness/lttng/supply/modbuild.py publish(): runs that share a cache publish the same
variant's build at once (a cold make check beside a run of one's own); each must
get the link, none may raise (a fixed temporary name once made the second fail
with EEXIST and abort its whole run)."""

import os
import subprocess
import sys
import threading

from harness.lttng.supply import modbuild


def test_concurrent_publishers_of_one_variant_all_succeed(tmp_path):
    outs = [tmp_path / "modules" / f"b{i}" for i in range(2)]
    for o in outs:
        o.mkdir(parents=True)
    errors, start = [], threading.Barrier(16)

    def publish(i):
        start.wait()
        try:
            for _ in range(50):
                modbuild.publish(outs[i % 2], tmp_path, "2.13.18/exports")
        except Exception as e:      # the failure this test is about
            errors.append(e)

    threads = [threading.Thread(target=publish, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    link = tmp_path / "lttng" / "by-variant" / "2.13.18-exports"
    assert os.readlink(link) in {str(o) for o in outs}
    # nothing left behind but the link
    assert sorted(p.name for p in link.parent.iterdir()) == ["2.13.18-exports"]


def test_another_process_publishing_meanwhile(tmp_path):
    out = tmp_path / "modules" / "b"
    out.mkdir(parents=True)
    code = ("import sys; from harness.lttng.supply import modbuild\n"
            "for _ in range(200): modbuild.publish(sys.argv[1], sys.argv[2], 'exports')\n")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(out), str(tmp_path)],
                              cwd=modbuild.paths.REPO, stderr=subprocess.PIPE, text=True)
             for _ in range(3)]
    results = [(p.wait(timeout=120), p.stderr.read()) for p in procs]
    assert results == [(0, "")] * 3
    assert os.readlink(tmp_path / "lttng" / "by-variant" / "exports") == str(out)
