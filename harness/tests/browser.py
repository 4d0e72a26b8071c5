"""Headless Chromium for looking at report.html as a person would, and PNG pixels.

Used by the report's tests (the DOM after loading, console errors, pixels of
a screenshot) and to make docs/report-html.png:

    /usr/bin/python3 -m harness.browser screenshot PAGE.html OUT.png WIDTH HEIGHT [X Y W H]

The PNG reader and writer handle what Chromium writes (8-bit RGB or RGBA,
not interlaced) with zlib alone.
"""

import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars")


def chromium():
    return shutil.which("chromium") or shutil.which("chromium-browser")


def run(page, *args, timeout=120):
    """Chromium on file `page` with a fresh profile; the CompletedProcess."""
    with tempfile.TemporaryDirectory(prefix="ksymlab-chromium-") as profile:
        return subprocess.run([chromium(), *FLAGS, f"--user-data-dir={profile}", *args,
                               Path(page).resolve().as_uri()],
                              capture_output=True, text=True, timeout=timeout)


def dump_dom(page):
    """(the DOM after load as HTML, console messages Chromium logged)."""
    p = run(page, "--dump-dom", "--enable-logging=stderr", "--v=0")
    if p.returncode != 0:
        raise RuntimeError(f"chromium failed ({p.returncode}): {p.stderr[-2000:]}")
    return p.stdout, console_messages(p.stderr)


def console_messages(stderr):
    """The page's console output (errors, CSP refusals, failed loads) in Chromium's log."""
    return [line for line in stderr.splitlines() if ":CONSOLE" in line
            or "Refused to" in line or "net::ERR_" in line]


def screenshot(page, png, width, height):
    p = run(page, f"--screenshot={png}", f"--window-size={width},{height}")
    if p.returncode != 0 or not Path(png).is_file():
        raise RuntimeError(f"chromium screenshot failed ({p.returncode}): {p.stderr[-2000:]}")
    return png


def read_png(path):
    """(width, height, rows) with rows[y][x] = (r, g, b)."""
    data = Path(path).read_bytes()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, idat, width = 8, b"", None
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or colour not in (2, 6) or interlace:
                raise ValueError(f"{path}: unsupported PNG (depth {depth}, colour {colour})")
            bpp = 3 if colour == 2 else 4
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw = zlib.decompress(idat)
    stride = width * bpp
    rows, prev = [], bytearray(stride)
    for y in range(height):
        ftype = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 0xFF
            elif ftype == 2:
                line[i] = (line[i] + b) & 0xFF
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) \
                    & 0xFF
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(width)])
        prev = line
    return width, height, rows


def write_png(path, rows):
    """An RGB PNG of rows[y][x] = (r, g, b)."""
    height, width = len(rows), len(rows[0])
    raw = b"".join(b"\x00" + bytes(v for px in row for v in px) for row in rows)

    def chunk(kind, body):
        return struct.pack(">I", len(body)) + kind + body + \
            struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)

    Path(path).write_bytes(b"\x89PNG\r\n\x1a\n" +
                           chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
                           + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b""))


def hex_rgb(colour):
    colour = colour.lstrip("#")
    return tuple(int(colour[i:i + 2], 16) for i in (0, 2, 4))


def clusters(rows, rgb, gap=2):
    """Bounding boxes (x0, y0, x1, y1) of groups of pixels of exactly colour rgb;
    pixels within `gap` of each other belong to the same group."""
    pixels = {(x, y) for y, row in enumerate(rows) for x, px in enumerate(row) if px == rgb}
    boxes = []
    while pixels:
        stack = [pixels.pop()]
        x0 = x1 = stack[0][0]
        y0 = y1 = stack[0][1]
        while stack:
            x, y = stack.pop()
            x0, x1, y0, y1 = min(x0, x), max(x1, x), min(y0, y), max(y1, y)
            for dx in range(-gap, gap + 1):
                for dy in range(-gap, gap + 1):
                    n = (x + dx, y + dy)
                    if n in pixels:
                        pixels.remove(n)
                        stack.append(n)
        boxes.append((x0, y0, x1, y1))
    return sorted(boxes, key=lambda b: (b[1], b[0]))


def main(argv):
    if len(argv) not in (5, 9) or argv[0] != "screenshot":
        print(__doc__, file=sys.stderr)
        return 2
    page, out, width, height = argv[1], argv[2], int(argv[3]), int(argv[4])
    screenshot(page, out, width, height)
    if len(argv) == 9:
        x, y, w, h = map(int, argv[5:])
        _, _, rows = read_png(out)
        write_png(out, [row[x:x + w] for row in rows[y:y + h]])
    print(f"{out}: {Path(out).stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
