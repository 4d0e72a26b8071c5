// SPDX-License-Identifier: GPL-2.0
/*
 * ksymlab guest program: read /proc/ksymlab/ustack from three nested
 * frames and print, next to what the module captured, the return addresses
 * this program records itself. Built static with frame pointers so that
 * the kernel's frame-pointer walk of the user stack can follow it.
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

static unsigned long ret_addr[3];

/*
 * read(2) without libc: the libc wrapper may use %rbp as a scratch register,
 * which would cut the frame-pointer chain the kernel walks.
 */
static inline long raw_read(int fd, void *buf, unsigned long len)
{
	long ret;

	__asm__ volatile("syscall"
			 : "=a"(ret)
			 : "a"(0L), "D"((long)fd), "S"(buf), "d"(len)
			 : "rcx", "r11", "memory");
	return ret;
}

static NOINLINE int level3(void)
{
	static char buf[8192];
	ssize_t n;
	int fd;

	ret_addr[0] = (unsigned long)__builtin_return_address(0);
	fd = open("/proc/ksymlab/ustack", O_RDONLY);
	if (fd < 0) {
		perror("open /proc/ksymlab/ustack");
		return 1;
	}
	n = raw_read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		fprintf(stderr, "read /proc/ksymlab/ustack: error %ld\n", (long)-n);
		return 1;
	}
	buf[n] = '\0';
	fputs(buf, stdout);
	return 0;
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
