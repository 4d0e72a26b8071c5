"""What a job takes from the worker that runs it: a writable cache and a short
environment.

The job's child (and through it make, QEMU, gdb and drgn) gets only the
variables on the allowlist below: the worker's DASK_* settings, its
PYTHONPATH, LD_PRELOAD, an ssh agent's socket or a key's path have no business
there. KSYMLAB_CLUSTER and KSYMLAB_CLUSTER_CERTS stay behind too: a child runs
its variant here, it never talks to a scheduler.

The worker's user owns its cache: a job whose cache it cannot write fails at
once with one line saying so (docs/cluster.md, least privilege).
"""

import os
import pwd
import tempfile

KEEP = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR",
        "http_proxy", "https_proxy", "no_proxy", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY")
KEEP_PREFIXES = ("LC_", "KSYMLAB_")
DROP = ("KSYMLAB_CLUSTER", "KSYMLAB_CLUSTER_CERTS")


def child_env(env):
    """The allowlisted part of the mapping `env` (a new dict)."""
    return {k: v for k, v in env.items()
            if (k in KEEP or k.startswith(KEEP_PREFIXES)) and k not in DROP}


def _user():
    uid = os.geteuid()
    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def cache_problem(root):
    """'' when this process can create files in the cache `root`; else why not."""
    try:
        root.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".writable-", dir=root)
        os.close(fd)
        os.unlink(probe)
        return ""
    except OSError as e:
        return (f"this worker's cache {root} is not writable by {_user()}: {e.strerror} "
                f"(chown -R that user {root}, or start the worker with KSYMLAB_CACHE on "
                "a directory it owns)")
