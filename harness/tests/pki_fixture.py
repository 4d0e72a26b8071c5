"""Certificates for the cluster tests, made as a user makes them: by the command."""

import subprocess
import sys

from harness import paths


def cluster_certs(directory):
    """`python3 -m harness cluster-certs DIRECTORY`; returns DIRECTORY."""
    p = subprocess.run([sys.executable, "-m", "harness", "cluster-certs", str(directory)],
                       cwd=paths.REPO, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    return directory
