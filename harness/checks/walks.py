"""Walks with more than one element (issue 43): the confusions of a walk.

A walk (an interrupt's actions, a disk's partitions) can stop after its first
element, visit one element too many, or take an element's value from its
neighbour. Each is a confusion of the audit (checks/confusions.py) whose evidence
is built here from an oracle's own walk (gdb's, sysfs'), never from the walk
under test: [right, confused] per row. A state in which every walk has one
element cannot tell the first two apart and gives no evidence for the third:
the audit calls them weak.
"""

from .confusions import pair

FIRST = "only the first element"
ONE_MORE = "one element too many"
NEIGHBOUR = "the neighbour's element"
FIRST_DISK = "only the first disk"
# A disk a walk of the visible disks must skip (blk_walk_visible_disks(), the block
# statedump) listed, or one a walk of the whole block class must list skipped.
INVISIBLE_HIDDEN = "an invisible disk listed: hidden"
INVISIBLE_EMPTY = "an invisible disk listed: without capacity"


def first_and_one_more(elements, extra, prefix=""):
    """{confusion: [right, confused]} of one walk's `elements` (its oracle's, in walk
    order): the walk cut after its first element, and the walk that visits `extra`
    too (None: no evidence)."""
    elements = list(elements)
    out = {prefix + FIRST: pair(elements, elements[:1])}
    if extra is not None:
        out[prefix + ONE_MORE] = pair(elements, elements + [extra])
    return out


def walk_neighbours(elements, prefix=""):
    """The walk with each element's value taken from the next one (the last from the
    one before): {} for a walk of one element, which has no neighbour."""
    elements = list(elements)
    if len(elements) < 2:
        return {}
    return {prefix + NEIGHBOUR: pair(elements, elements[1:] + elements[-2:-1])}


def neighbour_of(name, siblings):
    """The value of the element after `name` among `siblings` ([(name, value)] in walk
    order), of the one before for the last; None when it is alone."""
    names = [n for n, _ in siblings]
    if name not in names or len(names) < 2:
        return None
    k = names.index(name)
    return siblings[k + 1 if k + 1 < len(names) else k - 1][1]
