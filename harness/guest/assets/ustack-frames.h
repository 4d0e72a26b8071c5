/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The nested frames of the ksymlab user-stack guest programs (ustack.c,
 * lttng-ustack.c), run in a thread that is not its process's leader, so a
 * sampler that records the thread group id instead of the thread id is
 * caught. ustack_thread calls level1(), level1() level2(), level2() level3(),
 * each recording the return address it was called with; level3 also walks its
 * own frame-pointer chain to the outermost frame, so that the whole captured
 * stack is compared with something independent, not only the frames this
 * program knows. main prints, for the data channel:
 *
 *	ustack-expect pid=TID tgid=TGID depth=D ret=ADDR	D = 1..3
 *	ustack-walk pid=TID idx=I ip=ADDR			I = 0..n-1
 *
 * The harness names the frames 0-4 of a captured stack level3, level2,
 * level1, ustack_thread, start_thread (glibc's): keep them so.
 *
 * Include this after defining the leaf action:
 *
 *	static __always_inline int ustack_leaf(unsigned long *ip);
 *
 * which makes the system call whose user stack is captured, stores in *ip
 * the address of the instruction after its syscall instruction (the user ip
 * the kernel sees) and returns the program's exit status. It must be inlined
 * into level3 (as must anything it calls on the way to the syscall
 * instruction), so that level3 is the innermost user frame.
 */
#ifndef KSYMLAB_USTACK_FRAMES_H
#define KSYMLAB_USTACK_FRAMES_H

#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define NOINLINE __attribute_noinline__
/* KSYMLAB_MAX_FRAMES (probe-module/ksymlab.h): the most a sampler keeps. */
#define USTACK_MAX_FRAMES 32

static unsigned long ret_addr[3];
static unsigned long walk[USTACK_MAX_FRAMES];
static int nr_walk;
static pid_t thread_id;

/*
 * Read our own memory through a pipe: write(2) from an unmapped address fails
 * with EFAULT instead of faulting (process_vm_readv() would need
 * CROSS_MEMORY_ATTACH, which the guest kernels lack).
 */
static int self_pipe[2] = { -1, -1 };

static int read_self(unsigned long addr, void *buf, size_t len)
{
	if (write(self_pipe[1], (void *)addr, len) != (ssize_t)len)
		return -1;
	return read(self_pipe[0], buf, len) == (ssize_t)len ? 0 : -1;
}

/*
 * The frame-pointer chain from level3's frame, by the rules of the kernel's
 * user-stack walk (arch_stack_walk_user() in arch/x86/kernel/stacktrace.c):
 * stop at an unreadable frame, a frame below the stack pointer or a zero
 * return address. Written here, in user space, so it shares no code with
 * the walk it checks.
 */
static NOINLINE void walk_frames(unsigned long fp, unsigned long sp)
{
	unsigned long frame[2];		/* saved frame pointer, return address */

	while (nr_walk < USTACK_MAX_FRAMES) {
		if (read_self(fp, frame, sizeof(frame)))
			break;
		if (fp < sp || !frame[1])
			break;
		walk[nr_walk++] = frame[1];
		fp = frame[0];
	}
}

static NOINLINE int level3(void)
{
	unsigned long sp;

	ret_addr[0] = (unsigned long)__builtin_return_address(0);
	thread_id = gettid();
	__asm__ volatile("mov %%rsp, %0" : "=r"(sp));
	nr_walk = 1;			/* walk[0]: the syscall's ip, set by the leaf */
	walk_frames((unsigned long)__builtin_frame_address(0), sp);
	return ustack_leaf(&walk[0]);
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

static NOINLINE void *ustack_thread(void *status)
{
	*(int *)status = level1();
	__asm__ volatile("" ::: "memory");
	return NULL;
}

int main(void)
{
	pthread_t thread;
	int status = 1;
	int i;

	if (pipe(self_pipe)) {
		perror("ksymlab ustack: pipe");
		return 1;
	}
	if (pthread_create(&thread, NULL, ustack_thread, &status) ||
	    pthread_join(thread, NULL)) {
		fputs("ksymlab ustack: cannot run the stack thread\n", stderr);
		return 1;
	}
	if (thread_id == getpid()) {
		fputs("ksymlab ustack: the stack thread is the leader\n", stderr);
		return 1;
	}
	for (i = 0; i < 3; i++)
		printf("ustack-expect pid=%d tgid=%d depth=%d ret=0x%lx\n", (int)thread_id,
		       (int)getpid(), i + 1, ret_addr[i]);
	for (i = 0; i < nr_walk; i++)
		printf("ustack-walk pid=%d idx=%d ip=0x%lx\n", (int)thread_id, i, walk[i]);
	return status;
}

#endif
