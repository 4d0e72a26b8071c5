// SPDX-License-Identifier: GPL-2.0
/*
 * One snapshot of the values that move while the guest runs (task
 * priorities, pageblock migratetypes), taken atomically and announced to a
 * debugger.
 *
 * The guest has one CPU, so with interrupts off nothing else runs between
 * the first sample and ksymlab_snapshot_taken(). A debugger that stops
 * there reads the module's results and the kernel state they came from at
 * the same instant; no task can exit and no pageblock change in between.
 * Writing anything to /proc/ksymlab/snapshot takes a snapshot; the prio and
 * migratetype files show the latest one.
 */

#include <linux/compiler.h>
#include <linux/irqflags.h>
#include <linux/kernel.h>
#include <linux/moduleparam.h>
#include <linux/proc_fs.h>

#include "ksymlab.h"

/*
 * Proof that the harness reports a guest that dies while gdb waits for the
 * snapshot as the console shows it (a panic), not as a lost gdb session.
 */
static bool selftest_panic;
module_param(selftest_panic, bool, 0400);
MODULE_PARM_DESC(selftest_panic, "panic instead of taking a snapshot (tests the harness)");

/*
 * Breakpoint target for gdbscripts/ksymlab_verify.py. noinline, global and
 * given a value that is not a constant, so that the compiler neither
 * removes the call nor moves it to a specialised clone under another name.
 */
noinline void ksymlab_snapshot_taken(u32 seq)
{
	asm volatile("" : : "r" (seq) : "memory");
}

void ksymlab_snapshot(void)
{
	unsigned long flags;

	if (selftest_panic)
		panic("ksymlab: selftest_panic set, no snapshot");
	mutex_lock(&ksymlab_results_lock);
	local_irq_save(flags);
	if (ksymlab_available(KSYMLAB_PRIO))
		ksymlab_snapshot_prio();
	if (ksymlab_available(KSYMLAB_MIGRATETYPE))
		ksymlab_snapshot_pageblocks();
	ksymlab_results.snapshot_seq++;
	ksymlab_snapshot_taken(ksymlab_results.snapshot_seq);
	local_irq_restore(flags);
	mutex_unlock(&ksymlab_results_lock);
}

/* Lock the results for a reader, taking a first snapshot if there is none. */
void ksymlab_lock_snapshot(void)
{
	mutex_lock(&ksymlab_results_lock);
	if (!ksymlab_results.snapshot_seq) {
		mutex_unlock(&ksymlab_results_lock);
		ksymlab_snapshot();
		mutex_lock(&ksymlab_results_lock);
	}
}

static ssize_t ksymlab_snapshot_write(struct file *file,
				      const char __user *buf, size_t count,
				      loff_t *ppos)
{
	ksymlab_snapshot();
	return count;
}

const struct proc_ops ksymlab_snapshot_ops = {
	.proc_write = ksymlab_snapshot_write,
	.proc_lseek = noop_llseek,
};
