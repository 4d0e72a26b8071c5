// SPDX-License-Identifier: GPL-2.0
/*
 * ksymlab guest program: can a raw-tracepoint BPF program read argument
 * N (1-based) of balance_dirty_pages? Raw bpf(2), no libbpf.
 *
 * The program stores ctx[N-1] and ctx[0] (the writeback domain pointer with
 * the seed series) in an array map, and bpf_jiffies64() of the same run (for
 * N = 13, start_time, must not be later). The loader prints one line:
 *   bpf arg=N result=rejected errno=E verifier=<last verifier line>
 *   bpf arg=N result=attach-failed errno=E
 *   bpf arg=N result=ok hits=H value=0x.. arg1=0x.. writes=W jiffies=0x..
 * after running `dd` in the background to drive writeback throttling.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static char log_buf[65536];

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(SYS_bpf, cmd, attr, sizeof(*attr));
}

#define INSN(c, d, s, o, i) ((struct bpf_insn){ .code = (c), .dst_reg = (d), \
	.src_reg = (s), .off = (o), .imm = (i) })

/* r0 = &map[key]; when the lookup fails, jump over the next `skip` insns. */
static int emit_lookup(struct bpf_insn *p, int map_fd, int key, int skip)
{
	int n = 0;

	p[n++] = INSN(BPF_ST | BPF_MEM | BPF_W, BPF_REG_10, 0, -4, key);
	p[n++] = INSN(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map_fd);
	p[n++] = INSN(0, 0, 0, 0, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_2, BPF_REG_10, 0, 0);
	p[n++] = INSN(BPF_ALU64 | BPF_ADD | BPF_K, BPF_REG_2, 0, 0, -4);
	p[n++] = INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_map_lookup_elem);
	p[n++] = INSN(BPF_JMP | BPF_JEQ | BPF_K, BPF_REG_0, 0, skip, 0);
	return n;
}

/* map[key] = ctx[slot], with r6 = ctx. */
static int emit_store(struct bpf_insn *p, int map_fd, int key, int slot)
{
	int n = emit_lookup(p, map_fd, key, 2);

	p[n++] = INSN(BPF_LDX | BPF_MEM | BPF_DW, BPF_REG_1, BPF_REG_6, slot * 8, 0);
	p[n++] = INSN(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_0, BPF_REG_1, 0, 0);
	return n;
}

/* map[key] = bpf_jiffies64(), with r7 as scratch. */
static int emit_jiffies(struct bpf_insn *p, int map_fd, int key)
{
	int n = 0;

	p[n++] = INSN(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_jiffies64);
	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_7, BPF_REG_0, 0, 0);
	n += emit_lookup(p + n, map_fd, key, 1);
	p[n++] = INSN(BPF_STX | BPF_MEM | BPF_DW, BPF_REG_0, BPF_REG_7, 0, 0);
	return n;
}

/* map[key] += 1 */
static int emit_count(struct bpf_insn *p, int map_fd, int key)
{
	int n = emit_lookup(p, map_fd, key, 2);

	p[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, 1);
	p[n++] = INSN(BPF_STX | BPF_ATOMIC | BPF_DW, BPF_REG_0, BPF_REG_1, 0, BPF_ADD);
	return n;
}

static int map_get(int map_fd, unsigned int key, unsigned long long *value)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_fd = map_fd;
	a.key = (unsigned long)&key;
	a.value = (unsigned long)value;
	return sys_bpf(BPF_MAP_LOOKUP_ELEM, &a);
}

/* The verifier's reason: its last line that is not the closing statistics. */
static const char *reason(const char *log)
{
	static char line[256];
	const char *end = log + strlen(log);
	const char *start;
	size_t i;

	for (;;) {
		while (end > log && (end[-1] == '\n' || end[-1] == ' '))
			end--;
		start = end;
		while (start > log && start[-1] != '\n')
			start--;
		if (start == log || (strncmp(start, "processed ", 10) &&
				     strncmp(start, "verification time", 17)))
			break;
		end = start;
	}
	for (i = 0; start + i < end && i < sizeof(line) - 1; i++)
		line[i] = start[i] == ' ' ? '_' : start[i];
	line[i] = '\0';
	return line;
}

/* Dirty pages fast enough that balance_dirty_pages() throttles. */
static void write_file(const char *path)
{
	char of[300];
	int status;
	pid_t pid;

	snprintf(of, sizeof(of), "of=%s", path);
	pid = fork();
	if (pid == 0) {
		execl("/bin/dd", "dd", "if=/dev/zero", of, "bs=4096", "count=64",
		      (char *)NULL);
		_exit(127);
	}
	waitpid(pid, &status, 0);
	sync();
	unlink(path);
}

int main(int argc, char **argv)
{
	int arg = argc > 1 ? atoi(argv[1]) : 13;
	const char *writer = argc > 2 ? argv[2] : "/mnt/bpf-fill";
	struct bpf_insn prog[56];
	unsigned long long hits = 0, value = 0, arg1 = 0, jiffies = 0;
	union bpf_attr a;
	int map_fd, prog_fd, tp_fd, n = 0, attempt;

	memset(&a, 0, sizeof(a));
	a.map_type = BPF_MAP_TYPE_ARRAY;
	a.key_size = 4;
	a.value_size = 8;
	a.max_entries = 4;
	map_fd = sys_bpf(BPF_MAP_CREATE, &a);
	if (map_fd < 0) {
		printf("bpf arg=%d result=no-map errno=%d\n", arg, errno);
		return 1;
	}

	prog[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_X, BPF_REG_6, BPF_REG_1, 0, 0);
	n += emit_store(prog + n, map_fd, 0, arg - 1);
	n += emit_store(prog + n, map_fd, 1, 0);
	n += emit_count(prog + n, map_fd, 2);	/* how often the program ran */
	n += emit_jiffies(prog + n, map_fd, 3);
	prog[n++] = INSN(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
	prog[n++] = INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_RAW_TRACEPOINT;
	a.insns = (unsigned long)prog;
	a.insn_cnt = n;
	a.license = (unsigned long)"GPL";
	a.log_buf = (unsigned long)log_buf;
	a.log_size = sizeof(log_buf);
	a.log_level = 1;
	prog_fd = sys_bpf(BPF_PROG_LOAD, &a);
	if (prog_fd < 0) {
		printf("bpf arg=%d result=rejected errno=%d verifier=%s\n", arg, errno,
		       reason(log_buf));
		return 0;
	}

	memset(&a, 0, sizeof(a));
	a.raw_tracepoint.name = (unsigned long)"balance_dirty_pages";
	a.raw_tracepoint.prog_fd = prog_fd;
	tp_fd = sys_bpf(BPF_RAW_TRACEPOINT_OPEN, &a);
	if (tp_fd < 0) {
		printf("bpf arg=%d result=attach-failed errno=%d\n", arg, errno);
		return 0;
	}

	/* Throttling depends on timing: write until the program has run. */
	for (attempt = 0; attempt < 10 && !hits; attempt++) {
		write_file(writer);
		map_get(map_fd, 2, &hits);
	}

	map_get(map_fd, 0, &value);
	map_get(map_fd, 1, &arg1);
	map_get(map_fd, 2, &hits);
	map_get(map_fd, 3, &jiffies);
	printf("bpf arg=%d result=ok hits=%llu value=0x%llx arg1=0x%llx writes=%d jiffies=0x%llx\n",
	       arg, hits, value, arg1, attempt, jiffies);
	close(tp_fd);
	return 0;
}
