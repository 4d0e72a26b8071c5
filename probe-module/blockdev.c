// SPDX-License-Identifier: GPL-2.0
/*
 * Sampler: every block device, found by walking the block class for devices
 * of the disk type (whole disks), then each disk's partition table.
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

int ksymlab_blockdev_show(struct seq_file *m, void *v)
{
	struct class_dev_iter iter;
	struct device *dev;

	if (!ksymlab_available(KSYMLAB_BLOCKDEV)) {
		seq_puts(m, "unavailable sampler=blockdev\n");
		return 0;
	}
	mutex_lock(&ksymlab_results_lock);
	ksymlab_results.nr_bdevs = 0;
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
	while ((dev = class_dev_iter_next(&iter))) {
		struct gendisk *disk = dev_to_disk(dev);
		struct block_device *part;
		unsigned long idx;

		ksymlab_bdev(m, disk->part0, disk->disk_name, true);
		rcu_read_lock();
		xa_for_each_start(&disk->part_tbl, idx, part, 1)
			ksymlab_bdev(m, part, dev_name(&part->bd_device), false);
		rcu_read_unlock();
	}
	class_dev_iter_exit(&iter);
	mutex_unlock(&ksymlab_results_lock);
	return 0;
}
