"""report.html's pageblock maps: a cell per pageblock of a variant, a magenta
outline where the module and gdb disagree, and the A/B view of two variants."""

from .html_parts import CELL, COLUMNS, DISAGREE_COLOUR, ESC, LABEL_W, PITCH, _attrs, _table, mt_colour
from .jsonrows import (mt_name, of_variant, pageblock_disagrees, pageblock_mt, pageblock_pfn,
                       pageblock_zone)
from ..checks.pageblock import MIGRATETYPES


def pageblocks(v):
    """A cell per pageblock row; rows about pageblock states (harness/checks/pageblock.py:
    skip bits, changes, types) have no pfn and no cell."""
    return [c for c in of_variant(v)
            if c["kind"] == "pageblock" and pageblock_pfn(c) is not None]


def _layout(rows, columns):
    """Cell positions: zones in order of appearance, each starting a new line."""
    zones, pos, y = [], {}, 0
    by_zone = {}
    for c in rows:
        z = pageblock_zone(c)
        if z not in by_zone:
            by_zone[z] = []
            zones.append(z)
        by_zone[z].append(c)
    labels = []
    for z in zones:
        labels.append((z, y))
        for i, c in enumerate(by_zone[z]):
            pos[c["key"]] = (LABEL_W + (i % columns) * PITCH, y + (i // columns) * PITCH)
        y += ((len(by_zone[z]) + columns - 1) // columns) * PITCH + 4
    return pos, labels, y


def _cell(c, x, y, variant, extra_class="", title_extra=""):
    mt = pageblock_mt(c) if c is not None else None
    s = c["sources"] if c is not None else {}
    cls = ["pb", f"mt-{mt}" if mt is not None else "absent"]
    disagree = c is not None and pageblock_disagrees(c)
    if disagree:
        cls.append("disagree")
    if extra_class:
        cls.append(extra_class)
    if c is None:
        title = "absent"
    else:
        title = f"{c['key']}: " + ", ".join(
            f"{k} {mt_name(s[k])}" for k in s) + \
            (f" - DISAGREE{': ' + c['reason'] if c.get('reason') else ''}" if disagree else "")
    title += title_extra
    out = [f'<rect class="{" ".join(cls)}"' + _attrs(
        x=x, y=y, width=CELL, height=CELL, fill=mt_colour(mt), data_variant=variant,
        data_key=c["key"] if c else None, data_mt=mt,
        data_gdb=s.get("gdb_bitmap") if c else None,
        data_disagree="1" if disagree else None) + f"><title>{ESC(title)}</title></rect>"]
    if disagree and s.get("gdb_bitmap") is not None:
        # the lower right half in gdb's colour: both types are visible
        out.append(f'<polygon class="pb-gdb" points="{x + CELL},{y} {x + CELL},{y + CELL} '
                   f'{x},{y + CELL}" fill="{mt_colour(s["gdb_bitmap"])}" '
                   f'pointer-events="none"/>')
    if mt is not None and mt not in MIGRATETYPES:
        out.append(f'<text x="{x + CELL / 2}" y="{y + CELL - 3}" text-anchor="middle" '
                   f'style="font-size:9px">{mt}</text>')
    return out


def pageblock_map(name, v, columns=COLUMNS):
    rows = pageblocks(v)
    if not rows:
        return f'<p class="nomap" data-variant="{ESC(name)}">{ESC(name)}: no pageblocks.</p>'
    pos, labels, height = _layout(rows, columns)
    width = LABEL_W + columns * PITCH
    bad = sum(pageblock_disagrees(c) for c in rows)
    out = [f'<figure class="pbmap" data-variant="{ESC(name)}" data-cells="{len(rows)}">',
           f"<figcaption>{ESC(name)}: {len(rows)} pageblocks, "
           f"{bad} where module and gdb disagree</figcaption>",
           f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'role="img" aria-label="pageblock map of {ESC(name)}">']
    for z, y in labels:
        out.append(f'<text x="0" y="{y + 11}">{ESC(z)}</text>')
    for c in rows:
        out += _cell(c, *pos[c["key"]], name)
    out.append("</svg></figure>")
    return "\n".join(out)


def _legend(rows_all):
    seen = sorted({pageblock_mt(c) for c in rows_all} - {None})
    items = []
    for mt in sorted(set(MIGRATETYPES) & set(range(4)) | set(seen)):
        items.append(f'<span class="sw" style="background:{mt_colour(mt)}"></span>'
                     f"{ESC(mt_name(mt))}"
                     f"{f' ({mt})' if mt in MIGRATETYPES else ''}")
    items.append(f'<span class="sw" style="background:#fff;border:3px solid '
                 f'{DISAGREE_COLOUR}"></span>module and gdb disagree (lower right half: '
                 f"gdb's type)")
    return '<p class="legend">' + "".join(items) + "</p>"


def ab_view(a, va, b, vb, columns=COLUMNS):
    ra, rb = {c["key"]: c for c in pageblocks(va)}, {c["key"]: c for c in pageblocks(vb)}
    keys = list(ra) + [k for k in rb if k not in ra]
    rows = [ra.get(k) or rb[k] for k in keys]
    pos, labels, height = _layout(rows, columns)
    differ = [k for k in keys if (pageblock_mt(ra[k]) if k in ra else None)
              != (pageblock_mt(rb[k]) if k in rb else None)]
    width = LABEL_W + columns * PITCH
    out = [f'<figure class="ab" data-a="{ESC(a)}" data-b="{ESC(b)}" '
           f'data-differ="{len(differ)}">',
           f"<figcaption>{ESC(a)} (left) and {ESC(b)} (right): {len(differ)} of {len(keys)} "
           f"pageblocks differ in type</figcaption>", '<div class="figs">']
    for name, side in ((a, ra), (b, rb)):
        out.append(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" '
                   f'height="{height + 16}" class="ab-side" data-variant="{ESC(name)}">')
        out.append(f'<text x="{LABEL_W}" y="11" style="font-weight:bold">{ESC(name)}</text>')
        for z, y in labels:
            out.append(f'<text x="0" y="{y + 27}">{ESC(z)}</text>')
        for k in keys:
            x, y = pos[k]
            diff = k in differ
            c = side.get(k)
            cell = _cell(c, x, y + 16, name, "ab-diff" if diff else "",
                         " - differs between the two variants" if diff else "")
            if c is None:      # keep the key on an absent cell so both sides line up
                cell[0] = cell[0].replace("<rect ", f'<rect data-key="{ESC(k)}" ', 1)
            out += cell
            if diff:
                out.append(f'<circle class="ab-mark" cx="{x + CELL / 2}" '
                           f'cy="{y + 16 + CELL / 2}" r="3" pointer-events="none"/>')
        out.append("</svg>")
    out.append("</div>")
    if differ:
        out.append(_table(["pageblock", a, b],
                          [[k, mt_name(pageblock_mt(ra[k]) if k in ra else None),
                            mt_name(pageblock_mt(rb[k]) if k in rb else None)]
                           for k in differ]))
    out.append("</figure>")
    return "\n".join(out)
