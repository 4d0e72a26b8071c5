// SPDX-License-Identifier: GPL-2.0
/*
 * ksymlab guest test module for EXPORT_SYMBOL_FOR_MODULES (issue 41): it
 * links to stack_trace_save_user(), which exports-v2-formods-7.2 exports to
 * modules named "lttng*" only, and calls it once. The same source is built
 * under three names (Kbuild); the loader decides which may load.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/stacktrace.h>

#ifdef KSYMLAB_FORMODS_IMPORT
/*
 * modpost refuses to build a module that imports a "module:" namespace, so
 * the source names one character off and the harness writes the ':' into
 * the built module's .modinfo (harness/prepare/formods.py): what the loader
 * sees is an explicit import of "module:lttng*".
 */
MODULE_IMPORT_NS("module_lttng*");
#endif

static int __init ksymlab_formods_init(void)
{
	unsigned long entries[16];
	unsigned int n;

	n = stack_trace_save_user(entries, ARRAY_SIZE(entries));
	pr_info("stack_trace_save_user saved %u entries\n", n);
	return 0;
}
module_init(ksymlab_formods_init);

static void __exit ksymlab_formods_exit(void)
{
}
module_exit(ksymlab_formods_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ksymlab: a caller of an export restricted to named modules");
