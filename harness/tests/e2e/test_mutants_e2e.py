"""One series mutant end to end (the rest run in `make mutants`): patch 0004 edited to
EXPORT_SYMBOL(task_prio), built as a tail-derived tree; the seed claims of the
exports series must fail exactly on 5/9, and hold on the unedited tree."""

import pytest

from harness.prepare import kernel, symcheck, variants
from harness.tools import mutants
from harness import paths
from harness.checks import seedclaims

pytestmark = pytest.mark.e2e

ALL = tuple(f"{i}/9" for i in range(1, 10))
WAIVED = ("1/9", "7/9")


def _tree(patches_root):
    (v,) = variants.select(["exports"], patches_root)
    return kernel.prepare(v, paths.cache_root())


def test_the_task_prio_mutant_fails_only_its_seed_claim(tmp_path):
    symcheck.ensure_built()
    good = seedclaims.checks(_tree(paths.REPO / "patches").src, ALL, skip=WAIVED)
    assert good and all(c.agrees for c in good)
    (m,) = [x for x in mutants.load() if x.id == "series-task_prio-exported-to-all"]
    tree = _tree(mutants.series_copy(m, tmp_path / "patches"))
    rows = seedclaims.checks(tree.src, ALL, skip=WAIVED)
    assert [c.key for c in rows if not c.agrees] == ["5/9/export/task_prio"]
    (row,) = [c for c in rows if not c.agrees]
    assert row.get("symvers") == row.get("ksymtab") == "EXPORT_SYMBOL"
