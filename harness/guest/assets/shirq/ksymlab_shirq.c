// SPDX-License-Identifier: GPL-2.0
/*
 * ksymlab_shirq: a guest test module that puts two handlers on one
 * interrupt line (IRQF_SHARED), so that a walk of an interrupt's actions
 * (LTTng's interrupt statedump, irq_walk_actions() of the v2 series) has
 * more than one element to visit (issue 43). Nothing in the guest raises
 * the line; neither handler ever claims an interrupt.
 */
#include <linux/interrupt.h>
#include <linux/module.h>

static unsigned int irq = 10;
module_param(irq, uint, 0444);
MODULE_PARM_DESC(irq, "the interrupt line both handlers share");

/* A shared line tells its handlers apart by dev_id: one cookie each. */
static int ksymlab_shirq_first;
static int ksymlab_shirq_second;

static irqreturn_t ksymlab_shirq_handler(int line, void *dev_id)
{
	return IRQ_NONE;
}

static int __init ksymlab_shirq_init(void)
{
	int ret;

	ret = request_irq(irq, ksymlab_shirq_handler, IRQF_SHARED, "ksymlab-shirq-a",
			  &ksymlab_shirq_first);
	if (ret)
		return ret;
	ret = request_irq(irq, ksymlab_shirq_handler, IRQF_SHARED, "ksymlab-shirq-b",
			  &ksymlab_shirq_second);
	if (ret)
		free_irq(irq, &ksymlab_shirq_first);
	return ret;
}

static void __exit ksymlab_shirq_exit(void)
{
	free_irq(irq, &ksymlab_shirq_second);
	free_irq(irq, &ksymlab_shirq_first);
}

module_init(ksymlab_shirq_init);
module_exit(ksymlab_shirq_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ksymlab guest state: two handlers on one shared interrupt line");
