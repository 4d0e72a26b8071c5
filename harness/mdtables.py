"""The tables of report.md: write one (table, cell) and measure a markdown file's
(how many columns the widest one has).

report.md must stay readable in a terminal, so no table in it may be wider
than MAX_COLUMNS: table() asserts it for every table it writes, and the
report's tests check a whole file with widest().

    /usr/bin/python3 -m harness.mdtables runs/latest/report.md
"""

import re
import sys

MAX_COLUMNS = 8

# A cell boundary is a pipe not escaped with a backslash.
_PIPE = re.compile(r"(?<!\\)\|")


def cell(x):
    """A value as one cell: None is empty, a pipe escaped, on one line."""
    return "" if x is None else str(x).replace("|", "\\|").replace("\n", " ")


def table(out, head, rows):
    """Append a markdown table and a blank line to `out`, a list of lines."""
    assert len(head) <= MAX_COLUMNS, head
    out.append("| " + " | ".join(head) + " |")
    out.append("|" + "---|" * len(head))
    for r in rows:
        out.append("| " + " | ".join(cell(x) for x in r) + " |")
    out.append("")


def columns(line):
    """Cells of one table line `| a | b |` (leading and trailing pipes optional)."""
    s = line.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    return len(_PIPE.split(s))


def tables(text):
    """[(first line number, widest row in columns)] for each table of the text."""
    out, start, width, fenced = [], None, 0, False
    for n, line in enumerate(text.splitlines() + [""], 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        is_row = not fenced and line.lstrip().startswith("|")
        if is_row:
            if start is None:
                start, width = n, 0
            width = max(width, columns(line))
        elif start is not None:
            out.append((start, width))
            start = None
    return out


def widest(text):
    return max((w for _, w in tables(text)), default=0)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    status = 0
    for path in argv:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        w = widest(text)
        print(f"{path}: {len(tables(text))} tables, widest {w} columns")
        status |= w > MAX_COLUMNS
    return status


if __name__ == "__main__":
    sys.exit(main())
