// SPDX-License-Identifier: GPL-2.0
/*
 * ksymlab probe module: samples what a kernel tracer samples and reports
 * how it reached each kernel internal, under /proc/ksymlab/.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/init.h>
#include <linux/module.h>
#include <linux/proc_fs.h>
#include <linux/seq_file.h>
#include <linux/slab.h>

#include "ksymlab.h"

struct ksymlab_results ksymlab_results;
/* Serialises samplers filling ksymlab_results from concurrent readers. */
DEFINE_MUTEX(ksymlab_results_lock);

static unsigned long bench_calls = 1000000;
module_param(bench_calls, ulong, 0400);
MODULE_PARM_DESC(bench_calls, "calls timed by /proc/ksymlab/bench");

/*
 * Proof that the harness's leak check can fail: leak one allocation on
 * purpose, which kmemleak must then report with this module in its trace.
 */
static bool selftest_leak;
module_param(selftest_leak, bool, 0400);
MODULE_PARM_DESC(selftest_leak, "leak 64 bytes at init (tests the leak checker)");

static noinline void ksymlab_selftest_leak(void)
{
	void *p = kmalloc(64, GFP_KERNEL);

	pr_info("selftest: leaking 64 bytes at %p\n", p);
}

/* Proof that the harness's dmesg check can fail: one WARN() at init. */
static bool selftest_warn;
module_param(selftest_warn, bool, 0400);
MODULE_PARM_DESC(selftest_warn, "WARN() once at init (tests the dmesg checker)");

static const char * const ksymlab_sampler_names[KSYMLAB_NR_SAMPLERS] = {
	[KSYMLAB_PRIO] = "prio",
	[KSYMLAB_MIGRATETYPE] = "migratetype",
	[KSYMLAB_USTACK] = "ustack",
	[KSYMLAB_BLOCKDEV] = "blockdev",
	[KSYMLAB_WRITEBACK] = "writeback",
};

/* Why a sampler is unavailable, or NULL while it works. */
static const char *ksymlab_unavailable[KSYMLAB_NR_SAMPLERS];

bool ksymlab_available(enum ksymlab_sampler s)
{
	return !ksymlab_unavailable[s];
}

void ksymlab_set_unavailable(enum ksymlab_sampler s, const char *why)
{
	ksymlab_unavailable[s] = why;
}

static int ksymlab_symbols_show(struct seq_file *m, void *v)
{
	int i;

	ksymlab_show_symbols(m);
	for (i = 0; i < KSYMLAB_NR_SAMPLERS; i++)
		seq_printf(m, "sampler name=%s available=%d missing=%s\n",
			   ksymlab_sampler_names[i], ksymlab_available(i),
			   ksymlab_unavailable[i] ?: "-");
	seq_printf(m, "results addr=0x%lx size=%zu\n",
		   (unsigned long)&ksymlab_results, sizeof(ksymlab_results));
	return 0;
}

static int ksymlab_bench_show(struct seq_file *m, void *v)
{
	return ksymlab_bench_calls(m, bench_calls);
}

static const struct {
	const char *name;
	int (*show)(struct seq_file *m, void *v);
} ksymlab_files[] = {
	{ "symbols", ksymlab_symbols_show },
	{ "prio", ksymlab_prio_show },
	{ "migratetype", ksymlab_migratetype_show },
	{ "ustack", ksymlab_ustack_show },
	{ "blockdev", ksymlab_blockdev_show },
	{ "writeback", ksymlab_writeback_show },
	{ "bench", ksymlab_bench_show },
};

static struct proc_dir_entry *ksymlab_dir;

static int __init ksymlab_init(void)
{
	int i, ret;

	ksymlab_results.magic = KSYMLAB_MAGIC;
	if (selftest_leak)
		ksymlab_selftest_leak();
	WARN(selftest_warn, "ksymlab: selftest warning\n");
	ret = ksymlab_resolve_all();
	if (ret)
		return ret;

	if (ksymlab_writeback_register())
		pr_warn("writeback tracepoints unavailable, sampler degraded\n");

	ksymlab_dir = proc_mkdir("ksymlab", NULL);
	if (!ksymlab_dir) {
		ret = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < ARRAY_SIZE(ksymlab_files); i++) {
		if (!proc_create_single(ksymlab_files[i].name, 0400,
					ksymlab_dir, ksymlab_files[i].show)) {
			ret = -ENOMEM;
			goto fail;
		}
	}
	if (!proc_create("snapshot", 0200, ksymlab_dir, &ksymlab_snapshot_ops)) {
		ret = -ENOMEM;
		goto fail;
	}
	pr_info("loaded, mode %s\n", ksymlab_mode());
	return 0;
fail:
	proc_remove(ksymlab_dir);
	ksymlab_writeback_unregister();
	return ret;
}

static void __exit ksymlab_exit(void)
{
	/* proc_remove() waits for readers that are inside a show(). */
	proc_remove(ksymlab_dir);
	ksymlab_writeback_unregister();
}

module_init(ksymlab_init);
module_exit(ksymlab_exit);

MODULE_DESCRIPTION("ksymlab: does a tracer work without kallsyms?");
#ifndef KSYMLAB_LICENSE
#define KSYMLAB_LICENSE "GPL"
#endif
MODULE_LICENSE(KSYMLAB_LICENSE);
