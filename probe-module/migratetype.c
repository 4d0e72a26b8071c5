// SPDX-License-Identifier: GPL-2.0
/*
 * Sampler: the migratetype of every pageblock of every populated zone,
 * through get_pfnblock_flags_mask(), plus a histogram per zone.
 */

#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/nodemask.h>
#include <linux/pageblock-flags.h>
#include <linux/seq_file.h>

#include "ksymlab.h"

static void ksymlab_zone_blocks(struct seq_file *m, struct zone *zone,
				int zid, int nid)
{
	unsigned long pfn, end = zone_end_pfn(zone);
	u32 *hist = ksymlab_results.mt_hist[zid];
	int mt;

	/*
	 * Step from the zone's first pfn, as /proc/pagetypeinfo does: a zone
	 * that starts inside a pageblock (DMA32 at pfn 1) still owns that block.
	 */
	for (pfn = zone->zone_start_pfn; pfn < end; pfn += pageblock_nr_pages) {
		struct page *page;

		if (!pfn_valid(pfn))
			continue;
		page = pfn_to_page(pfn);
		if (page_zone(page) != zone)
			continue;
		mt = ksymlab_pfnblock_flags(page, pfn, MIGRATETYPE_MASK);
		if (mt >= 0 && mt < MIGRATE_TYPES)
			hist[mt]++;
		seq_printf(m, "pageblock node=%d zone=%s pfn=0x%lx mt=%d\n",
			   nid, zone->name, pageblock_start_pfn(pfn), mt);
	}
	for (mt = 0; mt < MIGRATE_TYPES; mt++)
		seq_printf(m, "mthist node=%d zone=%s mt=%d count=%u\n",
			   nid, zone->name, mt, hist[mt]);
}

int ksymlab_migratetype_show(struct seq_file *m, void *v)
{
	int nid, zid;

	mutex_lock(&ksymlab_results_lock);
	memset(ksymlab_results.mt_hist, 0, sizeof(ksymlab_results.mt_hist));
	for_each_online_node(nid) {
		pg_data_t *pgdat = NODE_DATA(nid);

		for (zid = 0; zid < MAX_NR_ZONES; zid++) {
			struct zone *zone = &pgdat->node_zones[zid];

			if (populated_zone(zone))
				ksymlab_zone_blocks(m, zone, zid, nid);
		}
	}
	mutex_unlock(&ksymlab_results_lock);
	return 0;
}
