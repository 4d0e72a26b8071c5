// SPDX-License-Identifier: GPL-2.0
/*
 * ksymlab guest program: write TEXT to FILE as a SCHED_FIFO task.
 *
 *   ksymlab-rtwrite PRIORITY FILE TEXT
 *
 * For sysctls whose handler computes with the writer's policy: written by a
 * real-time task, vm/dirty_bytes sets global_wb_domain.dirty_limit to the
 * thresh domain_dirty_limits() lifts for real-time tasks (thresh + thresh / 4
 * + dirty_limit / 32, mm/page-writeback.c writeback_set_ratelimit()), so the
 * dirty limit differs from the thresholds a normal writer gets.
 * Exit 0 once written; 2 for bad arguments, 1 (one line on stderr) when a
 * system call fails.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int die(int status, const char *what, int err)
{
	fprintf(stderr, "ksymlab-rtwrite: %s: %s\n", what, strerror(err));
	return status;
}

int main(int argc, char **argv)
{
	struct sched_param sp;
	char *end;
	long prio;
	size_t len;
	int fd;

	if (argc != 4)
		return die(2, "usage: ksymlab-rtwrite PRIORITY FILE TEXT", EINVAL);
	errno = 0;
	prio = strtol(argv[1], &end, 10);
	if (errno || end == argv[1] || *end || prio < 1 || prio > 99)
		return die(2, "PRIORITY must be 1..99", EINVAL);
	memset(&sp, 0, sizeof(sp));
	sp.sched_priority = prio;
	if (sched_setscheduler(0, SCHED_FIFO, &sp))
		return die(1, "sched_setscheduler SCHED_FIFO", errno);
	fd = open(argv[2], O_WRONLY);
	if (fd < 0)
		return die(1, argv[2], errno);
	len = strlen(argv[3]);
	if (write(fd, argv[3], len) != (ssize_t)len) {
		int err = errno;

		close(fd);
		return die(1, argv[2], err);
	}
	if (close(fd))
		return die(1, argv[2], errno);
	return 0;
}
