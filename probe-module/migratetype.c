// SPDX-License-Identifier: GPL-2.0
/*
 * Sampler: the migratetype of every pageblock of every populated zone,
 * through get_pfnblock_flags_mask() (get_pfnblock_migratetype() on 7.2),
 * plus a histogram per zone.
 */

#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/nodemask.h>
#include <linux/pageblock-flags.h>
#include <linux/seq_file.h>

#include "ksymlab.h"

static void ksymlab_zone_blocks(struct zone *zone, int zid, int nid)
{
	unsigned long pfn, end = zone_end_pfn(zone);
	u32 *hist = ksymlab_results.mt_hist[zid];

	/*
	 * Step from the zone's first pfn, as /proc/pagetypeinfo does: a zone
	 * that starts inside a pageblock (DMA32 at pfn 1) still owns that block.
	 */
	for (pfn = zone->zone_start_pfn; pfn < end; pfn += pageblock_nr_pages) {
		struct ksymlab_pageblock_sample *s;
		struct page *page;
		unsigned long mt;

		if (!pfn_valid(pfn))
			continue;
		page = pfn_to_page(pfn);
		if (page_zone(page) != zone)
			continue;
		mt = ksymlab_pfnblock_mt(page, pfn);
		if (mt < MIGRATE_TYPES)
			hist[mt]++;
		if (ksymlab_results.nr_pageblocks == KSYMLAB_MAX_PAGEBLOCKS)
			continue;
		s = &ksymlab_results.pageblocks[ksymlab_results.nr_pageblocks++];
		s->pfn = pageblock_start_pfn(pfn);
		s->nid = nid;
		s->zid = zid;
		s->mt = mt;
	}
}

/* Called by ksymlab_snapshot() with results_lock held and interrupts off. */
void ksymlab_snapshot_pageblocks(void)
{
	int nid, zid;

	ksymlab_results.nr_pageblocks = 0;
	memset(ksymlab_results.mt_hist, 0, sizeof(ksymlab_results.mt_hist));
	for_each_online_node(nid) {
		pg_data_t *pgdat = NODE_DATA(nid);

		for (zid = 0; zid < MAX_NR_ZONES; zid++) {
			struct zone *zone = &pgdat->node_zones[zid];

			if (populated_zone(zone))
				ksymlab_zone_blocks(zone, zid, nid);
		}
	}
}

int ksymlab_migratetype_show(struct seq_file *m, void *v)
{
	int nid, zid, mt;
	u32 i;

	ksymlab_lock_snapshot();
	seq_printf(m, "snapshot kind=migratetype seq=%u\n",
		   ksymlab_results.snapshot_seq);
	for (i = 0; i < ksymlab_results.nr_pageblocks; i++) {
		const struct ksymlab_pageblock_sample *s;

		s = &ksymlab_results.pageblocks[i];
		seq_printf(m, "pageblock node=%u zone=%s pfn=0x%lx mt=%u\n",
			   s->nid, NODE_DATA(s->nid)->node_zones[s->zid].name,
			   s->pfn, s->mt);
	}
	for_each_online_node(nid) {
		for (zid = 0; zid < MAX_NR_ZONES; zid++) {
			struct zone *zone = &NODE_DATA(nid)->node_zones[zid];

			if (!populated_zone(zone))
				continue;
			for (mt = 0; mt < MIGRATE_TYPES; mt++)
				seq_printf(m, "mthist node=%d zone=%s mt=%d count=%u\n",
					   nid, zone->name, mt,
					   ksymlab_results.mt_hist[zid][mt]);
		}
	}
	mutex_unlock(&ksymlab_results_lock);
	return 0;
}
