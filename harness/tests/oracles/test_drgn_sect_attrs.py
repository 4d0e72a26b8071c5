"""drgn's reading of a module's section addresses on both layouts of struct
module_sect_attrs (kernel/module/sysfs.c): up to 6.12, nsections entries of
{battr, address}; 7.2, the attribute group's NULL-ended bin_attrs with each
address in its bin_attribute's private. Fake objects stand in for drgn's."""

from types import SimpleNamespace as NS

from harness.oracles.drgn_vmcore import section_attrs


def val(v):
    return NS(value_=lambda: v)


def name(s):
    return NS(string_=lambda: s.encode())


def attrs_type(*members):
    return NS(type=NS(has_member=lambda m: m in members))


SECTIONS = {".text": 0xffffffffc0000000, ".data": 0xffffffffc0004000,
            ".bss": 0xffffffffc0005000}


def test_up_to_6_12_nsections_entries_each_with_its_address():
    entries = [NS(battr=NS(attr=NS(name=name(n))), address=val(a)) for n, a in SECTIONS.items()]
    # one entry more than nsections says: a reader past the count would take it
    entries.append(NS(battr=NS(attr=NS(name=name(".stale"))), address=val(1)))
    attrs = NS(type_=attrs_type("nsections", "attrs"), nsections=val(3), attrs=entries)
    assert section_attrs(attrs) == SECTIONS


class NullEnded(list):
    """bin_attrs: pointers, a NULL one last (value_() 0)."""

    def __getitem__(self, i):
        return super().__getitem__(i) if i < len(self) else val(0)


def test_7_2_the_groups_bin_attrs_up_to_null_with_private_as_the_address():
    # size, a neighbouring field, holds MODULE_SECT_READ_SIZE: not an address
    battrs = NullEnded(NS(value_=lambda: 1, attr=NS(name=name(n)), private=val(a), size=val(19))
                       for n, a in SECTIONS.items())
    attrs = NS(type_=attrs_type("grp", "attrs"), grp=NS(bin_attrs=battrs))
    assert section_attrs(attrs) == SECTIONS
