// SPDX-License-Identifier: GPL-2.0
/*
 * ksymlab LTTng guest program: call getppid(2) from three nested frames,
 * so LTTng's callstack-user context on syscall_entry_getppid records this
 * stack, and print the return addresses this program records itself.
 * Built static with frame pointers, like ustack.c.
 */
#include <stdio.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static unsigned long ret_addr[3];
static long ppid;

/* getppid(2) without libc, so no wrapper frame sits between level3 and the kernel. */
static inline long raw_getppid(void)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(110L)
			 : "rcx", "r11", "memory");
	return ret;
}

static NOINLINE int level3(void)
{
	ret_addr[0] = (unsigned long)__builtin_return_address(0);
	ppid = raw_getppid();
	__asm__ volatile("" ::: "memory");
	return ppid > 0 ? 0 : 1;
}

static NOINLINE int level2(void)
{
	int ret;

	ret_addr[1] = (unsigned long)__builtin_return_address(0);
	ret = level3();
	__asm__ volatile("" ::: "memory");
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
