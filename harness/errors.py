"""One exception type for every step, each step with its own exit status."""

# Exit statuses of `python3 -m harness`; README.md lists the same table.
EXIT = {
    "verdict": 1,        # the run completed and some check disagreed
    "usage": 2,
    "deps": 3,           # a required host tool is missing
    "extract": 10,
    "patch": 11,
    "configure": 12,
    "build": 13,
    "cache": 14,         # a cache entry was evicted before the run could hold it
    "module": 20,
    "initramfs": 21,
    "symcheck": 22,      # symcheck (shared by every variant) could not be built
    "lttng": 23,         # LTTng could not be fetched, built or packed for the guest
    "suite": 24,         # lttng-tools' tests could not be fetched, built or packed
    "boot": 30,          # QEMU could not start or exited unexpectedly
    "panic": 31,
    "oops": 32,
    "hang": 33,
    "timeout": 34,
    "guest": 35,         # the guest script reported an error
    "warning": 36,       # the guest kernel printed a WARNING (lockdep included)
    "reboot": 37,        # the guest reset before it finished (QEMU runs with -no-reboot)
    "gdb": 40,
    "verify": 41,        # a result could not be parsed or compared
    "vmcore": 42,        # QEMU could not write the vmcore (recorded as a failing check)
    "drgn": 43,          # drgn could not read the vmcore (recorded as a failing check)
    "cluster": 50,       # --cluster: the Dask scheduler is unreachable or was lost, a job failed there
    "mutant": 60,        # harness.tools.mutants: a mutant could not be applied or built
    "mutants": 61,       # harness.tools.mutants: an unmutated baseline run failed
    "internal": 70,      # a bug in the harness (traceback in a file, one line on stderr)
    "interrupted": 130,  # Ctrl-C or SIGTERM: every build, guest and gdb was stopped
}


class HarnessError(Exception):
    """A failed step: `step` names it and selects the exit status."""

    def __init__(self, step, message, log=None, excerpt=None):
        super().__init__(message)
        self.step = step
        self.message = message
        self.log = log
        self.excerpt = excerpt      # console lines around a guest fault

    @property
    def exit_status(self):
        return EXIT.get(self.step, 1)

    def one_line(self):
        where = f" (log: {self.log})" if self.log else ""
        first = self.message.strip().splitlines()[0] if self.message.strip() else "failed"
        return f"ksymlab: {self.step}: {first}{where}"
