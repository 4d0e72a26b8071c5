#!/bin/sh
# Capture symcheck's stdout, stderr and exit status for a fixed set of invocations, one
# file per case, so that two builds can be compared byte for byte (refactoring guard):
#   sh tests/golden.sh build/symcheck OUT_A; ...change...; sh tests/golden.sh build/symcheck OUT_B
#   diff -r OUT_A OUT_B
# Run from symcheck/ after `make fixtures`. Paths in the output are those of WORK (fixed, so
# that they are equal between runs). Distro cases run when the distro fixtures exist.
SYMCHECK=${1:?usage: golden.sh SYMCHECK OUTDIR}
OUT=${2:?usage: golden.sh SYMCHECK OUTDIR}
FIX=build/fixtures
WORK=build/golden-work
DISTRO=${KSYMLAB_CACHE:-/var/cache/ksymlab}/distro
rm -rf "$OUT" "$WORK"
mkdir -p "$OUT" "$WORK"
n=0

case_() {
    name=$1
    shift
    "$SYMCHECK" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
    echo $? >"$OUT/$name.rc"
    n=$((n + 1))
}

# both renderers for every case
both() {
    name=$1
    shift
    case_ "$name" "$@"
    case_ "$name.json" --json "$@"
}

KO=$FIX/fake_mod.ko
KP=$FIX/fake_mod_proprietary.ko
KN=$FIX/fake_mod_nons.ko
B=$FIX/fake_build

# doctored inputs
mkdir -p "$WORK/dis" "$WORK/crc" "$WORK/sv_only"
awk -F'\t' 'BEGIN { OFS = "\t" }
    $2 == "printk" { next }
    $2 == "task_prio" { $4 = "EXPORT_SYMBOL" }
    $2 == "some_gpl_sym" { $1 = "0x00000001" }
    $2 == "ns_sym" { $5 = "OTHER" }
    $2 == "module_layout" { $3 = "drivers/x/y" }
    { print }
    END { print "0x1\tghost\tvmlinux\tEXPORT_SYMBOL\t" }' "$B/Module.symvers" >"$WORK/dis/Module.symvers"
ln -s "$(pwd)/$B/vmlinux" "$WORK/dis/vmlinux"
sed -e 's/^0x11111111\tprintk/0x11111112\tprintk/' -e 's/^0x22222222\tmodule_layout/0x0\tmodule_layout/' \
    "$B/Module.symvers" >"$WORK/crc/Module.symvers"
printf '0x1\tkallsyms_lookup_name\tvmlinux\tEXPORT_SYMBOL_GPL\t\n' >>"$WORK/crc/Module.symvers"
cp "$B/Module.symvers" "$WORK/sv_only/Module.symvers"
sed -e 's/^0x11111111\tprintk/0x99999999\tprintk/' -e 's/EXPORT_SYMBOL_GPL\tFAKE_NS/EXPORT_SYMBOL_GPL\tNEW_NS/' \
    -e 's/^\(0x33333333\tsome_gpl_sym\tvmlinux\tEXPORT_SYMBOL_GPL\)\t$/\1\tADDNS/' \
    -e '/only_in_vmlinux/d' -e 's/\tdrivers\/fake\/fake_helper\t/\tdrivers\/fake\/other\t/' \
    -e 's/^0x55555555\ttask_prio\tvmlinux\tEXPORT_SYMBOL_GPL/0x55555555\ttask_prio\tvmlinux\tEXPORT_SYMBOL/' \
    "$B/Module.symvers" >"$WORK/B.symvers"
printf '0x1\tnewsym\tvmlinux\tEXPORT_SYMBOL_GPL\t\n0x2\tnsonly\tvmlinux\tEXPORT_SYMBOL\tNS1\n' >>"$WORK/B.symvers"
printf 'extern int printk(const char *, ...);\nstatic const char mi[] __attribute__((used, section(".modinfo"))) = "license=GPL";\nint init_module(void) { return printk("hi"); }\n' >"$WORK/clean.c"
gcc -c -O2 -o "$WORK/clean.ko" "$WORK/clean.c"
printf 'static const char mi[] __attribute__((used, section(".modinfo"))) = "name=nolic";\nint init_module(void) { return 0; }\n' >"$WORK/nolic.c"
gcc -c -O2 -o "$WORK/nolic.ko" "$WORK/nolic.c"

both help --help
both exports exports "$B"
both exports_summary exports --summary "$B"
both exports_vmlinux exports "$B/vmlinux"
both exports_symvers exports "$B/Module.symvers"
both exports_dis exports "$WORK/dis"
both exports_dis_summary exports --summary "$WORK/dis"
for k in "$KO" "$KP" "$KN" "$WORK/clean.ko" "$WORK/nolic.ko"; do
    base=$(basename "$k" .ko)
    both "module_$base" module "$k"
    both "audit_$base" audit "$k"
    both "check_$base" check "$k" "$B"
    both "check_q_$base" check -q "$k" "$B"
done
both check_all check "$KO" "$KP" "$KN" "$WORK/clean.ko" "$WORK/nolic.ko" "$B"
both check_all_q check --quiet "$KO" "$KP" "$KN" "$B"
both check_crc check "$KO" "$WORK/crc"
both check_sv_only check "$KO" "$WORK/sv_only"
both check_vmlinux_only check "$KO" "$B/vmlinux"
both check_dis check "$KO" "$KN" "$WORK/dis"
both check_one_bad check "$KO" "$WORK/nonexistent.ko" "$KP" "$B"
both diff_same diff "$B" "$B/Module.symvers"
both diff_edit diff "$B" "$WORK/B.symvers"
both diff_rev diff "$WORK/B.symvers" "$B"
both seed seed-report "$B"
both seed_two seed-report "fake=$B" "$WORK/sv_only" "v=$B/vmlinux"
both seed_syms seed-report --symbols "task_prio,mod_helper nope" "x=$WORK/sv_only"
both seed_syms_eq seed-report --symbols=ns_sym,printk,printk "$B"
# errors and usage
both err_nocmd
both err_unknown frobnicate
both err_module_none module
both err_check_one check "$KO"
both err_missing_build check "$KO" "$WORK/nope"
both err_opt exports --bogus "$B"
both err_diff_one diff "$B"
both err_seed_nolist seed-report --symbols
both err_audit_missing audit "$WORK/nope.ko"
both err_module_dir module "$WORK"
both dashdash -- module "$KO"

if [ -f "$DISTRO/.complete" ]; then
    D=$DISTRO
    both d_exports_summary exports --summary "$D/build"
    case_ d_exports.json --json exports "$D/build"
    case_ d_exports exports "$D/build"
    both d_seed seed-report "debian=$D/build"
    both d_diff diff "$D/build" "$D/build/Module.symvers"
    find "$D/modules" -name '*.ko' | LC_ALL=C sort | awk 'NR % 97 == 1' >"$WORK/sample"
    # shellcheck disable=SC2046
    both d_check check $(cat "$WORK/sample") "$D/build"
    i=0
    while read -r k; do
        i=$((i + 1))
        both "d_module_$i" module "$k"
        both "d_audit_$i" audit "$k"
    done <"$WORK/sample"
    # every module, findings only
    # shellcheck disable=SC2046
    case_ d_check_all_q.json --json check -q $(find "$D/modules" -name '*.ko' | LC_ALL=C sort) "$D/build"
fi
echo "golden: $n cases in $OUT"
