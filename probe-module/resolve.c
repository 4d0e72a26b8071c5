// SPDX-License-Identifier: GPL-2.0
/*
 * Symbol resolution for the ksymlab probe module, one mode per build:
 *
 * exports:  link against the EXPORT_SYMBOL_GPL()s of the seed series; the
 *           module loader's relocations provide every address.
 * kallsyms: look every internal up with kallsyms_lookup_name(), as tracers
 *           did before v5.7 unexported it (needs the revert of 0bd476e6).
 * kprobe:   on a stock kernel, find kallsyms_lookup_name() itself by
 *           registering a kprobe on its name, then proceed as kallsyms.
 *           This is what LTTng does on current kernels.
 * v2:       exports mode on the v2 series: task_prio is computed, the disks
 *           come from blk_walk_visible_disks(), and two exports sit in the
 *           TRACER_INTERNALS namespace.
 */

#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blkdev.h>
#include <linux/kallsyms.h>
#include <linux/kernel.h>
#include <linux/kprobes.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/pageblock-flags.h>
#include <linux/sched/prio.h>
#include <linux/stacktrace.h>
#include <linux/string.h>

#include <asm/ibt.h>

#include "ksymlab.h"

#if defined(KSYMLAB_MODE_EXPORTS)
#define KSYMLAB_METHOD "export"
#ifdef KSYMLAB_V2
/* stack_trace_save_user() and get_pfnblock_flags_mask() live there. */
#ifdef KSYMLAB_NS_STRING
MODULE_IMPORT_NS("TRACER_INTERNALS");
#else
MODULE_IMPORT_NS(TRACER_INTERNALS);
#endif
#endif
#elif defined(KSYMLAB_MODE_KALLSYMS)
#define KSYMLAB_METHOD "kallsyms"
#elif defined(KSYMLAB_MODE_KPROBE)
#define KSYMLAB_METHOD "kprobe"
#else
#error "build with KSYMLAB_MODE=exports, kallsyms or kprobe"
#endif

/* Pretend one symbol cannot be resolved, to exercise the failure policy. */
static char *simulate_missing;
module_param(simulate_missing, charp, 0400);
MODULE_PARM_DESC(simulate_missing, "symbol name the resolver treats as missing (testing)");

#ifdef KSYMLAB_PFNBLOCK_MIGRATETYPE
#define KSYMLAB_PFNBLOCK_FN "get_pfnblock_migratetype"
#else
#define KSYMLAB_PFNBLOCK_FN "get_pfnblock_flags_mask"
#endif

enum ksymlab_sym_id {
	KSYM_TASK_PRIO,
	KSYM_STACK_TRACE_SAVE_USER,
	KSYM_PFNBLOCK_MT,
	KSYM_BLOCK_CLASS,
	KSYM_DISK_TYPE,
	KSYM_GLOBAL_WB_DOMAIN,
	KSYM_COUNT,
};

struct ksymlab_sym {
	const char *name;		/* what is resolved in this mode */
	enum ksymlab_sampler sampler;	/* who needs it */
	bool required;			/* refuse to load without it */
	unsigned long addr;
	const char *method;
};

/*
 * Failure policy (see probe-module/README.md): prio and migratetype are the
 * statedump core, as in LTTng which refuses to load without the
 * migratetype helper; the other samplers degrade and say so.
 */
static struct ksymlab_sym ksymlab_syms[KSYM_COUNT] = {
#ifdef KSYMLAB_V2
	/* p->prio - MAX_RT_PRIO, computed here: v2 exports nothing for it. */
	[KSYM_TASK_PRIO] = { NULL, KSYMLAB_PRIO, true },
#else
	[KSYM_TASK_PRIO] = { "task_prio", KSYMLAB_PRIO, true },
#endif
	[KSYM_STACK_TRACE_SAVE_USER] = {
		"stack_trace_save_user", KSYMLAB_USTACK, false },
	[KSYM_PFNBLOCK_MT] = { KSYMLAB_PFNBLOCK_FN, KSYMLAB_MIGRATETYPE, true },
#if defined(KSYMLAB_V2)
	/* One walk of the disks stands for the class and the device type. */
	[KSYM_BLOCK_CLASS] = { "blk_walk_visible_disks", KSYMLAB_BLOCKDEV, false },
	[KSYM_DISK_TYPE] = { NULL, KSYMLAB_BLOCKDEV, false },
	/* The tracepoints pass the domain and the throttle control. */
	[KSYM_GLOBAL_WB_DOMAIN] = { NULL, KSYMLAB_WRITEBACK, false },
#elif defined(KSYMLAB_MODE_EXPORTS)
	[KSYM_BLOCK_CLASS] = { "gendisk_block_class", KSYMLAB_BLOCKDEV, false },
	[KSYM_DISK_TYPE] = { "gendisk_device_type", KSYMLAB_BLOCKDEV, false },
	/* The seed series passes the domain to the tracepoints instead. */
	[KSYM_GLOBAL_WB_DOMAIN] = { NULL, KSYMLAB_WRITEBACK, false },
#else
	[KSYM_BLOCK_CLASS] = { "block_class", KSYMLAB_BLOCKDEV, false },
	[KSYM_DISK_TYPE] = { "disk_type", KSYMLAB_BLOCKDEV, false },
	[KSYM_GLOBAL_WB_DOMAIN] = { "global_wb_domain", KSYMLAB_WRITEBACK, false },
#endif
};

/* The lookup function itself, for the two by-name modes. */
static struct ksymlab_sym ksymlab_lookup_sym = { "kallsyms_lookup_name" };
static u64 ksymlab_resolve_time_ns;

#ifdef KSYMLAB_MODE_EXPORTS

static unsigned long ksymlab_lookup(enum ksymlab_sym_id id)
{
	switch (id) {
	case KSYM_STACK_TRACE_SAVE_USER:
		return (unsigned long)&stack_trace_save_user;
	case KSYM_PFNBLOCK_MT:
#ifdef KSYMLAB_PFNBLOCK_MIGRATETYPE
		return (unsigned long)&get_pfnblock_migratetype;
#else
		return (unsigned long)&get_pfnblock_flags_mask;
#endif
#ifdef KSYMLAB_V2
	case KSYM_BLOCK_CLASS:
		return (unsigned long)&blk_walk_visible_disks;
#else
	case KSYM_TASK_PRIO:
		return (unsigned long)&task_prio;
	case KSYM_BLOCK_CLASS:
		return (unsigned long)&gendisk_block_class;
	case KSYM_DISK_TYPE:
		return (unsigned long)&gendisk_device_type;
#endif
	default:
		return 0;
	}
}

#ifdef KSYMLAB_V2

/* task_prio() of kernel/sched/core.c, which v2 leaves unexported. */
int ksymlab_task_prio(const struct task_struct *p)
{
	return p->prio - MAX_RT_PRIO;
}

#else /* KSYMLAB_V2: the RFC's exports and getters */

int ksymlab_task_prio(const struct task_struct *p)
{
	return task_prio(p);
}

const struct class *ksymlab_block_class(void)
{
	return gendisk_block_class();
}

const struct device_type *ksymlab_disk_type(void)
{
	return gendisk_device_type();
}

#endif /* KSYMLAB_V2 */

static int ksymlab_find_lookup(void)
{
	return 0;
}

unsigned int ksymlab_stack_trace_save_user(unsigned long *store,
					   unsigned int size)
{
	return stack_trace_save_user(store, size);
}

unsigned long ksymlab_pfnblock_mt(const struct page *page, unsigned long pfn)
{
#ifdef KSYMLAB_PFNBLOCK_MIGRATETYPE
	return get_pfnblock_migratetype(page, pfn);
#else
	return get_pfnblock_flags_mask(page, pfn, MIGRATETYPE_MASK);
#endif
}

struct wb_domain *ksymlab_global_wb_domain(void)
{
	return NULL;
}

#else /* kallsyms or kprobe: everything through pointers */

typedef unsigned long (*ksymlab_lookup_fn)(const char *name);
typedef int (*ksymlab_task_prio_fn)(const struct task_struct *p);
typedef unsigned int (*ksymlab_save_user_fn)(unsigned long *store,
					     unsigned int size);
#ifdef KSYMLAB_PFNBLOCK_MIGRATETYPE
typedef enum migratetype (*ksymlab_mt_fn)(const struct page *page,
					  unsigned long pfn);
#else
typedef unsigned long (*ksymlab_flags_fn)(const struct page *page,
					  unsigned long pfn,
					  unsigned long mask);
#endif

#ifdef KSYMLAB_MODE_KPROBE
/*
 * Is this instruction word an ENDBR64? 7.2's is_endbr() takes a pointer and
 * is out of line and unexported, so a module uses the inline __is_endbr(),
 * which exists with CONFIG_X86_KERNEL_IBT only (ENDBR_INSN_SIZE is 0
 * without it, and this is not called).
 */
static bool ksymlab_is_endbr(u32 val)
{
#ifndef KSYMLAB_INLINE_IS_ENDBR
	return is_endbr(val);
#elif defined(CONFIG_X86_KERNEL_IBT)
	return __is_endbr(val);
#else
	return false;
#endif
}

/* The kprobe is only a way to ask the kernel where the function lives. */
static int ksymlab_find_lookup(void)
{
	struct kprobe kp = { .symbol_name = "kallsyms_lookup_name" };
	unsigned long addr;
	int ret;

	ret = register_kprobe(&kp);
	if (ret < 0) {
		pr_err("mode %s: kprobe on kallsyms_lookup_name failed: %d\n",
		       KSYMLAB_METHOD, ret);
		return -ENOENT;
	}
	addr = (unsigned long)kp.addr;
	unregister_kprobe(&kp);
	/*
	 * With CONFIG_X86_KERNEL_IBT (a default-n prompt in 6.1, default y in
	 * 6.12) every function starts with ENDBR64 and
	 * arch_adjust_kprobe_addr() puts a probe on a symbol just after it,
	 * so kp.addr is the symbol + ENDBR_INSN_SIZE. Step back to the
	 * symbol: an indirect call must land on the ENDBR under IBT, and the
	 * address is then the one kallsyms and gdb give. Without IBT,
	 * ENDBR_INSN_SIZE is 0 and is_endbr() false.
	 */
	if (ENDBR_INSN_SIZE &&
	    ksymlab_is_endbr(*(const u32 *)(addr - ENDBR_INSN_SIZE)))
		addr -= ENDBR_INSN_SIZE;
	ksymlab_lookup_sym.addr = addr;
	ksymlab_lookup_sym.method = "kprobe";
	return 0;
}
#else
static int ksymlab_find_lookup(void)
{
	ksymlab_lookup_sym.addr = (unsigned long)&kallsyms_lookup_name;
	ksymlab_lookup_sym.method = "export";
	return 0;
}
#endif

static unsigned long ksymlab_lookup(enum ksymlab_sym_id id)
{
	ksymlab_lookup_fn lookup = (ksymlab_lookup_fn)ksymlab_lookup_sym.addr;

	return lookup(ksymlab_syms[id].name);
}

static unsigned long ksymlab_addr(enum ksymlab_sym_id id)
{
	return ksymlab_syms[id].addr;
}

int ksymlab_task_prio(const struct task_struct *p)
{
	return ((ksymlab_task_prio_fn)ksymlab_addr(KSYM_TASK_PRIO))(p);
}

unsigned int ksymlab_stack_trace_save_user(unsigned long *store,
					   unsigned int size)
{
	ksymlab_save_user_fn fn;

	fn = (ksymlab_save_user_fn)ksymlab_addr(KSYM_STACK_TRACE_SAVE_USER);
	return fn(store, size);
}

unsigned long ksymlab_pfnblock_mt(const struct page *page, unsigned long pfn)
{
	unsigned long addr = ksymlab_addr(KSYM_PFNBLOCK_MT);

#ifdef KSYMLAB_PFNBLOCK_MIGRATETYPE
	return ((ksymlab_mt_fn)addr)(page, pfn);
#else
	return ((ksymlab_flags_fn)addr)(page, pfn, MIGRATETYPE_MASK);
#endif
}

const struct class *ksymlab_block_class(void)
{
	return (const struct class *)ksymlab_addr(KSYM_BLOCK_CLASS);
}

const struct device_type *ksymlab_disk_type(void)
{
	return (const struct device_type *)ksymlab_addr(KSYM_DISK_TYPE);
}

struct wb_domain *ksymlab_global_wb_domain(void)
{
	return (struct wb_domain *)ksymlab_addr(KSYM_GLOBAL_WB_DOMAIN);
}

#endif /* KSYMLAB_MODE_EXPORTS */

const char *ksymlab_mode(void)
{
	return KSYMLAB_METHOD;
}

u64 ksymlab_resolve_ns(void)
{
	return ksymlab_resolve_time_ns;
}

static bool ksymlab_simulated_missing(const char *name)
{
	return simulate_missing && name && !strcmp(simulate_missing, name);
}

int ksymlab_resolve_all(void)
{
	u64 start = ktime_get_ns();
	int i, ret;

	ret = ksymlab_find_lookup();
	if (ret)
		return ret;
	if (ksymlab_simulated_missing(ksymlab_lookup_sym.name) &&
	    ksymlab_lookup_sym.addr) {
		pr_err("mode %s: cannot resolve %s\n", KSYMLAB_METHOD,
		       ksymlab_lookup_sym.name);
		return -ENOENT;
	}

	for (i = 0; i < KSYM_COUNT; i++) {
		struct ksymlab_sym *s = &ksymlab_syms[i];

		if (!s->name)
			continue;
		s->method = KSYMLAB_METHOD;
		s->addr = ksymlab_simulated_missing(s->name) ? 0 :
			  ksymlab_lookup(i);
		if (s->addr)
			continue;
		if (s->required) {
			pr_err("mode %s: cannot resolve %s\n", KSYMLAB_METHOD,
			       s->name);
			return -ENOENT;
		}
		pr_warn("mode %s: cannot resolve %s, sampler degraded\n",
			KSYMLAB_METHOD, s->name);
		ksymlab_set_unavailable(s->sampler, s->name);
	}
	ksymlab_resolve_time_ns = ktime_get_ns() - start;
	return 0;
}

/*
 * Addresses are printed in full on purpose: the harness compares them with
 * vmlinux from gdb. The file is readable by root only.
 */
static void ksymlab_show_sym(struct seq_file *m, const struct ksymlab_sym *s)
{
	seq_printf(m, "symbol name=%s addr=0x%lx method=%s\n", s->name,
		   s->addr, s->addr ? s->method : "unresolved");
}

void ksymlab_show_symbols(struct seq_file *m)
{
	int i;

	if (ksymlab_lookup_sym.method)
		ksymlab_show_sym(m, &ksymlab_lookup_sym);
	for (i = 0; i < KSYM_COUNT; i++)
		if (ksymlab_syms[i].name)
			ksymlab_show_sym(m, &ksymlab_syms[i]);
#if defined(KSYMLAB_MODE_EXPORTS) && !defined(KSYMLAB_V2)
	/* The data the getters return, so gdb can check them as well. */
	if (ksymlab_syms[KSYM_BLOCK_CLASS].addr)
		seq_printf(m, "symbol name=block_class addr=0x%lx method=getter\n",
			   (unsigned long)ksymlab_block_class());
	if (ksymlab_syms[KSYM_DISK_TYPE].addr)
		seq_printf(m, "symbol name=disk_type addr=0x%lx method=getter\n",
			   (unsigned long)ksymlab_disk_type());
#endif
	seq_printf(m, "resolve mode=%s ns=%llu\n", KSYMLAB_METHOD,
		   ksymlab_resolve_time_ns);
}

/*
 * Cost of reaching task_prio(): a direct call (exports mode only, where the
 * loader links it) against a call through a pointer, over `calls` calls.
 * OPTIMIZER_HIDE_VAR() keeps the compiler from turning the pointer back
 * into a direct call.
 */
int ksymlab_bench_calls(struct seq_file *m, unsigned long calls)
{
	int (*fn)(const struct task_struct *p);
	unsigned long i;
	long sum = 0;
	u64 t0, t1;

#if defined(KSYMLAB_V2)
	/* Nothing to call: v2 computes the priority in the module. */
	fn = ksymlab_task_prio;
	t0 = ktime_get_ns();
	for (i = 0; i < calls; i++)
		sum += ksymlab_task_prio(current);
	t1 = ktime_get_ns();
	seq_printf(m, "bench kind=direct calls=%lu ns=%llu\n", calls, t1 - t0);
#elif defined(KSYMLAB_MODE_EXPORTS)
	fn = task_prio;
	t0 = ktime_get_ns();
	for (i = 0; i < calls; i++)
		sum += task_prio(current);
	t1 = ktime_get_ns();
	seq_printf(m, "bench kind=direct calls=%lu ns=%llu\n", calls, t1 - t0);
#else
	fn = (void *)ksymlab_addr(KSYM_TASK_PRIO);
#endif
	OPTIMIZER_HIDE_VAR(fn);
	t0 = ktime_get_ns();
	for (i = 0; i < calls; i++)
		sum += fn(current);
	t1 = ktime_get_ns();
	seq_printf(m, "bench kind=pointer calls=%lu ns=%llu\n", calls, t1 - t0);
	/* Printing the sum keeps every call's result live. */
	seq_printf(m, "bench kind=resolve calls=1 ns=%llu sum=%ld\n",
		   ksymlab_resolve_time_ns, sum);
	return 0;
}
