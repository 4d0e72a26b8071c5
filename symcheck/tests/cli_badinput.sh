#!/bin/sh
# CLI bad-input checks: every case must exit 2 with exactly one stderr line "symcheck: ...".
# Usage: SYMCHECK=build/symcheck sh tests/cli_badinput.sh   (run from symcheck/, after `make fixtures`)
SYMCHECK=${SYMCHECK:-build/symcheck}
FIX=${FIX:-build/fixtures}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT INT TERM
pass=0
fail=0

expect2() {
    desc=$1
    shift
    "$SYMCHECK" "$@" >"$T/out" 2>"$T/err"
    rc=$?
    lines=$(wc -l <"$T/err")
    if [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && grep -q '^symcheck: ' "$T/err"; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $desc: rc=$rc stderr-lines=$lines: $(head -c 300 "$T/err")"
    fi
}

expect_rc() {
    want=$1
    desc=$2
    shift 2
    "$SYMCHECK" "$@" >"$T/out" 2>"$T/err"
    rc=$?
    if [ "$rc" -eq "$want" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $desc: rc=$rc (want $want): $(head -c 300 "$T/err")"
    fi
}

KO=$FIX/fake_mod.ko
VM=$FIX/fake_build/vmlinux
: >"$T/empty"
mkdir -p "$T/dir" "$T/emptybuild"
head -c 100 "$KO" >"$T/trunc100.ko"
head -c $(( $(wc -c <"$KO") - 10 )) "$KO" >"$T/trunc_tail.ko"
head -c 3000 "$VM" >"$T/trunc_vmlinux"
# 32-bit class, aarch64 machine, big endian, garbage
cp "$KO" "$T/class32.ko" && printf '\001' | dd of="$T/class32.ko" bs=1 seek=4 conv=notrunc 2>/dev/null
cp "$KO" "$T/aarch64.ko" && printf '\267\000' | dd of="$T/aarch64.ko" bs=1 seek=18 conv=notrunc 2>/dev/null
cp "$KO" "$T/msb.ko" && printf '\002' | dd of="$T/msb.ko" bs=1 seek=5 conv=notrunc 2>/dev/null
head -c 4096 /dev/urandom >"$T/random.ko"
printf 'hello\n' >"$T/text.ko"
# e_shoff pointing past the end
cp "$KO" "$T/shoff.ko" && printf '\377\377\377\000' | dd of="$T/shoff.ko" bs=1 seek=40 conv=notrunc 2>/dev/null
# a real 32-bit object if the compiler can make one
if echo 'int x;' | gcc -m32 -x c -c -o "$T/real32.o" - 2>/dev/null; then :; else cp "$T/class32.ko" "$T/real32.o"; fi
# objects without .modinfo / without __versions
echo 'extern int f(void); int g(void){return f();}' | gcc -x c -c -o "$T/nomodinfo.ko" -
perl -0777 -pe 's/\.symtab\0/.symtaX\0/' "$KO" >"$T/nosymtab.ko"
# vmlinux without ksymtab
cp "$T/nomodinfo.ko" "$T/noksym_vmlinux"
# Module.symvers problems
printf '0x1\tfoo\tvmlinux\n' >"$T/fewfields.symvers"
printf '0x1\tfoo\tvmlinux\tEXPORT_SYMBOL\t\nnot a line at all\n' >"$T/garbage.symvers"
printf '0xqq\tfoo\tvmlinux\tEXPORT_SYMBOL\t\n' >"$T/badcrc.symvers"
printf '0x1\tfoo\tvmlinux\tEXPORT_SYMBOL_WEIRD\t\n' >"$T/badtype.symvers"
awk 'BEGIN { s = "0x1\t"; for (i = 0; i < 6000; i++) s = s "a"; print s "\tvmlinux\tEXPORT_SYMBOL\t" }' >"$T/long.symvers"
printf '\n\n\n' >"$T/blank.symvers"
mkdir -p "$T/b_few" "$T/b_long" "$T/b_empty" "$T/b_trunc"
cp "$T/fewfields.symvers" "$T/b_few/Module.symvers"
cp "$T/long.symvers" "$T/b_long/Module.symvers"
: >"$T/b_empty/Module.symvers"
cp "$T/trunc_vmlinux" "$T/b_trunc/vmlinux"

# compressed modules: truncated, corrupt in the middle, only the magic, compressed garbage,
# compressed empty input, trailing garbage
for z in xz zst gz; do
    case $z in xz) c="xz -c" ;; zst) c="zstd -q -c" ;; gz) c="gzip -c -n" ;; esac
    $c "$KO" >"$T/ok.ko.$z"
    sz=$(wc -c <"$T/ok.ko.$z")
    head -c $((sz / 2)) "$T/ok.ko.$z" >"$T/half.ko.$z"
    head -c $((sz - 4)) "$T/ok.ko.$z" >"$T/short.ko.$z"
    cp "$T/ok.ko.$z" "$T/corrupt.ko.$z"
    printf '\377\000\377\000\377\000\377\000' | dd of="$T/corrupt.ko.$z" bs=1 seek=$((sz / 2)) conv=notrunc 2>/dev/null
    head -c 6 "$T/ok.ko.$z" >"$T/magic.ko.$z"
    head -c 2000 /dev/urandom | $c >"$T/garbage.ko.$z"
    : | $c >"$T/empty.ko.$z"
    cat "$T/ok.ko.$z" >"$T/trail.ko.$z" && printf 'junk' >>"$T/trail.ko.$z"
done
for cmd in module audit; do
    for z in xz zst gz; do
        for k in half short corrupt magic garbage empty trail; do
            expect2 "$cmd $k.ko.$z" $cmd "$T/$k.ko.$z"
        done
        expect_rc 0 "module ok.ko.$z" module "$T/ok.ko.$z"
    done
done
expect2 "check truncated .ko.xz" check "$T/half.ko.xz" "$FIX/fake_build"
# check --tree
mkdir -p "$T/tree/kernel/a" "$T/tree/kernel/b" "$T/emptytree/kernel"
cp "$KO" "$T/tree/kernel/a/"
cp "$T/ok.ko.xz" "$T/tree/kernel/b/fake_mod.ko.xz"
ln -s "$(pwd)/$FIX/fake_build" "$T/tree/build"
expect_rc 1 "check --tree (DIR/build)" check --tree "$T/tree"
expect_rc 1 "check --tree=DIR BUILD" check -q --tree="$T/tree" "$FIX/fake_build"
expect2 "check --tree missing dir" check --tree "$T/nope"
expect2 "check --tree file" check --tree "$KO" "$FIX/fake_build"
expect2 "check --tree without modules" check --tree "$T/emptytree" "$FIX/fake_build"
expect2 "check --tree without build" check --tree "$T/emptytree/kernel/../../tree/kernel"
expect2 "check --tree no value" check --tree
expect2 "check --tree with FILE.ko" check --tree "$T/tree" "$KO" "$FIX/fake_build"
cp "$T/corrupt.ko.zst" "$T/tree/kernel/b/bad.ko.zst"
expect2 "check --tree with a corrupt module" check -q --tree "$T/tree"
rm "$T/tree/kernel/b/bad.ko.zst"
cp "$T/ok.ko.zst" "$T/zstd_named_plain.ko"
expect_rc 0 "zstd data named .ko (magic decides)" module "$T/zstd_named_plain.ko"
cp "$KO" "$T/plain_named.ko.xz"
expect_rc 0 "plain ELF named .ko.xz" module "$T/plain_named.ko.xz"
for cmd in module audit; do
    expect2 "$cmd empty" $cmd "$T/empty"
    expect2 "$cmd dir" $cmd "$T/dir"
    expect2 "$cmd missing" $cmd "$T/nonexistent.ko"
    expect2 "$cmd trunc100" $cmd "$T/trunc100.ko"
    expect2 "$cmd trunc_tail" $cmd "$T/trunc_tail.ko"
    expect2 "$cmd class32" $cmd "$T/class32.ko"
    expect2 "$cmd real32" $cmd "$T/real32.o"
    expect2 "$cmd aarch64" $cmd "$T/aarch64.ko"
    expect2 "$cmd msb" $cmd "$T/msb.ko"
    expect2 "$cmd random" $cmd "$T/random.ko"
    expect2 "$cmd text" $cmd "$T/text.ko"
    expect2 "$cmd shoff" $cmd "$T/shoff.ko"
    expect2 "$cmd nomodinfo" $cmd "$T/nomodinfo.ko"
    expect2 "$cmd nosymtab" $cmd "$T/nosymtab.ko"
    expect2 "$cmd vmlinux-as-ko" $cmd "$VM"
done
for f in fewfields garbage badcrc badtype long blank; do
    expect2 "exports $f.symvers" exports "$T/$f.symvers"
    expect2 "diff $f.symvers" diff "$T/$f.symvers" "$FIX/fake_build"
done
expect2 "exports empty file" exports "$T/empty"
expect2 "exports empty build" exports "$T/emptybuild"
expect2 "exports missing" exports "$T/nope"
expect2 "exports trunc vmlinux" exports "$T/b_trunc"
expect2 "exports vmlinux without ksymtab" exports "$T/noksym_vmlinux"
expect2 "exports .ko as vmlinux" exports "$KO"
expect2 "check bad build" check "$KO" "$T/b_few"
expect2 "check long-line build" check "$KO" "$T/b_long"
expect2 "check empty symvers" check "$KO" "$T/b_empty"
expect2 "check truncated ko" check "$T/trunc100.ko" "$FIX/fake_build"
expect2 "check dir as ko" check "$T/dir" "$FIX/fake_build"
expect2 "diff no symvers" diff "$T/emptybuild" "$FIX/fake_build"
expect2 "seed-report bad build" seed-report "X=$T/b_few"
expect2 "seed-report missing" seed-report "$T/nope"
# usage errors
expect2 "no command"
expect2 "unknown command" frobnicate
expect2 "module no args" module
expect2 "check one arg" check "$KO"
expect2 "diff one arg" diff "$FIX/fake_build"
expect2 "unknown option" exports --bogus "$FIX/fake_build"
expect2 "seed-report --symbols missing" seed-report --symbols
# sanity: good inputs
expect_rc 0 "help" --help
expect_rc 0 "module ok" module "$KO"
expect_rc 0 "exports ok" exports "$FIX/fake_build"
expect_rc 1 "check finds" check "$KO" "$FIX/fake_build"
expect_rc 1 "audit flags" audit "$KO"
expect_rc 0 "diff same" diff "$FIX/fake_build" "$FIX/fake_build/Module.symvers"
expect_rc 0 "seed-report ok" seed-report "A=$FIX/fake_build"
mkdir -p "$T/crlf"
sed 's/$/\r/' "$FIX/fake_build/Module.symvers" >"$T/crlf/Module.symvers"
expect_rc 0 "diff LF vs CRLF Module.symvers" diff "$FIX/fake_build/Module.symvers" "$T/crlf/Module.symvers"
expect_rc 1 "check against CRLF Module.symvers" check "$KO" "$T/crlf"

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
