// SPDX-License-Identifier: GPL-2.0
/*
 * Sampler: the user stack of the task that reads /proc/ksymlab/ustack,
 * captured with stack_trace_save_user() and returned to that task.
 */

#include <linux/sched.h>
#include <linux/seq_file.h>

#include "ksymlab.h"

int ksymlab_ustack_show(struct seq_file *m, void *v)
{
	unsigned long frames[KSYMLAB_MAX_FRAMES];
	unsigned int i, n;

	if (!ksymlab_available(KSYMLAB_USTACK)) {
		seq_puts(m, "unavailable sampler=ustack\n");
		return 0;
	}
	n = ksymlab_stack_trace_save_user(frames, ARRAY_SIZE(frames));

	mutex_lock(&ksymlab_results_lock);
	ksymlab_results.frames_pid = task_pid_nr(current);
	ksymlab_results.nr_frames = n;
	memcpy(ksymlab_results.frames, frames, n * sizeof(frames[0]));
	mutex_unlock(&ksymlab_results_lock);

	for (i = 0; i < n; i++)
		seq_printf(m, "frame pid=%d idx=%u ip=0x%lx\n",
			   task_pid_nr(current), i, frames[i]);
	return 0;
}
