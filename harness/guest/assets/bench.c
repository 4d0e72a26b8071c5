// SPDX-License-Identifier: GPL-2.0
/*
 * ksymlab guest benchmark: load the probe module with finit_module(2),
 * timing the syscall, read /proc/ksymlab/bench (which times task_prio()
 * calls inside the kernel), unload it, and repeat. Under QEMU -icount the
 * guest clock counts instructions, so the figures repeat from run to run.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	const char *ko = argc > 1 ? argv[1] : "/lib/modules/ksymlab_probe.ko";
	int rounds = argc > 2 ? atoi(argv[2]) : 3;
	static char buf[4096];
	int i;

	for (i = 0; i < rounds; i++) {
		long long t0, t1;
		ssize_t n;
		int fd;

		fd = open(ko, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			perror(ko);
			return 1;
		}
		t0 = now_ns();
		if (syscall(SYS_finit_module, fd, "", 0)) {
			perror("finit_module");
			return 1;
		}
		t1 = now_ns();
		close(fd);
		printf("bench kind=load calls=1 ns=%lld round=%d\n", t1 - t0, i);

		fd = open("/proc/ksymlab/bench", O_RDONLY);
		if (fd < 0) {
			perror("/proc/ksymlab/bench");
			return 1;
		}
		while ((n = read(fd, buf, sizeof(buf) - 1)) > 0) {
			buf[n] = '\0';
			fputs(buf, stdout);
		}
		close(fd);
		if (syscall(SYS_delete_module, "ksymlab_probe", O_NONBLOCK)) {
			perror("delete_module");
			return 1;
		}
	}
	return 0;
}
