/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The three nested frames of the ksymlab user-stack guest programs
 * (ustack.c, lttng-ustack.c): level3, level2, level1 and main, each
 * recording the return address it was called with, and main printing them
 * as `ustack-expect` lines for the data channel. The harness names the
 * frames 0-3 of a captured stack level3, level2, level1, main: keep them so.
 *
 * Include this after defining the leaf action:
 *
 *	static __always_inline int ustack_leaf(void);
 *
 * which makes the system call whose user stack is captured and returns the
 * program's exit status. It must be inlined into level3 (as must anything
 * it calls on the way to the syscall instruction), so that level3 is the
 * innermost user frame, with no extra frame below it.
 */
#ifndef KSYMLAB_USTACK_FRAMES_H
#define KSYMLAB_USTACK_FRAMES_H

#include <stdio.h>
#include <unistd.h>

#define NOINLINE __attribute_noinline__

static unsigned long ret_addr[3];

static NOINLINE int level3(void)
{
	ret_addr[0] = (unsigned long)__builtin_return_address(0);
	return ustack_leaf();
}

static NOINLINE int level2(void)
{
	int ret;

	ret_addr[1] = (unsigned long)__builtin_return_address(0);
	ret = level3();
	__asm__ volatile("" ::: "memory");	/* keep the call a real call */
	return ret;
}

static NOINLINE int level1(void)
{
	int ret;

	ret_addr[2] = (unsigned long)__builtin_return_address(0);
	ret = level2();
	__asm__ volatile("" ::: "memory");
	return ret;
}

int main(void)
{
	int ret = level1();
	int i;

	for (i = 0; i < 3; i++)
		printf("ustack-expect pid=%d depth=%d ret=0x%lx\n", (int)getpid(),
		       i + 1, ret_addr[i]);
	return ret;
}

#endif
