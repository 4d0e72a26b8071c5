/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KSYMLAB_H
#define KSYMLAB_H

#include <linux/seq_file.h>
#include <linux/sched.h>

/*
 * Resolution layer: the only code that knows how a kernel internal is
 * reached. Samplers call the ksymlab_*() wrappers below.
 */
int ksymlab_resolve_all(void);
void ksymlab_show_symbols(struct seq_file *m);
const char *ksymlab_mode(void);

int ksymlab_task_prio(const struct task_struct *p);

/* Samplers. */
int ksymlab_prio_show(struct seq_file *m, void *v);

#endif /* KSYMLAB_H */
