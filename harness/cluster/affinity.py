"""Which worker a variant job prefers: one that already holds its kernel tree.

The client asks every worker which of the run's tree keys its own cache holds
complete (held_trees runs on each worker), then gives each job the holders of
its tree. The restriction is loose (Dask's
allow_other_workers): a job whose holders are all gone runs anywhere and
builds its tree there.
"""

from dataclasses import dataclass

from ..prepare import cache


def held_trees(keys, cache_root=None):
    """On a worker: the keys among `keys` whose tree its cache holds complete."""
    from .. import paths
    root = cache_root or paths.cache_root()
    return sorted(k for k in keys if cache.is_complete(root, "trees", k))


@dataclass(frozen=True)
class Placement:
    variant: str
    workers: tuple          # preferred workers, empty: any worker
    reason: str             # why, for the progress line and report


def choose(jobs, holdings):
    """jobs: [(variant, tree_key)]; holdings: {worker address: keys it holds}.
    One Placement per job: every holder of its tree (Dask picks the least busy
    of them, and any worker once none of them is left), or none."""
    out = []
    for variant, key in jobs:
        holders = tuple(sorted(w for w, keys in holdings.items() if key in keys))
        why = (f"held by {', '.join(holders)}" if holders
               else "no worker holds its tree: the worker that runs it builds it")
        out.append(Placement(variant, holders, why))
    return out
