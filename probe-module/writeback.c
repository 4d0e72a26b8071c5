// SPDX-License-Identifier: GPL-2.0
/*
 * Sampler: probes on the global_dirty_state and balance_dirty_pages
 * tracepoints, found by name with for_each_kernel_tracepoint().
 *
 * With the seed series the tracepoints pass the writeback domain, so the
 * module reads dirty_limit through the argument. Without it the module
 * needs global_wb_domain itself, resolved by name; when that fails the
 * dirty limit is reported as unavailable, as LTTng reports 0.
 *
 * On the v2 series and since v6.15 upstream (7.2) balance_dirty_pages
 * passes the dirty throttle control instead, whose hard limit is taken
 * before the pass may move the domain's dirty_limit; the module reads
 * dirty_limit from the domain global_dirty_state passed it (exports
 * mode) or from global_wb_domain.
 */

#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/writeback.h>

#include "ksymlab.h"

#ifdef KSYMLAB_MODE_EXPORTS
static const char ksymlab_limit_source[] = "tracepoint-arg";

static bool ksymlab_have_domain(void)
{
	return true;
}
#else
static const char ksymlab_limit_source[] = "global_wb_domain";

static bool ksymlab_have_domain(void)
{
	return ksymlab_global_wb_domain();
}
#endif

static DEFINE_SPINLOCK(ksymlab_wb_lock);

static void ksymlab_wb_gds(struct wb_domain *dom, unsigned long bg_thresh,
			   unsigned long dirty_thresh)
{
	unsigned long flags;

	spin_lock_irqsave(&ksymlab_wb_lock, flags);
	ksymlab_results.wb.global_dirty_state_hits++;
	ksymlab_results.wb.background_thresh = bg_thresh;
	ksymlab_results.wb.dirty_thresh = dirty_thresh;
	if (dom)
		ksymlab_results.wb.dirty_limit = READ_ONCE(dom->dirty_limit);
	spin_unlock_irqrestore(&ksymlab_wb_lock, flags);
}

static void ksymlab_wb_bdp(struct wb_domain *dom)
{
	unsigned long flags;

	spin_lock_irqsave(&ksymlab_wb_lock, flags);
	ksymlab_results.wb.balance_dirty_pages_hits++;
	if (dom)
		ksymlab_results.wb.bdp_limit = READ_ONCE(dom->dirty_limit);
	spin_unlock_irqrestore(&ksymlab_wb_lock, flags);
}

/*
 * global_dirty_state passes the domain with the seed series and with v2
 * (exports mode; in the other modes where the header says so:
 * KSYMLAB_GDS_DOMAIN); balance_dirty_pages passes the dirty throttle control
 * where the header says so (v2, and upstream since v6.15: Kbuild's
 * KSYMLAB_BDP_DTC), else the domain with the seed series, else neither.
 */
#if defined(KSYMLAB_MODE_EXPORTS) || defined(KSYMLAB_GDS_DOMAIN)
static struct wb_domain *ksymlab_domain;

static void ksymlab_probe_gds(void *data, struct wb_domain *dom,
			      unsigned long bg_thresh,
			      unsigned long dirty_thresh)
{
#ifndef KSYMLAB_MODE_EXPORTS
	/* the prototype is the header's; this mode reads the domain it resolved */
	dom = ksymlab_global_wb_domain();
#endif
	WRITE_ONCE(ksymlab_domain, dom);
	ksymlab_wb_gds(dom, bg_thresh, dirty_thresh);
}

/*
 * The domain global_dirty_state passed, for a balance_dirty_pages without
 * one (KSYMLAB_BDP_DTC); the seed series' own passes it.
 */
static __maybe_unused struct wb_domain *ksymlab_bdp_domain(void)
{
	return READ_ONCE(ksymlab_domain);
}
#else
static void ksymlab_probe_gds(void *data, unsigned long bg_thresh,
			      unsigned long dirty_thresh)
{
	ksymlab_wb_gds(ksymlab_global_wb_domain(), bg_thresh, dirty_thresh);
}

static struct wb_domain *ksymlab_bdp_domain(void)
{
	return ksymlab_global_wb_domain();
}
#endif

#if defined(KSYMLAB_BDP_DTC)
static void ksymlab_probe_bdp(void *data, struct bdi_writeback *wb,
			      struct dirty_throttle_control *dtc,
			      unsigned long dirty_ratelimit,
			      unsigned long task_ratelimit,
			      unsigned long dirtied, unsigned long period,
			      long pause, unsigned long start_time)
{
	ksymlab_wb_bdp(ksymlab_bdp_domain());
}
#elif defined(KSYMLAB_MODE_EXPORTS)
static void ksymlab_probe_bdp(void *data, struct wb_domain *dom,
			      struct bdi_writeback *wb, unsigned long thresh,
			      unsigned long bg_thresh, unsigned long dirty,
			      unsigned long bdi_thresh,
			      unsigned long bdi_dirty,
			      unsigned long dirty_ratelimit,
			      unsigned long task_ratelimit,
			      unsigned long dirtied, unsigned long period,
			      long pause, unsigned long start_time)
{
	ksymlab_wb_bdp(dom);
}
#else
static void ksymlab_probe_bdp(void *data, struct bdi_writeback *wb,
			      unsigned long thresh, unsigned long bg_thresh,
			      unsigned long dirty, unsigned long bdi_thresh,
			      unsigned long bdi_dirty,
			      unsigned long dirty_ratelimit,
			      unsigned long task_ratelimit,
			      unsigned long dirtied, unsigned long period,
			      long pause, unsigned long start_time)
{
	ksymlab_wb_bdp(ksymlab_bdp_domain());
}
#endif

struct ksymlab_tp {
	const char *name;
	void *probe;
	struct tracepoint *tp;
	bool registered;
};

static struct ksymlab_tp ksymlab_tps[] = {
	{ "global_dirty_state", ksymlab_probe_gds },
	{ "balance_dirty_pages", ksymlab_probe_bdp },
};

static void ksymlab_find_tp(struct tracepoint *tp, void *priv)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(ksymlab_tps); i++)
		if (!strcmp(tp->name, ksymlab_tps[i].name))
			ksymlab_tps[i].tp = tp;
}

void ksymlab_writeback_unregister(void)
{
	bool any = false;
	int i;

	for (i = 0; i < ARRAY_SIZE(ksymlab_tps); i++) {
		if (!ksymlab_tps[i].registered)
			continue;
		tracepoint_probe_unregister(ksymlab_tps[i].tp,
					    ksymlab_tps[i].probe, NULL);
		ksymlab_tps[i].registered = false;
		any = true;
	}
	/* No probe may still run once the module text goes away. */
	if (any)
		tracepoint_synchronize_unregister();
}

int ksymlab_writeback_register(void)
{
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(ksymlab_tps); i++)
		ksymlab_tps[i].tp = NULL;
	for_each_kernel_tracepoint(ksymlab_find_tp, NULL);
	for (i = 0; i < ARRAY_SIZE(ksymlab_tps); i++) {
		if (!ksymlab_tps[i].tp) {
			ksymlab_set_unavailable(KSYMLAB_WRITEBACK,
						ksymlab_tps[i].name);
			ret = -ENOENT;
			goto fail;
		}
		ret = tracepoint_probe_register(ksymlab_tps[i].tp,
						ksymlab_tps[i].probe, NULL);
		if (ret) {
			ksymlab_set_unavailable(KSYMLAB_WRITEBACK,
						ksymlab_tps[i].name);
			goto fail;
		}
		ksymlab_tps[i].registered = true;
	}
	return 0;
fail:
	ksymlab_writeback_unregister();
	return ret;
}

int ksymlab_writeback_show(struct seq_file *m, void *v)
{
	struct ksymlab_wb_sample wb;
	unsigned long flags;
	bool limit;

	if (!ksymlab_tps[0].registered) {
		seq_puts(m, "unavailable sampler=writeback\n");
		return 0;
	}
	spin_lock_irqsave(&ksymlab_wb_lock, flags);
	wb = ksymlab_results.wb;
	spin_unlock_irqrestore(&ksymlab_wb_lock, flags);

	limit = ksymlab_have_domain();
	seq_printf(m, "writeback gds_hits=%llu bdp_hits=%llu background_thresh=%lu dirty_thresh=%lu\n",
		   wb.global_dirty_state_hits, wb.balance_dirty_pages_hits,
		   wb.background_thresh, wb.dirty_thresh);
	if (limit)
		seq_printf(m, "dirtylimit source=%s gds=%lu bdp=%lu\n",
			   ksymlab_limit_source,
			   wb.dirty_limit, wb.bdp_limit);
	else
		seq_puts(m, "unavailable sampler=dirtylimit\n");
	return 0;
}
