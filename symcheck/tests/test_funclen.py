"""tests/funclen.py, the 100-line cap per C function that `make -C symcheck test` applies."""
import glob
import os
import subprocess
import sys

from symcheck_testlib import SYMCHECK_DIR

FUNCLEN = os.path.join(SYMCHECK_DIR, "tests", "funclen.py")


def funclen(*args, cwd=None):
    return subprocess.run([sys.executable, FUNCLEN, *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, timeout=60)


def c_function(name, lines, brace_own_line=True, two_line_signature=False):
    """A C function of exactly `lines` lines, signature to closing brace."""
    sig = [f"static int {name}(int a)"] if not two_line_signature else \
        ["static int", f"{name}(int a)"]
    head = sig + ["{"] if brace_own_line else sig[:-1] + [sig[-1] + " {"]
    body = ["    a++;"] * (lines - len(head) - 2)
    return "\n".join(head + body + ["    return a;", "}"]) + "\n"


def test_at_the_cap_passes_and_one_over_fails(tmp_path):
    f = tmp_path / "a.c"
    f.write_text("#include <x.h>\n\n" + c_function("fine", 100) + "\n" + c_function("long", 101))
    r = funclen("--max", 101, f)
    assert r.returncode == 0 and "2 functions in 1 files, the longest long" in r.stdout
    r = funclen("--max", 100, f)
    assert r.returncode == 1
    assert r.stderr == f"{f}:{2 + 100 + 2}: long is 101 lines, over the cap of 100\n"


def test_every_form_of_function_is_counted(tmp_path):
    """A brace that ends the signature line, a two-line signature, a TEST(name) macro."""
    f = tmp_path / "b.c"
    f.write_text(c_function("same_line", 120, brace_own_line=False) + "\n" +
                 c_function("two_lines", 110, two_line_signature=True) + "\n" +
                 "TEST(a_test)\n{\n" + "    x();\n" * 103 + "}\n" +
                 "static const int table[] = {\n    1,\n};\n")
    r = funclen("--max", 100, f)
    assert r.returncode == 1
    assert r.stderr.splitlines() == [
        f"{f}:1: same_line is 120 lines, over the cap of 100",
        f"{f}:{1 + 120 + 1}: two_lines is 110 lines, over the cap of 100",
        f"{f}:{1 + 120 + 1 + 110 + 1}: TEST(a_test) is 106 lines, over the cap of 100",
    ]


def test_no_function_found_is_an_error(tmp_path):
    f = tmp_path / "c.h"
    f.write_text("int only_a_prototype(void);\n")
    r = funclen("--max", 100, f)
    assert (r.returncode, r.stderr) == (1, "funclen: no function found in 1 files\n")


def test_make_caps_every_c_file_at_100():
    r = subprocess.run(["make", "-s", "-n", "-C", SYMCHECK_DIR, "funclen"], capture_output=True,
                       text=True, timeout=60)
    words = r.stdout.split()
    assert words[words.index("--max") + 1] == "100"
    want = sorted(os.path.relpath(p, SYMCHECK_DIR) for pat in ("src/*.[ch]", "tests/*.c", "fuzz/*.c")
                  for p in glob.glob(os.path.join(SYMCHECK_DIR, pat)))
    assert sorted(w for w in words if w.endswith((".c", ".h"))) == want
    r = subprocess.run(["make", "-s", "-C", SYMCHECK_DIR, "funclen"], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(["make", "-s", "-n", "-C", SYMCHECK_DIR, "test"], capture_output=True,
                       text=True, timeout=60)
    assert "funclen.py --max 100" in r.stdout
