// SPDX-License-Identifier: GPL-2.0
/*
 * ksymlab guest scenario process with several threads, each in its own
 * scheduling policy, so that a thread's priority differs from its group
 * leader's and a sampler keyed by tgid, or reading the leader, is wrong.
 *
 *   ksymlab-threads group POLICY VALUE [POLICY VALUE ...]
 *	One thread per pair; the first pair is the main thread (the group
 *	leader). POLICY is other|batch|idle (VALUE: nice -20..19) or fifo|rr
 *	(VALUE: priority 1..99).
 *   ksymlab-threads pi NICE PRIORITY [PRIORITY ...]
 *	Priority inheritance: the main thread, SCHED_OTHER at nice NICE, takes
 *	a PI futex; one SCHED_FIFO thread per PRIORITY blocks on it with
 *	FUTEX_LOCK_PI, so the kernel boosts the holder (rt_mutex PI).
 *   ksymlab-threads pi POLICY VALUE WAITER [WAITER ...]
 *	The same with the holder in POLICY (as for group) and each WAITER one
 *	of `fifo PRIORITY`, `rr PRIORITY` or `deadline RUNTIME DEADLINE PERIOD`
 *	(ns): a SCHED_FIFO holder boosted by a higher SCHED_FIFO waiter, or by
 *	a SCHED_DEADLINE one, runs at a prio its rt_priority does not give.
 *
 * Success: stdout gets one line per thread, the leader first:
 *   task pid=<tid> tgid=<tgid> policy=<name> value=<v> [pi_owner=<tid>]
 * written only once every thread is in its final policy (and, for pi,
 * every waiter is blocked on the futex); then stdout and stderr are
 * pointed at /dev/null and every thread sleeps in pause(). Failure: one
 * line `ksymlab-threads: <what failed>: <strerror>` on stderr and exit
 * status 2 (bad arguments) or 1 (a system call failed). Arguments are
 * checked completely before any system call.
 *
 * SIGUSR1 wakes the group leader alone: every other thread blocks it and the
 * leader's handler does nothing, so its pause() returns and it sleeps again.
 * The LTTng guest uses it to make a PI holder leave the CPU once while the
 * trace records (a SIGSTOP would stop the waiters too: they would leave the
 * rt_mutex and the holder would lose its boost).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sched-attr.h"

#define MAX_THREADS 16

struct thread {
	int policy;		/* index into policies[] */
	long value;		/* nice, priority, or the deadline runtime (ns) */
	long long deadline, period;	/* SCHED_DEADLINE only */
	pid_t tid;
	int pi_waiter;
	int err;		/* errno of a failed step, 0 when in policy */
	const char *what;	/* the step that failed */
	int ready;
};

static struct thread threads[MAX_THREADS];
static int nr_threads;
static uint32_t pi_futex;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;

static int die(int status, const char *what, int err)
{
	fprintf(stderr, "ksymlab-threads: %s: %s\n", what, strerror(err));
	return status;
}

static void usage(void)
{
	fputs("usage: ksymlab-threads group POLICY VALUE [POLICY VALUE ...]\n"
	      "       ksymlab-threads pi NICE PRIORITY [PRIORITY ...]\n"
	      "       ksymlab-threads pi POLICY VALUE WAITER [WAITER ...]\n"
	      "WAITER: fifo|rr PRIORITY, or deadline RUNTIME DEADLINE PERIOD (ns).\n"
	      "POLICY: other|batch|idle (VALUE nice -20..19), fifo|rr (VALUE 1..99).\n",
	      stdout);
}

static int parse_value(const char *s, int rt, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	if (errno || end == s || *end)
		return -1;
	return rt ? (*out < 1 || *out > 99 ? -1 : 0) :
		    (*out < -20 || *out > 19 ? -1 : 0);
}

/* A whole number within [min, max], or -1. */
static int parse_ll(const char *s, long long min, long long max, long long *out)
{
	char *end;

	errno = 0;
	*out = strtoll(s, &end, 10);
	return errno || end == s || *end || *out < min || *out > max ? -1 : 0;
}

/*
 * `pi POLICY VALUE WAITER...`: the holder in argv[0..1], then the waiters;
 * 0, or -1 with what filled in. A deadline waiter's parameters are checked
 * as ksymlab-sched checks them (__checkparam_dl()).
 */
static int parse_pi_policies(int argc, char **argv, char *what, size_t len)
{
	long long rt, dl, per;
	int i = 0;

	while (i < argc) {
		struct thread *t = &threads[nr_threads];
		int kind;

		if (nr_threads == MAX_THREADS) {
			snprintf(what, len, "more than %d threads", MAX_THREADS);
			return -1;
		}
		t->policy = lookup_policy(argv[i]);
		kind = t->policy < 0 ? -1 : (int)policies[t->policy].kind;
		if (kind < 0 || (i == 0 && kind == DL) || (i > 0 && kind == NICE)) {
			snprintf(what, len, "%s policy %s", i ? "waiter" : "holder", argv[i]);
			return -1;
		}
		if (i + (kind == DL ? 3 : 1) >= argc) {
			snprintf(what, len, "%s lacks its values", argv[i]);
			return -1;
		}
		t->pi_waiter = i > 0;
		if (kind == DL) {
			if (parse_ll(argv[i + 1], 1024, LLONG_MAX, &rt) ||
			    parse_ll(argv[i + 2], rt, LLONG_MAX, &dl) ||
			    parse_ll(argv[i + 3], dl, LLONG_MAX, &per)) {
				snprintf(what, len, "deadline %s %s %s out of range",
					 argv[i + 1], argv[i + 2], argv[i + 3]);
				return -1;
			}
			t->value = rt;
			t->deadline = dl;
			t->period = per;
			i += 4;
		} else {
			if (parse_value(argv[i + 1], kind == RT, &t->value)) {
				snprintf(what, len, "%s value %s out of range", argv[i],
					 argv[i + 1]);
				return -1;
			}
			i += 2;
		}
		nr_threads++;
	}
	if (nr_threads < 2) {
		snprintf(what, len, "pi takes a holder and at least one waiter");
		return -1;
	}
	return 0;
}

/* Put the calling thread in t's policy and read it back. */
static int set_policy(struct thread *t)
{
	struct ksymlab_sched_attr attr, got;

	t->tid = syscall(SYS_gettid);
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.sched_policy = policies[t->policy].policy;
	if (policies[t->policy].kind == RT) {
		attr.sched_priority = t->value;
	} else if (policies[t->policy].kind == DL) {
		attr.sched_runtime = t->value;
		attr.sched_deadline = t->deadline;
		attr.sched_period = t->period;
	} else {
		attr.sched_nice = t->value;
		/* as ksymlab-sched: static_prio follows nice for SCHED_IDLE too */
		if (setpriority(PRIO_PROCESS, t->tid, (int)t->value)) {
			t->what = "setpriority";
			return t->err = errno;
		}
	}
	if (syscall(SYS_sched_setattr, 0, &attr, 0)) {
		t->what = "sched_setattr";
		return t->err = errno;
	}
	memset(&got, 0, sizeof(got));
	if (syscall(SYS_sched_getattr, 0, &got, sizeof(got), 0)) {
		t->what = "sched_getattr";
		return t->err = errno;
	}
	if (got.sched_policy != attr.sched_policy || got.sched_nice != attr.sched_nice ||
	    got.sched_priority != attr.sched_priority) {
		t->what = "sched_getattr reads back another policy";
		return t->err = EPROTO;
	}
	return 0;
}

static void mark_ready(struct thread *t)
{
	pthread_mutex_lock(&lock);
	t->ready = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
}

static void wake_up(int sig)
{
	(void)sig;
}

/*
 * Block SIGUSR1 before the threads start (unblock 0), so that they inherit it
 * blocked, and unblock it in the leader once they all run (unblock 1).
 */
static int leader_wakes_on_usr1(int unblock)
{
	struct sigaction sa;
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	if (unblock)
		return pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = wake_up;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGUSR1, &sa, NULL))
		return errno;
	return pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static void *thread_main(void *arg)
{
	struct thread *t = arg;

	if (set_policy(t)) {
		mark_ready(t);
		return NULL;
	}
	if (t->pi_waiter) {
		mark_ready(t);
		/* Blocks: the main thread holds the lock and never lets go. */
		syscall(SYS_futex, &pi_futex, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0);
		fprintf(stderr, "ksymlab-threads: FUTEX_LOCK_PI returned: %s\n",
			strerror(errno));
		exit(1);
	}
	mark_ready(t);
	for (;;)
		pause();
	return NULL;
}

/* The thread's state letter from /proc/self/task/<tid>/stat, or 0. */
static char thread_state(pid_t tid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/*
 * Every waiter is asleep in FUTEX_LOCK_PI: the futex word has the waiters
 * bit and each waiter thread sleeps. futex_lock_pi() enqueues the waiter
 * on the rt_mutex, which boosts the owner (task_blocks_on_rt_mutex() ->
 * rt_mutex_adjust_prio()), before it sleeps.
 */
static int waiters_blocked(void)
{
	int i;

	if (!(__atomic_load_n(&pi_futex, __ATOMIC_SEQ_CST) & FUTEX_WAITERS))
		return 0;
	for (i = 1; i < nr_threads; i++)
		if (thread_state(threads[i].tid) != 'S')
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	char what[160];
	int pi, i, tries, err;
	pthread_t th;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage();
		return 0;
	}
	if (argc < 3)
		return die(2, "missing arguments (see --help)", EINVAL);
	pi = !strcmp(argv[1], "pi");
	if (!pi && strcmp(argv[1], "group")) {
		snprintf(what, sizeof(what), "unknown mode %s (group or pi)", argv[1]);
		return die(2, what, EINVAL);
	}
	if (pi && lookup_policy(argv[2]) >= 0) {
		if (parse_pi_policies(argc - 2, argv + 2, what, sizeof(what)))
			return die(2, what, EINVAL);
	} else if (pi) {
		if (argc < 4 || argc - 2 > MAX_THREADS)
			return die(2, "pi takes NICE and 1..15 PRIORITY", EINVAL);
		for (i = 2; i < argc; i++) {
			struct thread *t = &threads[nr_threads++];

			t->policy = lookup_policy(i == 2 ? "other" : "fifo");
			t->pi_waiter = i > 2;
			if (parse_value(argv[i], i > 2, &t->value)) {
				snprintf(what, sizeof(what), "%s %s out of range",
					 i == 2 ? "nice" : "priority", argv[i]);
				return die(2, what, EINVAL);
			}
		}
	} else {
		if ((argc - 2) % 2 || (argc - 2) / 2 > MAX_THREADS)
			return die(2, "group takes 1..16 POLICY VALUE pairs", EINVAL);
		for (i = 2; i < argc; i += 2) {
			struct thread *t = &threads[nr_threads++];

			t->policy = lookup_policy(argv[i]);
			/* no deadline parameters here: deadline is unknown */
			if (t->policy < 0 || policies[t->policy].kind == DL) {
				snprintf(what, sizeof(what), "unknown policy %s", argv[i]);
				return die(2, what, EINVAL);
			}
			if (parse_value(argv[i + 1], policies[t->policy].kind == RT,
					&t->value)) {
				snprintf(what, sizeof(what), "%s value %s out of range",
					 argv[i], argv[i + 1]);
				return die(2, what, EINVAL);
			}
		}
	}

	if (set_policy(&threads[0]))
		return die(1, threads[0].what, threads[0].err);
	err = leader_wakes_on_usr1(0);
	if (err)
		return die(1, "block SIGUSR1", err);
	/* The leader owns the PI futex: the word holds its tid, uncontended. */
	if (pi)
		__atomic_store_n(&pi_futex, (uint32_t)threads[0].tid, __ATOMIC_SEQ_CST);
	for (i = 1; i < nr_threads; i++) {
		err = pthread_create(&th, NULL, thread_main, &threads[i]);
		if (err)
			return die(1, "pthread_create", err);
		pthread_mutex_lock(&lock);
		while (!threads[i].ready)
			pthread_cond_wait(&cond, &lock);
		pthread_mutex_unlock(&lock);
		if (threads[i].err)
			return die(1, threads[i].what, threads[i].err);
	}
	/* A bounded wait (not a timing check): 10000 rounds of 1 ms at most. */
	for (tries = 0; pi && !waiters_blocked(); tries++) {
		if (tries == 10000)
			return die(1, "the PI waiters never blocked on the futex", ETIMEDOUT);
		usleep(1000);
	}

	for (i = 0; i < nr_threads; i++) {
		printf("task pid=%d tgid=%d policy=%s value=%ld", (int)threads[i].tid,
		       (int)threads[0].tid, policies[threads[i].policy].name, threads[i].value);
		if (policies[threads[i].policy].kind == DL)
			printf(" deadline=%lld period=%lld", threads[i].deadline,
			       threads[i].period);
		if (threads[i].pi_waiter)
			printf(" pi_owner=%d", (int)threads[0].tid);
		putchar('\n');
	}
	if (fflush(stdout) || ferror(stdout))
		return die(1, "write to stdout", errno);
	err = leader_wakes_on_usr1(1);
	if (err)
		return die(1, "unblock SIGUSR1", err);
	return detach_and_pause();
}
