#!/usr/bin/env python3
"""The longest C functions in the given files.

    funclen.py [-n N] FILE...        list the N longest (10 by default)
    funclen.py --max L FILE...       exit 1, naming each, if a function is longer than L

A function starts at its signature, a line at column 0, and its body is a `{` at column 0
(or ending the signature's last line) up to the next `}` at column 0: the style of
symcheck's sources. Lines are counted from the signature's first line to the closing
brace, both included. `make -C symcheck test` runs it with --max 100 on every C file."""
import re
import sys

OPENS_BODY = re.compile(r"^[A-Za-z_].*\)\s*\{\s*$")   # `int f(void) {` at column 0


def functions(path):
    """(length, name, path, first line) of every function of the file."""
    with open(path) as f:
        lines = f.read().splitlines()
    out = []
    i = 0
    while i < len(lines):
        if lines[i] == "{" or OPENS_BODY.match(lines[i]):
            brace = i
            start = i - 1 if lines[i] == "{" else i
            # up over the rest of the signature: the return type on a line of its own,
            # parameters on several lines (each at column 0 or indented under the first)
            while start > 0 and re.match(r"[A-Za-z_]", lines[start - 1]) \
                    and not lines[start - 1].rstrip().endswith((";", "{", "}")):
                start -= 1
            sig = " ".join(lines[start:brace + 1])
            m = re.search(r"([A-Za-z_]\w*)\s*\(\s*(\w*)", sig)
            end = brace + 1
            while end < len(lines) and lines[end] != "}":
                end += 1
            if m:
                # a macro that defines a function, TEST(name): named by its argument
                name = f"{m[1]}({m[2]})" if m[1].isupper() and m[2] else m[1]
                out.append((end - start + 1, name, path, start + 1))
            i = end
        i += 1
    return out


def main(argv):
    n, cap = 10, None
    if argv[:1] == ["-n"]:
        n, argv = int(argv[1]), argv[2:]
    elif argv[:1] == ["--max"]:
        cap, argv = int(argv[1]), argv[2:]
    if not argv:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    allf = sorted((f for p in argv for f in functions(p)), key=lambda t: (-t[0], t[1]))
    if cap is None:
        for length, name, path, _ in allf[:n]:
            print("%5d  %-28s %s" % (length, name, path))
        return 0
    if not allf:
        print(f"funclen: no function found in {len(argv)} files", file=sys.stderr)
        return 1
    over = [f for f in allf if f[0] > cap]
    for length, name, path, line in over:
        print(f"{path}:{line}: {name} is {length} lines, over the cap of {cap}", file=sys.stderr)
    if over:
        return 1
    length, name, path, _ = allf[0]
    print(f"funclen: {len(allf)} functions in {len(argv)} files, the longest {name} "
          f"({path}) {length} lines, cap {cap}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
