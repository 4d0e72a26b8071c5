#!/bin/sh
# Mutation check of the audit/check and calltypes additions: each mutant is a one-line source
# change that a plausible bug would make (k72-*: the Linux 7.2 layout, killed by tests/test_k72.py);
# its test file (tests/test_audit.py, or the one named)
# must fail on every one (and pass unmutated).
# Run from symcheck/ after `make all fixtures`:  sh tests/audit_mutants.sh  (ONLY=PATTERN: a subset)
# Prints one line per mutant: KILLED (with the failing tests) or SURVIVED; exit 1 if any survived.
set -u
PY=${PYTHON:-/usr/bin/python3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
survived=0

mutant() {   # name file sed-expression [test file]
    name=$1 file=$2 expr=$3 tests=${4:-tests/test_audit.py}
    case $name in ${ONLY:-*}) ;; *) return ;; esac   # ONLY='ct-*' runs the calltypes ones
    rm -rf "$T/m"
    mkdir -p "$T/m"
    cp -r src Makefile "$T/m/"
    sed -i "$expr" "$T/m/$file"
    if cmp -s "src/${file#src/}" "$T/m/$file"; then
        echo "ERROR   $name: the sed expression changed nothing"
        survived=1
        return
    fi
    if ! make -s -C "$T/m" build/symcheck >"$T/build.log" 2>&1; then
        echo "ERROR   $name: does not build"
        survived=1
        return
    fi
    out=$(SYMCHECK_BIN="$T/m/build/symcheck" $PY -m pytest --strict-markers -q -p no:cacheprovider "$tests" 2>&1)
    if [ $? -eq 0 ]; then
        echo "SURVIVED $name"
        survived=1
    else
        echo "KILLED  $name: $(echo "$out" | grep '^FAILED' | sed 's/^FAILED tests\/test_[a-z]*.py:://; s/ - .*//' | tr '\n' ' ')"
    fi
}

# existence checks (frameread.c): each makes a kprobe that reads kp.addr look like one
mutant fr-unknown-is-not-read src/cmd_audit.c 's/KPROBE_ADDR_OFF, 8, ok, n_ok) != FR_NOT_READ)/KPROBE_ADDR_OFF, 8, ok, n_ok) == FR_READ)/'
mutant fr-field-nmissed src/cmd_audit.c 's/^#define KPROBE_ADDR_OFF 0x28$/#define KPROBE_ADDR_OFF 0x20/'
mutant fr-no-escape-to-calls src/frameread.c 's/if (is_call(in) \&\& off > j->call_off) {/if (0) {/'
mutant fr-store-imm-is-read src/frameread.c 's/in->op == 0x89 || in->op == 0xc6 || in->op == 0xc7;/in->op == 0x89 || in->op == 0xc6;/'
mutant fr-one-epoch src/frameread.c 's/s->r\[X86_RSP\] = (val_t){true, true, 1 + s->here, 0};/s->r[X86_RSP] = (val_t){true, true, 0, 0};/'
mutant fr-join-keeps-first src/frameread.c 's/^        val_t m = r == X86_RSP ? .*$/        continue; val_t m = TAINT;/'
mutant no-cross-module src/cmd_audit.c 's/if (j == mi || !strvec_contains(/if (1 || !strvec_contains(/'
mutant no-fixpoint src/cmd_audit.c 's/^    while (derive_pass(&c))$/    derive_pass(\&c);/; /^    derive_pass(&c);$/{n;s/^        ;$//}'
mutant no-instrumentation-test src/cmd_audit.c 's/fn_calls(f, kp_unregister, NELEM(kp_unregister), NULL)/(fn_calls(f, kp_unregister, NELEM(kp_unregister), NULL) || 1)/'
mutant no-unrelocated-calls src/codescan.c 's/if ((d\[i\] == 0xe8 || d\[i\] == 0xe9) \&\& i + 5 <= end)/if (0)/'
mutant no-tail-jmp-rel8 src/codescan.c 's/} else if (d\[i\] == 0xeb) {/} else if (0) {/'
mutant args-rsi-for-rdi src/codescan.c 's/{REG_RDI, REG_RSI, REG_RDX}/{REG_RSI, REG_RDI, REG_RDX}/'
mutant no-resolver-cells src/cmd_audit.c 's/if (ev->kind != CS_STORE || ev->cell_sec == 0/if (1 || ev->cell_sec == 0/'
mutant any-literal-is-probed src/cmd_audit.c 's/    if (lit->lit_dest != CS_DEST_CELL)/    if (1)/'
mutant no-static-kprobe-literals src/codescan.c 's/^    attach_obj_literals(m, dl, ndl);/    (void)attach_obj_literals;/'
mutant no-set-exports src/cmd_check.c 's/add_set_exports(a.pos, a.np - 1, &b), //'
mutant any-export-is-resolver src/cmd_audit.c 's/if (fi >= 0 \&\& c->resolver\[j\]\[fi\])/if (fi >= 0)/'
mutant indirect-without-cell src/cmd_audit.c 's/(ev->kind == CS_INDIRECT \&\& cell))/(ev->kind == CS_INDIRECT \&\& (cell || 1)))/'
mutant no-export-namespace src/modexports.c 's/if (r.r_offset != off + 8 || si == 0/if (r.r_offset != off + 8 || 1/'
CT=tests/test_calltypes.py
mutant ct-no-debug-relocation src/dwtypes.c 's/uint64_t v = im->sym\[si\].st_value + (uint64_t)r->r_addend;/uint64_t v = 0;/' $CT
mutant ct-typedef-names-matter src/dwtypes.c '/case DW_TAG_typedef:/{n;s/return canon_target(t, quals, depth);/return xstrdup(dwarf_diename(t));/}' $CT
mutant ct-qualifiers-are-mismatches src/cmd_calltypes.c 's/return strcmp(k->loose, m->loose) == 0 ? 1 : 2;/return 2;/' $CT
mutant ct-no-parameter-count src/cmd_calltypes.c 's/if (k->n_params != m->n_params || k->variadic != m->variadic) {/if (0) {/' $CT
mutant ct-store-after-other-calls src/cmd_calltypes.c 's/if (e->kind == CS_CALL || e->kind == CS_INDIRECT)$/if (0)/' $CT
mutant ct-no-array-element src/cmd_calltypes.c 's/return strncmp(array, elem, n) == 0 \&\& array\[n\] == .\[.;/return (void)array, n == (size_t)-1;/' $CT
mutant ct-data-called-unnoticed src/cmd_calltypes.c 's/if (kind == 1 \&\& !k->is_function)/if (0)/' $CT
mutant ct-static-local-full-name src/cmd_calltypes.c 's/xstrndup(sname, strcspn(sname, "."))/xstrdup(sname)/' $CT
K7=tests/test_k72.py
mutant k72-vmlinux-flag-next src/elfread.c 's/cls = (flags->data\[i\] \& KSYM_FLAG_GPL_ONLY)/cls = (flags->data[i + 1 < n ? i + 1 : i] \& KSYM_FLAG_GPL_ONLY)/' $K7
mutant k72-vmlinux-flag-prev src/elfread.c 's/cls = (flags->data\[i\] \& KSYM_FLAG_GPL_ONLY)/cls = (flags->data[i ? i - 1 : 0] \& KSYM_FLAG_GPL_ONLY)/' $K7
mutant k72-vmlinux-by-section src/elfread.c 's/cls = (flags->data\[i\] \& KSYM_FLAG_GPL_ONLY) ? EXP_GPL : EXP_PLAIN;/cls = EXP_PLAIN;/' $K7
mutant k72-vmlinux-short-accepted src/elfread.c 's/if (flags \&\& flags->size != n)/if (flags \&\& flags->size > n)/' $K7
mutant k72-module-flag-next src/modexports.c 's/im->sec\[flags\].data\[k\]/im->sec[flags].data[k + 1 < im->sec[flags].size ? k + 1 : k]/' $K7
mutant k72-module-by-section src/modexports.c 's/bool gpl = im->sec\[flags\].data\[k\] \& KSYM_FLAG_GPL_ONLY;/bool gpl = false;/' $K7
mutant k72-module-short-accepted src/modexports.c 's/if (f->size != t->size \/ 12)/if (f->size > t->size \/ 12)/' $K7
mutant k72-no-dash-folding src/exports.c "s/char x = a\[i\] == '-' ? '_' : a\[i\], y = b\[i\] == '-' ? '_' : b\[i\];/char x = a[i], y = b[i];/" $K7
mutant k72-no-tail-glob src/exports.c "s/bool glob = len > 0 \&\& sep\[-1\] == '\*';/bool glob = false;/" $K7
mutant k72-prefix-match src/exports.c 's/(glob || len == modlen)/(glob || len <= modlen)/' $K7
mutant k72-modinfo-name src/ko.c 's/return m->this_module_name ? m->this_module_name : m->modname;/return m->modname;/' $K7
mutant k72-module-ns-importable src/cmd_check.c 's/        if (is_module_ns(m->import_ns.v\[i\]))/        if (0)/' $K7
mutant k72-module-ns-as-plain-ns src/cmd_check.c 's/    if (is_module_ns(s->x->ns)) {/    if (0) {/' $K7
mutant ct-sign-ignored src/dwtypes.c 's/enc == DW_ATE_signed || enc == DW_ATE_signed_char ? "s"/enc == DW_ATE_signed || enc == DW_ATE_signed_char ? "u"/' $CT
mutant ct-member-by-offset-ignored src/dwtypes.c 's/if (delta < off || delta >= off + size)/if (0)/' $CT
exit $survived
