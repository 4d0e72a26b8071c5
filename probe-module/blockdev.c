// SPDX-License-Identifier: GPL-2.0
/*
 * Sampler: every block device, found by walking the block class for devices
 * of the disk type (whole disks), then each disk's partition table. On the
 * v2 series the kernel walks the disks (blk_walk_visible_disks(): those with
 * a capacity that are not hidden) and the module reads each partition table.
 */

#include <linux/blkdev.h>
#include <linux/device.h>
#include <linux/kdev_t.h>
#include <linux/seq_file.h>
#include <linux/xarray.h>

#include "ksymlab.h"

static void ksymlab_bdev(struct seq_file *m, struct block_device *bdev,
			 const char *name, bool whole)
{
	u64 sectors = bdev_nr_sectors(bdev);
	u32 n = ksymlab_results.nr_bdevs;

	if (n < KSYMLAB_MAX_BDEVS) {
		ksymlab_results.bdevs[n].dev = bdev->bd_dev;
		ksymlab_results.bdevs[n].sectors = sectors;
		strscpy(ksymlab_results.bdevs[n].name, name, KSYMLAB_NAME_LEN);
		ksymlab_results.nr_bdevs = n + 1;
	}
	seq_printf(m, "bdev name=%s dev=%u:%u sectors=%llu whole=%d\n", name,
		   MAJOR(bdev->bd_dev), MINOR(bdev->bd_dev), sectors, whole);
}

static int ksymlab_disk(struct gendisk *disk, void *data)
{
	struct seq_file *m = data;
	struct block_device *part;
	unsigned long idx;

	ksymlab_bdev(m, disk->part0, disk->disk_name, true);
	rcu_read_lock();
	xa_for_each_start(&disk->part_tbl, idx, part, 1)
		ksymlab_bdev(m, part, dev_name(&part->bd_device), false);
	rcu_read_unlock();
	return 0;
}

#ifdef KSYMLAB_V2
static void ksymlab_walk_disks(struct seq_file *m)
{
	blk_walk_visible_disks(ksymlab_disk, m);
}
#else
static void ksymlab_walk_disks(struct seq_file *m)
{
	struct class_dev_iter iter;
	struct device *dev;

#ifdef KSYMLAB_CONST_CLASS_ITER
	class_dev_iter_init(&iter, ksymlab_block_class(), NULL,
			    ksymlab_disk_type());
#else
	/*
	 * Before v6.4 (Kbuild sets KSYMLAB_CONST_CLASS_ITER from v6.4 on),
	 * class_dev_iter_init() took a non-const class; the module only
	 * reads it either way.
	 */
	class_dev_iter_init(&iter, (struct class *)ksymlab_block_class(), NULL,
			    ksymlab_disk_type());
#endif
	while ((dev = class_dev_iter_next(&iter)))
		ksymlab_disk(dev_to_disk(dev), m);
	class_dev_iter_exit(&iter);
}
#endif

int ksymlab_blockdev_show(struct seq_file *m, void *v)
{
	if (!ksymlab_available(KSYMLAB_BLOCKDEV)) {
		seq_puts(m, "unavailable sampler=blockdev\n");
		return 0;
	}
	mutex_lock(&ksymlab_results_lock);
	ksymlab_results.nr_bdevs = 0;
	ksymlab_walk_disks(m);
	mutex_unlock(&ksymlab_results_lock);
	return 0;
}
