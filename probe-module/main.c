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

#include "ksymlab.h"

static struct proc_dir_entry *ksymlab_dir;

static int ksymlab_symbols_show(struct seq_file *m, void *v)
{
	ksymlab_show_symbols(m);
	return 0;
}

static int __init ksymlab_init(void)
{
	int ret;

	ret = ksymlab_resolve_all();
	if (ret)
		return ret;

	ksymlab_dir = proc_mkdir("ksymlab", NULL);
	if (!ksymlab_dir)
		return -ENOMEM;
	if (!proc_create_single("symbols", 0400, ksymlab_dir,
				ksymlab_symbols_show) ||
	    !proc_create_single("prio", 0400, ksymlab_dir,
				ksymlab_prio_show)) {
		proc_remove(ksymlab_dir);
		return -ENOMEM;
	}
	pr_info("loaded, mode %s\n", ksymlab_mode());
	return 0;
}

static void __exit ksymlab_exit(void)
{
	proc_remove(ksymlab_dir);
}

module_init(ksymlab_init);
module_exit(ksymlab_exit);

MODULE_DESCRIPTION("ksymlab: does a tracer work without kallsyms?");
MODULE_LICENSE("GPL");
