"""What the parts of report.html share: colours (Okabe-Ito derived), element
attributes, a table, and the geometry a pageblock map shares with its A/B view."""

import html

ESC = html.escape

# Okabe-Ito derived, distinguishable with the common colour-vision deficiencies.
MT_COLOURS = {0: "#d55e00", 1: "#9ecae1", 2: "#009e73", 3: "#e69f00", 4: "#0072b2",
              5: "#555555"}
UNKNOWN_COLOUR = "#cccccc"      # a migratetype number not in MIGRATETYPES
ABSENT_COLOUR = "#ffffff"
# Outline of a pageblock the module and gdb disagree on. No other element of
# the page uses this colour, so a screenshot can be searched for it.
DISAGREE_COLOUR = "#e6007e"
AB_COLOUR = "#111111"

CELL, PITCH, COLUMNS, LABEL_W = 14, 16, 32, 64


STEP_COLOURS = {"kernel": "#8c8c8c", "module": "#0072b2", "initramfs": "#56b4e9",
                "boot": "#009e73", "gdb": "#e69f00", "guest_rest": "#cc79a7",
                "drgn": "#f0e442", "compare": "#d55e00", "lttng": "#5d3a9b",
                "suite": "#999933"}


def mt_colour(mt):
    if mt is None:
        return ABSENT_COLOUR
    return MT_COLOURS.get(mt, UNKNOWN_COLOUR)


def _attrs(**kw):
    return "".join(f' {k.replace("_", "-")}="{ESC(str(v))}"' for k, v in kw.items()
                   if v is not None)


def _table(head, rows, row_class=None):
    out = ["<table><tr>" + "".join(f"<th>{ESC(str(h))}</th>" for h in head) + "</tr>"]
    for i, r in enumerate(rows):
        cls = f' class="{row_class[i]}"' if row_class and row_class[i] else ""
        cells = []
        for x in r:
            text = "" if x is None else str(x)
            cells.append(f'<td{" class=long" if len(text) > 60 else ""}>{ESC(text)}</td>')
        out.append(f"<tr{cls}>" + "".join(cells) + "</tr>")
    out.append("</table>")
    return "\n".join(out)
