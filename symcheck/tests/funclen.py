#!/usr/bin/env python3
"""The longest C functions in the given files: `funclen.py [-n N] FILE...`.
A function is a line at column 0 that is followed, at column 0, by `{`, up to the next `}`
at column 0 (the style of symcheck's sources). Lines are counted from the signature's first
line to the closing brace, both included."""
import re
import sys


def functions(path):
    lines = open(path).read().splitlines()
    out = []
    i = 0
    while i < len(lines):
        if lines[i] == "{":
            start = i - 1
            while start > 0 and lines[start - 1] and lines[start - 1][0] not in " \t#/}" \
                    and not lines[start - 1].endswith(";") and "(" not in lines[start]:
                start -= 1
            sig = " ".join(lines[start:i])
            m = re.search(r"([A-Za-z_]\w*)\s*\(", sig)
            end = i
            while end < len(lines) and lines[end] != "}":
                end += 1
            if m:
                out.append((end - start + 1, m.group(1), path))
            i = end
        i += 1
    return out


def main(argv):
    n = 10
    if argv[:1] == ["-n"]:
        n, argv = int(argv[1]), argv[2:]
    allf = [f for p in argv for f in functions(p)]
    for length, name, path in sorted(allf, key=lambda t: (-t[0], t[1]))[:n]:
        print("%5d  %-28s %s" % (length, name, path))


if __name__ == "__main__":
    main(sys.argv[1:])
