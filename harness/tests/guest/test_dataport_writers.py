"""The data port's schema (harness/guest/dataport.py KINDS) against its writers:
every line format the guest init, its programs and the probe module print
parses, with every required key, and every field of the schema is printed
by some writer. A key renamed on one side only fails here, not in a guest."""

import re

import pytest

from harness import paths
from harness.guest import dataport

ASSETS = paths.REPO / "harness" / "guest" / "assets"
# LTTng's guest writes its own port (harness/lttng/boot/guestlines.py)
C_FILES = sorted(p for p in [*ASSETS.glob("*.[ch]"), *(paths.REPO / "probe-module").glob("*.c")]
                 if not p.name.startswith("lttng"))
C_FORMAT = re.compile(r'(?:\bseq_printf\s*\(\s*m\s*,|\bseq_puts\s*\(\s*m\s*,|\bprintf\s*\()'
                      r'\s*"((?:[^"\\]|\\.)*)"')
# echo "..." [> "$DATA"] and awk's printf "...\n"
SH_ECHO = re.compile(r'^\s*echo "(.*?)"(?:\s*>\s*"\$DATA")?\s*(?:\|\|.*)?$')
SH_AWK = re.compile(r'printf "([^"]*)\\n"')


def _formats():
    """(where, format) of every string a writer prints."""
    out = []
    for path in C_FILES:
        for m in C_FORMAT.finditer(path.read_text()):
            out.append((path.name, m.group(1)))
    for n, line in enumerate((ASSETS / "init").read_text().splitlines(), 1):
        for m in [SH_ECHO.match(line), *SH_AWK.finditer(line)]:
            if m:
                out.append((f"init:{n}", m.group(1)))
    return out


def render(fmt):
    """The line a format prints with every conversion and variable as 1, a later
    snapshot's `kind%s` or `kind@$1` as `kind@2`."""
    text = fmt.replace("\\n", "").replace("\\t", " ")
    kind, sep, rest = text.partition(" ")
    kind = re.sub(r"(%s|@\$1)$", "@2", kind)
    rest = re.sub(r"%[-0-9.]*(?:ll|l|z|h)*[dusx]", "1", rest)
    rest = re.sub(r"\$\(\([^()]*\)\)|\$\([^()]*\)|\$\{[^}]*\}|\$[A-Za-z_0-9*]+", "1", rest)
    return kind + sep + rest


def _kind(line):
    return line.split(" ", 1)[0].split("@", 1)[0]


WRITTEN = [(where, fmt) for where, fmt in _formats() if _kind(render(fmt)) in dataport.KINDS]


def test_the_writers_were_found():
    assert len(WRITTEN) > 40
    assert {_kind(render(f)) for _, f in WRITTEN} == set(dataport.KINDS)


@pytest.mark.parametrize("where,fmt", WRITTEN, ids=[f"{w}:{f[:30]}" for w, f in WRITTEN])
def test_every_line_a_writer_prints_parses(where, fmt):
    dataport.parse(f"{dataport.BEGIN} variant=t\n{render(fmt)}\n{dataport.END}\n")


def test_every_field_of_the_schema_is_written():
    # a key a writer prints on a line of its own (threads.c " pi_owner=%d")
    keys = {k for _, f in _formats() for k in re.findall(r"(?:^| )([a-z_0-9]+)=", f)}
    for kind, cls in dataport.KINDS.items():
        unwritten = [n for n in dataport.SCHEMA.get(kind, {}) if n not in keys]
        assert unwritten == [], f"{kind}: {unwritten}"
