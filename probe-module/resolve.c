// SPDX-License-Identifier: GPL-2.0
/*
 * Symbol resolution for the ksymlab probe module.
 *
 * In exports mode the module links against EXPORT_SYMBOL_GPL()s added by
 * the seed series, so the address comes from the module loader's
 * relocations. In kallsyms mode the same functions are looked up by name
 * at init and called through a pointer, which is what tracers did before
 * v5.7 unexported kallsyms_lookup_name().
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/module.h>

#include "ksymlab.h"

#if defined(KSYMLAB_MODE_EXPORTS)
#define KSYMLAB_METHOD "export"
#elif defined(KSYMLAB_MODE_KALLSYMS)
#define KSYMLAB_METHOD "kallsyms"
#else
#error "build with KSYMLAB_MODE=exports or KSYMLAB_MODE=kallsyms"
#endif

struct ksymlab_sym {
	const char *name;
	unsigned long addr;
};

enum { KSYM_TASK_PRIO, KSYM_COUNT };

static struct ksymlab_sym ksymlab_syms[KSYM_COUNT] = {
	[KSYM_TASK_PRIO] = { .name = "task_prio" },
};

#ifdef KSYMLAB_MODE_EXPORTS
static unsigned long ksymlab_lookup(const char *name)
{
	if (!strcmp(name, "task_prio"))
		return (unsigned long)&task_prio;
	return 0;
}

int ksymlab_task_prio(const struct task_struct *p)
{
	return task_prio(p);
}
#else
static unsigned long ksymlab_lookup(const char *name)
{
	return kallsyms_lookup_name(name);
}

int ksymlab_task_prio(const struct task_struct *p)
{
	int (*fn)(const struct task_struct *p);

	fn = (void *)ksymlab_syms[KSYM_TASK_PRIO].addr;
	return fn(p);
}
#endif

const char *ksymlab_mode(void)
{
	return KSYMLAB_METHOD;
}

int ksymlab_resolve_all(void)
{
	int i;

	for (i = 0; i < KSYM_COUNT; i++) {
		ksymlab_syms[i].addr = ksymlab_lookup(ksymlab_syms[i].name);
		if (!ksymlab_syms[i].addr) {
			pr_err("mode %s: cannot resolve %s\n", KSYMLAB_METHOD,
			       ksymlab_syms[i].name);
			return -ENOENT;
		}
	}
	return 0;
}

/*
 * Addresses are printed in full on purpose: the harness compares them with
 * vmlinux from gdb. The file is readable by root only.
 */
void ksymlab_show_symbols(struct seq_file *m)
{
	int i;

	for (i = 0; i < KSYM_COUNT; i++)
		seq_printf(m, "symbol name=%s addr=0x%lx method=%s\n",
			   ksymlab_syms[i].name, ksymlab_syms[i].addr,
			   KSYMLAB_METHOD);
}
