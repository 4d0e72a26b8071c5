// SPDX-License-Identifier: GPL-2.0
/*
 * ksymlab guest program: read /proc/ksymlab/ustack from three nested
 * frames of a thread that is not the leader and print, next to what the
 * module captured, the return addresses and the frame-pointer walk this
 * program records itself (ustack-frames.h). Built static with frame pointers so that
 * the kernel's frame-pointer walk of the user stack can follow it.
 */
#define _GNU_SOURCE		/* gettid() in ustack-frames.h */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

/*
 * read(2) without libc: the libc wrapper may use %rbp as a scratch register,
 * which would cut the frame-pointer chain the kernel walks.
 */
static __always_inline long raw_read(int fd, void *buf, unsigned long len,
				     unsigned long *ip)
{
	long ret;

	/* *ip: the instruction after `syscall`, the user ip the kernel sees */
	__asm__ volatile("lea 1f(%%rip), %1\n\tsyscall\n1:"
			 : "=a"(ret), "=&r"(*ip)
			 : "a"(0L), "D"((long)fd), "S"(buf), "d"(len)
			 : "rcx", "r11", "memory");
	return ret;
}

/* The leaf action of level3 (ustack-frames.h): the module captures this read. */
static __always_inline int ustack_leaf(unsigned long *ip)
{
	static char buf[8192];
	ssize_t n;
	int fd;

	fd = open("/proc/ksymlab/ustack", O_RDONLY);
	if (fd < 0) {
		perror("open /proc/ksymlab/ustack");
		return 1;
	}
	n = raw_read(fd, buf, sizeof(buf) - 1, ip);
	close(fd);
	if (n < 0) {
		fprintf(stderr, "read /proc/ksymlab/ustack: error %ld\n", (long)-n);
		return 1;
	}
	buf[n] = '\0';
	fputs(buf, stdout);
	return 0;
}

#include "ustack-frames.h"
