// SPDX-License-Identifier: GPL-2.0
/* Sampler: task_prio() of every task, as a tracer's statedump records it. */

#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/string.h>

#include "ksymlab.h"

/* Called by ksymlab_snapshot() with results_lock held and interrupts off. */
void ksymlab_snapshot_prio(void)
{
	struct task_struct *g, *t;
	u32 n = 0;

	rcu_read_lock();
	for_each_process_thread(g, t) {
		struct ksymlab_prio_sample *s = &ksymlab_results.prio[n];

		if (n == KSYMLAB_MAX_TASKS)
			break;
		s->pid = task_pid_nr(t);
		s->prio = ksymlab_task_prio(t);
		s->policy = t->policy;
		/* Unlocked, as tracers copy comm: a rename can race, not a task. */
		strscpy_pad(s->comm, t->comm, sizeof(s->comm));
		n++;
	}
	rcu_read_unlock();
	ksymlab_results.nr_prio = n;
}

int ksymlab_prio_show(struct seq_file *m, void *v)
{
	u32 i;

	ksymlab_lock_snapshot();
	seq_printf(m, "snapshot kind=prio seq=%u\n", ksymlab_results.snapshot_seq);
	for (i = 0; i < ksymlab_results.nr_prio; i++) {
		const struct ksymlab_prio_sample *s = &ksymlab_results.prio[i];

		seq_printf(m, "prio pid=%d policy=%u prio=%d comm=",
			   s->pid, s->policy, s->prio);
		/* comm is last and escaped so any name parses back exactly. */
		seq_escape(m, s->comm, " \t\n\\=");
		seq_putc(m, '\n');
	}
	mutex_unlock(&ksymlab_results_lock);
	return 0;
}
