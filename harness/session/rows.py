"""The rows of a live guest, from run's own code: variantjob.compare() on the data
port, gdb's reading (written by `ksymlab rows` in gdbscripts/ksymlab_session.py) and
drgn's reading of the vmcore taken at the first snapshot, made a VariantResult by
variantjob.probe_result() with symcheck's rows, and the seed claims as run_job adds
them; with --lttng also the rows of the LTTng boot `run --lttng` makes
(variantjob.lttng_step: Debian's LTTng loaded in a guest of its own, started beside
the session's guest once gdb has the prompt), as run_variant adds them."""

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional, Tuple

from .. import variantjob
from ..checks import seedclaims, seeds
from ..errors import HarnessError
from ..guest import dataport
from ..oracles import drgn, gdb
from ..oracles.readings import GdbReading
from ..prepare import symcheck


@dataclass(frozen=True)
class Live:
    """One booted variant of a session: what its rows need besides the files."""
    variant: Any                    # prepare.variants.Variant
    tree: Any                       # the built tree
    ko: Path                        # the probe module
    vdir: Path                      # runs/<id>/<variant>/
    claims: Mapping[str, Any]       # what gdb and drgn read (variantjob.probe_claims)
    slide: int                      # the KASLR slide
    opts: Any                       # RunOptions
    dumped: Optional[Mapping[str, Any]] = None     # vmcore.take() at the first snapshot
    # --lttng: the future of variantjob.lttng_step(), the LTTng boot `run --lttng` makes
    lttng: Any = None


def gdb_reading(live):
    """gdb.json as gdb wrote it, refused names added as a run's GdbSession adds them."""
    path = live.vdir / "gdb.json"
    try:
        result = json.loads(path.read_text())
    except (OSError, ValueError) as e:
        raise HarnessError("verify", f"{path}: {e}") from None
    gdb.add_refused(result, live.claims, gdb.gdb_claims(live.claims)[1])
    return GdbReading.parse(result, str(path))


def checks(live):
    """Every row `run` reports for this variant's probe-module boot: (Check, ...)."""
    data = dataport.parse((live.vdir / "data.log").read_text(errors="replace"))
    truth = gdb_reading(live)
    drgn_truth = drgn.read(live.dumped, live.tree, live.claims, live.vdir,
                           live.variant.name, live.slide, keep=live.opts.keep_vmcore)
    g = variantjob.GuestReading(live.claims, data, truth, drgn_truth)
    found = variantjob.compare(live.variant, g, live.opts)
    result = variantjob.probe_result(live.variant, live.tree, found,
                                     symcheck.findings(live.ko, live.tree), lttng_rows(live))
    claims = seedclaims.variant_checks(live.tree, live.variant, seeds.superseded())
    return tuple(result.symbols) + tuple(result.values) + tuple(claims)


def lttng_rows(live):
    """The LTTng boot's rows (--lttng), once it has ended; () without --lttng."""
    if live.lttng is None:
        return ()
    return tuple(live.lttng.result()[0])


def ready(live):
    """Can a request be answered without waiting (the LTTng boot, if any, has ended)?
    The controller keeps reading the console meanwhile."""
    return live.lttng is None or live.lttng.done()


def lttng_answer(live):
    """lttng.json's content for `ksymlab lttng`: the LTTng boot's facts and rows."""
    if live.lttng is None:
        return {"error": "no LTTng in this session (start it with --lttng on a variant "
                         "with an LTTng series)"}
    rows, facts, _suite, _s = live.lttng.result()
    keep = ("version", "series", "kallsyms", "build_dir", "guest_s", "error")
    return {"facts": {k: facts[k] for k in keep if k in facts},
            "rows": list(row_dicts(rows))}


def row_dicts(rows) -> Tuple[dict, ...]:
    """What rows.json holds of each row: its id and its verdict's word (agree,
    disagree, unchecked; report.json's true, false, null)."""
    return tuple({"id": c.id, "agree": c.agreement.name.lower()} for c in rows)


def rows_answer(live):
    """rows.json's content: {"rows": [...]}."""
    return {"rows": list(row_dicts(checks(live)))}


def guarded(answer, live):
    """answer(live), or {"error": one line}: gdb waits for the file either way."""
    try:
        return answer(live)
    except HarnessError as e:
        return {"error": e.one_line()}
    except Exception as e:      # noqa: BLE001 - a bug here must not leave gdb waiting
        return {"error": f"ksymlab: internal error: {type(e).__name__}: {e}"}
