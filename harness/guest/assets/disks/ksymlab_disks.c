// SPDX-License-Identifier: GPL-2.0
/*
 * ksymlab_disks: a guest test module that adds two bio-based disks a walk
 * of the visible disks (blk_walk_visible_disks() of the v2 series, LTTng's
 * block statedump, /proc/partitions) must skip, while a walk of the whole
 * block class lists them (issue 43):
 *
 *   ksymhide   GENHD_FL_HIDDEN, 8 MiB: only its hiddenness excludes it
 *   ksymempty  visible, capacity 0
 *
 * Both take their dev_t from the extended range (major 0, no minors: see
 * device_add_disk()); a hidden disk's device gets none, its part0->bd_dev
 * does. Nothing reads or writes them: every bio fails.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bio.h>
#include <linux/blkdev.h>
#include <linux/err.h>
#include <linux/module.h>
#include <linux/numa.h>

#define KSYMLAB_HIDDEN_SECTORS	(8 * 1024 * 1024 / SECTOR_SIZE)

static void ksymlab_disks_submit_bio(struct bio *bio)
{
	bio_io_error(bio);
}

static const struct block_device_operations ksymlab_disks_fops = {
	.owner		= THIS_MODULE,
	.submit_bio	= ksymlab_disks_submit_bio,
};

static struct gendisk *ksymlab_hidden;
static struct gendisk *ksymlab_empty;

static struct gendisk *ksymlab_disks_alloc(void)
{
	struct gendisk *disk;

#ifdef KSYMLAB_BLK_ALLOC_DISK_LIMITS
	disk = blk_alloc_disk(NULL, NUMA_NO_NODE);
#else
	disk = blk_alloc_disk(NUMA_NO_NODE);
	if (!disk)
		disk = ERR_PTR(-ENOMEM);
#endif
	return disk;
}

static struct gendisk *ksymlab_disks_add(const char *name, int flags, sector_t sectors)
{
	struct gendisk *disk = ksymlab_disks_alloc();
	int ret;

	if (IS_ERR(disk))
		return disk;
	strscpy(disk->disk_name, name, DISK_NAME_LEN);
	disk->fops = &ksymlab_disks_fops;
	disk->flags |= flags;
	set_capacity(disk, sectors);
	ret = add_disk(disk);
	if (ret) {
		put_disk(disk);
		return ERR_PTR(ret);
	}
	/* the guest init reads it from dmesg: name, dev, hidden, sectors */
	pr_info("added %s %u:%u %d %llu\n", disk->disk_name,
		MAJOR(disk_devt(disk)), MINOR(disk_devt(disk)),
		!!(disk->flags & GENHD_FL_HIDDEN),
		(unsigned long long)get_capacity(disk));
	return disk;
}

static void ksymlab_disks_remove(struct gendisk *disk)
{
	del_gendisk(disk);
	put_disk(disk);
}

static int __init ksymlab_disks_init(void)
{
	ksymlab_hidden = ksymlab_disks_add("ksymhide", GENHD_FL_HIDDEN,
					   KSYMLAB_HIDDEN_SECTORS);
	if (IS_ERR(ksymlab_hidden))
		return PTR_ERR(ksymlab_hidden);
	ksymlab_empty = ksymlab_disks_add("ksymempty", 0, 0);
	if (IS_ERR(ksymlab_empty)) {
		ksymlab_disks_remove(ksymlab_hidden);
		return PTR_ERR(ksymlab_empty);
	}
	return 0;
}

static void __exit ksymlab_disks_exit(void)
{
	ksymlab_disks_remove(ksymlab_empty);
	ksymlab_disks_remove(ksymlab_hidden);
}

module_init(ksymlab_disks_init);
module_exit(ksymlab_disks_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("ksymlab guest state: a hidden disk and a disk without capacity");
