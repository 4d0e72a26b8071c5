"""report.html as a person sees it: loaded in headless Chromium from disk.

No kernel is needed (a hand-written report.json renders the page), so these
are not e2e tests. What is checked is the DOM after Chromium loaded the page
and, for the outlines, the pixels of a screenshot.
"""

import json
from html.parser import HTMLParser

import pytest

from harness.tests import browser
from harness.report import html, html_parts
from report_fixture import clean_report, make_report, pageblock, same_pageblocks

pytestmark = pytest.mark.skipif(browser.chromium() is None,
                                reason="chromium not installed (harness/debian-packages.txt)")

WINDOW = (1280, 1500)     # the two-variant pages' maps and A/B view fit in it


class Elements(HTMLParser):
    """Every element of a DOM dump with its attributes and the figures it is in."""

    def __init__(self, text):
        super().__init__()
        self.elements, self.stack = [], []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        a["class"] = a.get("class", "").split()
        figs = [x for x in self.stack if x[0] == "figure"]
        el = {"tag": tag, "attrs": a, "figure": dict(figs[-1][1]) if figs else None,
              "svg": next((dict(x[1]) for x in reversed(self.stack) if x[0] == "svg"), None)}
        self.elements.append(el)
        if tag not in ("rect", "circle", "polygon", "line", "img", "meta", "br", "input"):
            self.stack.append((tag, attrs))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if self.stack and self.stack[-1][0] == tag:
            self.stack.pop()

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def select(self, tag, cls=None, **attrs):
        return [e for e in self.elements if e["tag"] == tag
                and (cls is None or cls in e["attrs"]["class"])
                and all(e["attrs"].get(k.replace("_", "-")) == v for k, v in attrs.items())]


def load(tmp_path, rep, name="report.html"):
    page = tmp_path / name
    page.write_text(html.render(rep))
    dom, console = browser.dump_dom(page)
    return page, Elements(dom), console


def outline_boxes(page, tmp_path, colour):
    png = browser.screenshot(page, tmp_path / (page.stem + ".png"), *WINDOW)
    _, _, rows = browser.read_png(png)
    return browser.clusters(rows, browser.hex_rgb(colour))


def cell_sized(box):
    """A box of about one cell and its outline (14 px + a 3 px stroke, some rounding)."""
    x0, y0, x1, y1 = box
    return 12 <= x1 - x0 + 1 <= 20 and 12 <= y1 - y0 + 1 <= 20


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("html")
    rep = make_report()
    return (rep,) + load(tmp, rep)


def test_page_loads_without_console_errors(full):
    rep, page, dom, console = full
    assert console == []
    assert dom.select("footer", id="end"), "the page did not load to its end"
    assert dom.select("title")
    # nothing on the page may be fetched: no external source, script or stylesheet
    assert not dom.select("script") and not dom.select("link")
    assert not [e for e in dom.elements if any(str(v).startswith(("http:", "https:", "//"))
                                               for k, v in e["attrs"].items()
                                               if k in ("src", "href"))]


def test_the_console_check_sees_an_error(tmp_path):
    """The check above must be able to fail: a page that fetches is refused and logged."""
    page = tmp_path / "bad.html"
    page.write_text(html.render(make_report(("exports",))).replace(
        '<footer id="end">', '<img src="http://example.invalid/x.png"><footer id="end">'))
    _, console = browser.dump_dom(page)
    assert any("example.invalid" in line for line in console), console


def test_one_cell_per_pageblock_in_each_map(full):
    rep, page, dom, console = full
    maps = dom.select("figure", "pbmap")
    assert [m["attrs"]["data-variant"] for m in maps] == list(rep["variants"])
    for name, v in rep["variants"].items():
        keys = [c["key"] for c in v["values"] if c["kind"] == "pageblock"]
        cells = [e for e in dom.select("rect", "pb")
                 if e["figure"] and "pbmap" in e["figure"].get("class", "")
                 and e["figure"].get("data-variant") == name]
        assert len(keys) == 128
        assert len(cells) == len(keys), name
        assert [c["attrs"]["data-key"] for c in cells] == keys
        for c, row in zip(cells, (c for c in v["values"] if c["kind"] == "pageblock")):
            assert c["attrs"]["data-mt"] == str(row["sources"]["module"])
    # the fixture's disagreement (kallsyms) is the one outlined cell of the maps
    bad = [e for e in dom.select("rect", "disagree")
           if e["figure"] and "pbmap" in e["figure"].get("class", "")]
    assert [(e["attrs"]["data-variant"], e["attrs"]["data-key"]) for e in bad] == \
        [("kallsyms", "DMA32 pfn 0x3000")]
    # an unknown migratetype gets the neutral colour and its number
    unknown = [e for e in dom.select("rect", "mt-7") if e["figure"]
               and e["figure"].get("data-variant") == "bpf13"]
    assert unknown and unknown[0]["attrs"]["fill"] == html_parts.UNKNOWN_COLOUR


def test_priority_chart_and_timings_per_variant(full):
    rep, page, dom, console = full
    for name in rep["variants"]:
        tasks = [e for e in dom.select("g", "task") if e["figure"]["data-variant"] == name]
        assert len(tasks) == 13
        steps = [e for e in dom.select("rect", "step") if e["attrs"]["data-variant"] == name]
        # the fixture's steps (no drgn or lttng lap), in the order they run
        assert [s["attrs"]["data-step"] for s in steps] == [
            "kernel", "module", "initramfs", "boot", "gdb", "guest_rest", "compare"]
    bad = dom.select("g", "prio-mismatch")
    assert [(e["figure"]["data-variant"], e["attrs"]["data-key"], e["attrs"]["data-module"],
             e["attrs"]["data-expected"]) for e in bad] == [("stock", "pid 103", "21", "25")]


def test_doctored_disagreement_is_outlined(tmp_path):
    """module says Movable, gdb's bitmap Unmovable for one pageblock: only that cell is outlined,
    in the DOM and on the screen."""
    rep = clean_report()
    clean_page, clean_dom, _ = load(tmp_path, rep, "clean.html")
    assert clean_dom.select("rect", "disagree") == []
    # the colour is in the legend's swatch and nowhere else
    (legend,) = outline_boxes(clean_page, tmp_path, html_parts.DISAGREE_COLOUR)

    doctored = json.loads(json.dumps(rep))
    cell = pageblock(doctored, "kallsyms", "DMA32 pfn 0x9000")
    assert cell["sources"]["module"] == cell["sources"]["gdb_bitmap"] == 1
    cell["sources"]["gdb_bitmap"] = 0           # the agree flag is left alone
    page, dom, console = load(tmp_path, doctored, "doctored.html")
    assert console == []
    outlined = dom.select("rect", "disagree")
    # the kallsyms map and the right side of the exports/kallsyms A/B view
    assert len(outlined) == 2
    assert {(e["attrs"]["data-variant"], e["attrs"]["data-key"]) for e in outlined} == \
        {("kallsyms", "DMA32 pfn 0x9000")}
    assert all(e["attrs"]["data-gdb"] == "0" and e["attrs"]["data-mt"] == "1" for e in outlined)
    boxes = outline_boxes(page, tmp_path, html_parts.DISAGREE_COLOUR)
    assert legend in boxes
    boxes.remove(legend)
    assert len(boxes) == 2 and all(cell_sized(b) for b in boxes), boxes
    assert boxes[0][1] > legend[1]         # below the legend, in the maps


def test_ab_view_marks_a_pageblock_whose_type_differs(tmp_path):
    rep = same_pageblocks(clean_report())
    same_page, same_dom, _ = load(tmp_path, rep, "same.html")
    (ab,) = same_dom.select("figure", "ab")
    assert ab["attrs"]["data-differ"] == "0" and same_dom.select("rect", "ab-diff") == []
    assert outline_boxes(same_page, tmp_path, html_parts.AB_COLOUR) == []

    rep = json.loads(json.dumps(rep))
    cell = pageblock(rep, "kallsyms", "DMA32 pfn 0xa000")
    for k in cell["sources"]:
        cell["sources"][k] = 2                 # Reclaimable everywhere: no disagreement
    page, dom, console = load(tmp_path, rep, "ab.html")
    assert console == []
    (ab,) = dom.select("figure", "ab")
    assert ab["attrs"]["data-differ"] == "1"
    marked = dom.select("rect", "ab-diff")
    assert sorted((e["svg"]["data-variant"], e["attrs"]["data-key"], e["attrs"]["data-mt"])
                  for e in marked) == [("exports", "DMA32 pfn 0xa000", "1"),
                                       ("kallsyms", "DMA32 pfn 0xa000", "2")]
    assert len(dom.select("circle", "ab-mark")) == 2
    assert dom.select("rect", "disagree") == []
    boxes = outline_boxes(page, tmp_path, html_parts.AB_COLOUR)
    cells = [b for b in boxes if cell_sized(b)]
    assert len(cells) == 2, boxes
    # the other pixels of that colour are the white dots' rims inside those cells
    assert all(any(c[0] <= b[0] and b[2] <= c[2] and c[1] <= b[1] and b[3] <= c[3]
                   for c in cells) for b in boxes), boxes
    # side by side: the same row, the right one a map's width further
    (l, r) = sorted(cells)
    assert abs(l[1] - r[1]) <= 1 and r[0] - l[0] > html_parts.COLUMNS * html_parts.PITCH
