import os
import subprocess
import tempfile

from harness import paths


def test_missing_package_is_reported():
    # As an unprivileged user the script must not try apt-get: it names what is missing.
    with tempfile.TemporaryDirectory() as d:
        os.chmod(d, 0o755)            # readable by the unprivileged user below
        lst = os.path.join(d, "packages.txt")
        with open(lst, "w") as f:
            f.write("# test list\ncoreutils\nksymlab-no-such-package\n")
        os.chmod(lst, 0o644)
        run = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
               str(paths.REPO / "harness" / "install-deps")]
        p = subprocess.run(run, capture_output=True, text=True,
                           env={**os.environ, "KSYMLAB_PACKAGE_LIST": lst})
        assert p.returncode == 3, p.stderr
        assert p.stderr.strip().splitlines()[-1] == (
            "ksymlab: deps: missing packages: ksymlab-no-such-package "
            "(run as root, or apt-get install them)")
        os.chmod(lst, 0o600)          # unreadable now: an error, not a silent success
        p = subprocess.run(run, capture_output=True, text=True,
                           env={**os.environ, "KSYMLAB_PACKAGE_LIST": lst})
        assert p.returncode == 3
        assert "cannot read package list" in p.stderr
