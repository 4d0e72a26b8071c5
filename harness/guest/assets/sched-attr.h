/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What ksymlab-sched (sched.c) and ksymlab-threads (threads.c) share to set
 * a scheduling policy with sched_setattr(2): the policy numbers glibc may
 * lack, the kernel's struct sched_attr and one table of the policy names;
 * and how both end once their report is written (detach_and_pause()).
 *
 * glibc 2.36 has no sched_setattr() wrapper: struct sched_attr is the
 * kernel's (include/uapi/linux/sched/types.h, SCHED_ATTR_SIZE_VER0 fields).
 */
#ifndef KSYMLAB_SCHED_ATTR_H
#define KSYMLAB_SCHED_ATTR_H

#include <fcntl.h>
#include <linux/types.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#ifndef SCHED_BATCH
#define SCHED_BATCH 3
#endif
#ifndef SCHED_IDLE
#define SCHED_IDLE 5
#endif
#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#endif

struct ksymlab_sched_attr {
	__u32 size;
	__u32 sched_policy;
	__u64 sched_flags;
	__s32 sched_nice;	/* SCHED_OTHER, SCHED_BATCH */
	__u32 sched_priority;	/* SCHED_FIFO, SCHED_RR */
	__u64 sched_runtime;	/* SCHED_DEADLINE, ns */
	__u64 sched_deadline;
	__u64 sched_period;
};

/* What a policy's one value is: a nice value, a real-time priority, or deadline parameters. */
enum kind { NICE, RT, DL };

static const struct {
	const char *name;
	int policy;
	enum kind kind;
} policies[] = {
	{ "other", SCHED_OTHER, NICE },
	{ "batch", SCHED_BATCH, NICE },
	{ "idle", SCHED_IDLE, NICE },
	{ "fifo", SCHED_FIFO, RT },
	{ "rr", SCHED_RR, RT },
	{ "deadline", SCHED_DEADLINE, DL },
};

/* The index of the policy called name in policies[], or -1. */
static inline int lookup_policy(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(policies); i++)
		if (!strcmp(name, policies[i].name))
			return i;
	return -1;
}

/*
 * Once the report is written and flushed: point stdout and stderr at
 * /dev/null, so that whoever reads the report (a fifo in the guest init)
 * sees EOF once every earlier task has reported too, and sleep in pause()
 * without using CPU. Returns (1) only when /dev/null cannot be set up.
 */
static inline int detach_and_pause(void)
{
	int fd = open("/dev/null", O_RDWR);

	if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0 || dup2(fd, STDERR_FILENO) < 0)
		return 1;
	if (fd > STDERR_FILENO)
		close(fd);
	for (;;)
		pause();
}

#endif
