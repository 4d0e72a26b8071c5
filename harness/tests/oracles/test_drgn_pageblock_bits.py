"""drgn's pageblock arithmetic on both layouts of enum pageblock_bits: up to 6.12
(PB_migrate_end, PB_migrate_skip, NR_PAGEBLOCK_BITS) and 7.2 (PB_migrate_0..2,
PB_compact_skip, PB_migrate_isolate, __NR_PAGEBLOCK_BITS rounded up to a power of
two). A fake program holds the enumerators, with the values of the two trees'
include/linux/pageblock-flags.h (base.config: COMPACTION and MEMORY_ISOLATION)."""

from types import SimpleNamespace

from harness.oracles import drgn_pageblocks

MIGRATE = {"MIGRATE_UNMOVABLE": 0, "MIGRATE_MOVABLE": 1, "MIGRATE_RECLAIMABLE": 2,
           "MIGRATE_ISOLATE": 4}
LAYOUT_6 = {"PB_migrate": 0, "PB_migrate_end": 2, "PB_migrate_skip": 3,
            "NR_PAGEBLOCK_BITS": 4, **MIGRATE}
LAYOUT_7_2 = {"PB_migrate_0": 0, "PB_migrate_1": 1, "PB_migrate_2": 2, "PB_compact_skip": 3,
              "PB_migrate_isolate": 4, "__NR_PAGEBLOCK_BITS": 5, **MIGRATE}


class FakeProg:
    def __init__(self, enums):
        self.enums = enums

    def __getitem__(self, name):
        if name not in self.enums:
            raise KeyError(name)
        return SimpleNamespace(value_=lambda: self.enums[name])


def test_the_two_layouts():
    assert drgn_pageblocks.pageblock_bits(FakeProg(LAYOUT_6)) == (4, 0b111, 3, None)
    # 5 bits round up to 8 per pageblock: a reader stepping by 5 reads the wrong block
    assert drgn_pageblocks.pageblock_bits(FakeProg(LAYOUT_7_2)) == (8, 0b111, 3, 4)


def _geometry(enums):
    nr_bits, mask, skip, iso = drgn_pageblocks.pageblock_bits(FakeProg(enums))
    return SimpleNamespace(pfn_section_shift=15, pages_per_section=1 << 15, order=9,
                           nr_bits=nr_bits, bits_per_long=64, mt_mask=mask, skip_bit=skip,
                           iso_bit=iso, isolate=enums["MIGRATE_ISOLATE"])


def _section(word):
    flag = SimpleNamespace(value_=lambda: word)
    return SimpleNamespace(usage=SimpleNamespace(pageblock_flags=[flag]))


def test_a_7_2_block_with_the_isolate_bit_reads_as_isolate_and_its_neighbours_do_not():
    geo = _geometry(LAYOUT_7_2)
    # block 0: MOVABLE, skip set; block 1: RECLAIMABLE kept under the isolate bit;
    # block 2: UNMOVABLE (8 bits each)
    word = (0b1001 | (0b10010 << 8) | (0 << 16))
    ms = _section(word)
    block = 1 << geo.order
    assert drgn_pageblocks.block_mt(geo, 0, ms) == (1, 1)
    assert drgn_pageblocks.block_mt(geo, block, ms) == (4, 0)
    assert drgn_pageblocks.block_mt(geo, 2 * block, ms) == (0, 0)


def test_a_6_12_block_keeps_its_migratetype_bits():
    geo = _geometry(LAYOUT_6)
    ms = _section(0b1001 | (0b0100 << 4))         # MOVABLE + skip, then ISOLATE as a type
    assert drgn_pageblocks.block_mt(geo, 0, ms) == (1, 1)
    assert drgn_pageblocks.block_mt(geo, 1 << geo.order, ms) == (4, 0)
