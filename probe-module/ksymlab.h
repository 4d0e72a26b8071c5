/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KSYMLAB_H
#define KSYMLAB_H

#include <linux/device.h>
#include <linux/mmzone.h>
#include <linux/mutex.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/sched.h>
#include <linux/types.h>

struct wb_domain;

/*
 * Resolution layer (resolve.c): the only code that knows how a kernel
 * internal is reached in the mode this module was built for. Samplers
 * only call the wrappers below.
 */
int ksymlab_resolve_all(void);
void ksymlab_show_symbols(struct seq_file *m);
const char *ksymlab_mode(void);
u64 ksymlab_resolve_ns(void);

int ksymlab_task_prio(const struct task_struct *p);
unsigned int ksymlab_stack_trace_save_user(unsigned long *store,
					   unsigned int size);
unsigned long ksymlab_pfnblock_mt(const struct page *page, unsigned long pfn);
const struct class *ksymlab_block_class(void);
const struct device_type *ksymlab_disk_type(void);
struct wb_domain *ksymlab_global_wb_domain(void);
int ksymlab_bench_calls(struct seq_file *m, unsigned long calls);

/* Samplers that can degrade report which of them run (main.c). */
enum ksymlab_sampler {
	KSYMLAB_PRIO,
	KSYMLAB_MIGRATETYPE,
	KSYMLAB_USTACK,
	KSYMLAB_BLOCKDEV,
	KSYMLAB_WRITEBACK,
	KSYMLAB_NR_SAMPLERS,
};

bool ksymlab_available(enum ksymlab_sampler s);
void ksymlab_set_unavailable(enum ksymlab_sampler s, const char *why);

/*
 * Results kept in module memory so that gdb can read what the module
 * reported without trusting its text output. Updated under results_lock
 * by the samplers; the writeback fields by tracepoint probes under wb_lock.
 */
#define KSYMLAB_MAX_TASKS	256
#define KSYMLAB_MAX_FRAMES	32
#define KSYMLAB_MAX_BDEVS	32
#define KSYMLAB_NAME_LEN	32
#define KSYMLAB_MAX_PAGEBLOCKS	1024

struct ksymlab_prio_sample {
	pid_t pid;
	int prio;
	unsigned int policy;
	char comm[TASK_COMM_LEN];
};

struct ksymlab_pageblock_sample {
	unsigned long pfn;
	u8 nid;
	u8 zid;
	u8 mt;
};

struct ksymlab_bdev_sample {
	dev_t dev;
	u64 sectors;
	char name[KSYMLAB_NAME_LEN];
};

struct ksymlab_wb_sample {
	u64 global_dirty_state_hits;
	u64 balance_dirty_pages_hits;
	unsigned long dirty_limit;
	unsigned long dirty_thresh;
	unsigned long background_thresh;
	unsigned long bdp_limit;
};

/*
 * prio and pageblocks come from one snapshot (snapshot.c), taken with
 * interrupts off and ended by ksymlab_snapshot_taken(), so that a debugger
 * stopped there sees them and the state they were read from at one instant.
 */
struct ksymlab_results {
	u32 magic;
	u32 snapshot_seq;
	u32 nr_prio;
	struct ksymlab_prio_sample prio[KSYMLAB_MAX_TASKS];
	u32 nr_pageblocks;
	struct ksymlab_pageblock_sample pageblocks[KSYMLAB_MAX_PAGEBLOCKS];
	u32 mt_hist[MAX_NR_ZONES][MIGRATE_TYPES];
	u32 nr_frames;
	pid_t frames_pid;
	unsigned long frames[KSYMLAB_MAX_FRAMES];
	u32 nr_bdevs;
	struct ksymlab_bdev_sample bdevs[KSYMLAB_MAX_BDEVS];
	struct ksymlab_wb_sample wb;
};

#define KSYMLAB_MAGIC 0x6b73796dU	/* "ksym" */

extern struct ksymlab_results ksymlab_results;
extern struct mutex ksymlab_results_lock;

void ksymlab_snapshot(void);
void ksymlab_lock_snapshot(void);
void ksymlab_snapshot_taken(u32 seq);
void ksymlab_snapshot_prio(void);
void ksymlab_snapshot_pageblocks(void);
extern const struct proc_ops ksymlab_snapshot_ops;

int ksymlab_prio_show(struct seq_file *m, void *v);
int ksymlab_migratetype_show(struct seq_file *m, void *v);
int ksymlab_ustack_show(struct seq_file *m, void *v);
int ksymlab_blockdev_show(struct seq_file *m, void *v);
int ksymlab_writeback_show(struct seq_file *m, void *v);
int ksymlab_writeback_register(void);
void ksymlab_writeback_unregister(void);

#endif /* KSYMLAB_H */
