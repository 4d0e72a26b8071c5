// SPDX-License-Identifier: GPL-2.0
/*
 * ksymlab guest scenario task: set this process's own scheduling policy
 * with sched_setattr(2), read it back with sched_getattr(2), print one
 * line for the data channel and sleep in pause() without using CPU.
 *
 *   ksymlab-sched fifo|rr <priority 1..99>
 *   ksymlab-sched other|batch|idle <nice -20..19>
 *   ksymlab-sched deadline <runtime_ns> <deadline_ns> <period_ns>
 *
 * Success: stdout gets `task pid=<pid> policy=<name> value=<v>` (deadline
 * adds `deadline=<ns> period=<ns>`; value is the runtime), written only once
 * the policy is in effect; then stdout and stderr are pointed at /dev/null,
 * so whoever reads the line (a fifo in the guest init) sees EOF from us.
 * Failure: one line `ksymlab-sched: <what failed>: <strerror>` on stderr and
 * a non-zero exit (2: bad arguments, 1: a system call failed). Arguments
 * are checked completely before any system call, so `--help` and bad
 * arguments never touch the caller's scheduling.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sched-attr.h"

static void usage(void)
{
	fputs("usage: ksymlab-sched fifo|rr PRIORITY (1..99)\n"
	      "       ksymlab-sched other|batch|idle NICE (-20..19)\n"
	      "       ksymlab-sched deadline RUNTIME_NS DEADLINE_NS PERIOD_NS\n"
	      "Sets its own policy, prints `task pid=... policy=... value=...`, then pauses.\n",
	      stdout);
}

static int die(int status, const char *what, int err)
{
	fprintf(stderr, "ksymlab-sched: %s: %s\n", what, strerror(err));
	return status;
}

/* A whole decimal argument within [min, max], or -1 with *what filled in. */
static int number(const char *s, long long min, long long max, long long *out,
		  const char *name, char *what, size_t len)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 10);
	if (errno || end == s || *end) {
		snprintf(what, len, "%s %s is not a number", name, s);
		return -1;
	}
	if (*out < min || *out > max) {
		snprintf(what, len, "%s %s out of range %lld..%lld", name, s, min, max);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct ksymlab_sched_attr attr, got;
	long long v, deadline = 0, period = 0;
	char what[160];
	int i;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage();
		return 0;
	}
	if (argc < 3)
		return die(2, "missing arguments (see --help)", EINVAL);
	i = lookup_policy(argv[1]);
	if (i < 0) {
		snprintf(what, sizeof(what), "unknown policy %s", argv[1]);
		return die(2, what, EINVAL);
	}
	if (argc != (policies[i].kind == DL ? 5 : 3)) {
		snprintf(what, sizeof(what), "%s takes %s", argv[1],
			 policies[i].kind == DL ? "RUNTIME_NS DEADLINE_NS PERIOD_NS" :
			 policies[i].kind == RT ? "one PRIORITY" : "one NICE");
		return die(2, what, EINVAL);
	}

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.sched_policy = policies[i].policy;
	switch (policies[i].kind) {
	case RT:
		if (number(argv[2], 1, 99, &v, "priority", what, sizeof(what)))
			return die(2, what, EINVAL);
		attr.sched_priority = v;
		break;
	case NICE:
		if (number(argv[2], -20, 19, &v, "nice", what, sizeof(what)))
			return die(2, what, EINVAL);
		attr.sched_nice = v;
		break;
	case DL:
		/* __checkparam_dl(), kernel/sched/deadline.c: runtime >= 2^DL_SCALE
		 * (1024 ns), runtime <= deadline <= period; the kernel checks the
		 * period range and the bandwidth itself. */
		if (number(argv[2], 1024, LLONG_MAX, &v, "runtime_ns", what, sizeof(what)) ||
		    number(argv[3], v, LLONG_MAX, &deadline, "deadline_ns", what, sizeof(what)) ||
		    number(argv[4], deadline, LLONG_MAX, &period, "period_ns", what, sizeof(what)))
			return die(2, what, EINVAL);
		attr.sched_runtime = v;
		attr.sched_deadline = deadline;
		attr.sched_period = period;
		break;
	}

	/*
	 * 6.1's __setscheduler_params() takes sched_nice into static_prio only
	 * for SCHED_NORMAL and SCHED_BATCH (fair_policy()), not SCHED_IDLE:
	 * set the nice value first so that static_prio, normal_prio and prio
	 * all follow it whatever the policy.
	 */
	if (policies[i].kind == NICE && setpriority(PRIO_PROCESS, 0, (int)v)) {
		snprintf(what, sizeof(what), "setpriority nice %lld", v);
		return die(1, what, errno);
	}
	if (syscall(SYS_sched_setattr, 0, &attr, 0)) {
		snprintf(what, sizeof(what), "sched_setattr %s %s", argv[1], argv[2]);
		return die(1, what, errno);
	}
	memset(&got, 0, sizeof(got));
	if (syscall(SYS_sched_getattr, 0, &got, sizeof(got), 0))
		return die(1, "sched_getattr", errno);
	/*
	 * Since 857b158dc5e8 ("sched/eevdf: Use sched_attr::sched_runtime to
	 * set request/slice suggestion", 6.12) sched_getattr() reports a fair
	 * task's slice (the base slice when none was requested) as
	 * sched_runtime; 6.1 reports 0. So runtime is compared for deadline
	 * and real-time tasks only, where both kernels report what was set.
	 */
	if (policies[i].kind == NICE)
		got.sched_runtime = attr.sched_runtime;
	if (got.sched_policy != attr.sched_policy || got.sched_nice != attr.sched_nice ||
	    got.sched_priority != attr.sched_priority ||
	    got.sched_runtime != attr.sched_runtime ||
	    got.sched_deadline != attr.sched_deadline || got.sched_period != attr.sched_period) {
		snprintf(what, sizeof(what), "sched_getattr reads back policy %u nice %d "
			 "priority %u runtime %llu deadline %llu period %llu",
			 got.sched_policy, got.sched_nice, got.sched_priority,
			 (unsigned long long)got.sched_runtime,
			 (unsigned long long)got.sched_deadline,
			 (unsigned long long)got.sched_period);
		return die(1, what, EPROTO);
	}

	if (policies[i].kind == DL)
		printf("task pid=%d policy=%s value=%lld deadline=%lld period=%lld\n",
		       (int)getpid(), argv[1], v, deadline, period);
	else
		printf("task pid=%d policy=%s value=%lld\n", (int)getpid(), argv[1], v);
	if (fflush(stdout) || ferror(stdout))
		return die(1, "write to stdout", errno);
	return detach_and_pause();
}
