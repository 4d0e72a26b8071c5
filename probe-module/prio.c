// SPDX-License-Identifier: GPL-2.0
/* Sampler: task_prio() of every task, as a tracer's statedump records it. */

#include <linux/rcupdate.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>

#include "ksymlab.h"

int ksymlab_prio_show(struct seq_file *m, void *v)
{
	struct task_struct *g, *t;
	char comm[TASK_COMM_LEN];
	u32 n = 0;

	mutex_lock(&ksymlab_results_lock);
	rcu_read_lock();
	for_each_process_thread(g, t) {
		int prio = ksymlab_task_prio(t);

		if (n < KSYMLAB_MAX_TASKS) {
			ksymlab_results.prio[n].pid = task_pid_nr(t);
			ksymlab_results.prio[n].prio = prio;
			n++;
		}
		__get_task_comm(comm, sizeof(comm), t);
		seq_printf(m, "prio pid=%d policy=%u prio=%d comm=",
			   task_pid_nr(t), t->policy, prio);
		/* comm is last and escaped so any name parses back exactly. */
		seq_escape(m, comm, " \t\n\\=");
		seq_putc(m, '\n');
	}
	rcu_read_unlock();
	ksymlab_results.nr_prio = n;
	mutex_unlock(&ksymlab_results_lock);
	return 0;
}
