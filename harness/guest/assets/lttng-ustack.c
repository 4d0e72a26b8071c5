// SPDX-License-Identifier: GPL-2.0
/*
 * ksymlab LTTng guest program: call getppid(2) from three nested frames,
 * so LTTng's callstack-user context on syscall_entry_getppid records this
 * stack, and print the return addresses this program records itself.
 * Built static with frame pointers, like ustack.c.
 */
#define _GNU_SOURCE		/* gettid() in ustack-frames.h */
#include <stdio.h>
#include <unistd.h>

static long ppid;

/* getppid(2) without libc, so no wrapper frame sits between level3 and the kernel. */
static __always_inline long raw_getppid(unsigned long *ip)
{
	long ret;

	/* *ip: the instruction after `syscall`, the user ip the kernel sees */
	__asm__ volatile("lea 1f(%%rip), %1\n\tsyscall\n1:"
			 : "=a"(ret), "=&r"(*ip)
			 : "a"(110L)
			 : "rcx", "r11", "memory");
	return ret;
}

/* The leaf action of level3 (ustack-frames.h): LTTng records this syscall's stack. */
static __always_inline int ustack_leaf(unsigned long *ip)
{
	ppid = raw_getppid(ip);
	__asm__ volatile("" ::: "memory");
	return ppid > 0 ? 0 : 1;
}

#include "ustack-frames.h"
