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

	rcu_read_lock();
	for_each_process_thread(g, t) {
		__get_task_comm(comm, sizeof(comm), t);
		seq_printf(m, "prio pid=%d policy=%u prio=%d comm=",
			   task_pid_nr(t), t->policy, ksymlab_task_prio(t));
		/* comm is last and escaped so any name parses back exactly. */
		seq_escape(m, comm, " \t\n\\=");
		seq_putc(m, '\n');
	}
	rcu_read_unlock();
	return 0;
}
