#!/bin/bash
# Benchmark (not a test): check every .ko of the Debian distro kernel against its Module.symvers
# with symcheck, side by side with `depmod -e -E` on the same input.
# Needs the fixtures of fetch-distro-kernel.sh (run as root; KSYMLAB_CACHE overrides the cache dir).
# Then, at distribution scale: `check -q --tree` on Debian 12's 6.12 kernel as installed (4,230
# .ko.xz; fetch-distro-kernel.sh --line 6.12) against its Module.symvers, paired with
# `depmod -e -E` on the same tree: PAIRS runs of each, alternating which goes first; it prints
# both medians and their ratio symcheck/depmod. SKIP_61=1 leaves out the 6.1 table.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SYMCHECK=${SYMCHECK:-$HERE/build/symcheck}
DEST=${KSYMLAB_CACHE:-/var/cache/ksymlab}/distro
REPEAT=${REPEAT:-3}
PAIRS=${PAIRS:-3}
DEST612=${KSYMLAB_CACHE:-/var/cache/ksymlab}/distro-6.12

[ -x "$SYMCHECK" ] || make -C "$HERE" all >/dev/null
DEPMOD=$(command -v depmod || echo /sbin/depmod)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
now() { date +%s.%N; }
best() {  # best wall time of REPEAT runs of "$@", output discarded
    local b="" t0 t1 d
    for _ in $(seq "$REPEAT"); do
        t0=$(now)
        "$@" >/dev/null 2>&1 || true
        t1=$(now)
        d=$(echo "$t1 - $t0" | bc -l 2>/dev/null || awk "BEGIN{print $t1 - $t0}")
        if [ -z "$b" ] || awk "BEGIN{exit !($d < $b)}"; then b=$d; fi
    done
    printf '%.3f' "$b"
}
per_module() {
    for m in "${MODS[@]}"; do "$SYMCHECK" check -q "$m" "$1" >/dev/null || true; done
}

bench_61() {
    if [ ! -f "$DEST/.complete" ]; then
        "$HERE/fetch-distro-kernel.sh"
    fi
    VER=$(cat "$DEST/VERSION")
    mkdir -p "$WORK/symvers-only"
    cp "$DEST/build/Module.symvers" "$WORK/symvers-only/Module.symvers"
    mapfile -t MODS < <(find "$DEST/modules" -name '*.ko' | sort)
    # fake /lib/modules/<ver>/ tree for depmod (hard links, copies if that fails)
    mkdir -p "$WORK/root/lib/modules/$VER"
    cp -al "$DEST/modules" "$WORK/root/lib/modules/$VER/kernel" 2>/dev/null \
        || cp -a "$DEST/modules" "$WORK/root/lib/modules/$VER/kernel"
    for f in modules.order modules.builtin modules.builtin.modinfo; do
        [ -f "$DEST/root/lib/modules/$VER/$f" ] && cp "$DEST/root/lib/modules/$VER/$f" "$WORK/root/lib/modules/$VER/"
    done

    # warm the page cache
    cat "${MODS[@]}" "$DEST/build/vmlinux" >/dev/null

    echo "distro kernel $VER: ${#MODS[@]} modules, $(wc -l < "$DEST/build/Module.symvers") Module.symvers lines"
    echo "best of $REPEAT runs, wall seconds:"
    printf '  %-58s %8s\n' "tool" "seconds"
    printf '  %-58s %8s\n' "symcheck check (all .ko in one process, Module.symvers)" \
        "$(best "$SYMCHECK" check -q "${MODS[@]}" "$WORK/symvers-only")"
    printf '  %-58s %8s\n' "symcheck check (all .ko in one process, +vmlinux ksymtab)" \
        "$(best "$SYMCHECK" check -q "${MODS[@]}" "$DEST/build")"
    printf '  %-58s %8s\n' "depmod -e -E Module.symvers (same modules)" \
        "$(best "$DEPMOD" -b "$WORK/root" -e -E "$DEST/build/Module.symvers" "$VER")"
    printf '  %-58s %8s\n' "symcheck check (one process per .ko, Module.symvers)" \
        "$(REPEAT=1 best per_module "$WORK/symvers-only")"
    echo "findings: symcheck $("$SYMCHECK" check -q "${MODS[@]}" "$WORK/symvers-only" | tail -n1)"
    echo "          depmod   $("$DEPMOD" -b "$WORK/root" -e -E "$DEST/build/Module.symvers" "$VER" 2>&1 | grep -cE 'unknown symbol|disagrees' || true) warning(s)"
}

# The distro 6.12 tree, as installed, with a copy of its modules.* for depmod (hard links).
setup_612() {
    if [ ! -f "$DEST612/.complete" ]; then
        "$HERE/fetch-distro-kernel.sh" --line 6.12
    fi
    VER612=$(cat "$DEST612/VERSION")
    TREE612=$WORK/root612/lib/modules/$VER612
    mkdir -p "$TREE612"
    cp -al "$DEST612/root/lib/modules/$VER612/kernel" "$TREE612/kernel" 2>/dev/null \
        || cp -a "$DEST612/root/lib/modules/$VER612/kernel" "$TREE612/kernel"
    for f in modules.order modules.builtin modules.builtin.modinfo; do
        [ -f "$DEST612/root/lib/modules/$VER612/$f" ] && cp "$DEST612/root/lib/modules/$VER612/$f" "$TREE612/"
    done
    SYMVERS612=$DEST612/build/Module.symvers
    find "$TREE612/kernel" -name '*.ko*' -exec cat {} + >/dev/null   # warm the page cache
}

wall() {  # wall seconds of one run of "$@", output discarded
    local t0 t1
    t0=$(now)
    "$@" >/dev/null 2>&1 || true
    t1=$(now)
    awk "BEGIN{printf \"%.3f\", $t1 - $t0}"
}
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

bench_612() {
    setup_612
    local nmods s d sv=() dv=() ratios=()
    nmods=$(find "$TREE612/kernel" -name '*.ko*' | wc -l)
    echo "distro kernel $VER612 as installed: $nmods modules ($(find "$TREE612/kernel" -name '*.ko.xz' | wc -l) .ko.xz), $(wc -l < "$SYMVERS612") Module.symvers lines"
    echo "paired runs (load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; symcheck threads: ${SYMCHECK_JOBS:-$(nproc)}):"
    for i in $(seq "$PAIRS"); do
        if [ $((i % 2)) = 1 ]; then
            s=$(wall "$SYMCHECK" check -q --tree "$TREE612" "$SYMVERS612")
            d=$(wall "$DEPMOD" -b "$WORK/root612" -e -E "$SYMVERS612" "$VER612")
        else
            d=$(wall "$DEPMOD" -b "$WORK/root612" -e -E "$SYMVERS612" "$VER612")
            s=$(wall "$SYMCHECK" check -q --tree "$TREE612" "$SYMVERS612")
        fi
        sv+=("$s"); dv+=("$d")
        ratios+=("$(awk "BEGIN{printf \"%.3f\", $s / $d}")")
        printf '  pair %d: symcheck %s s, depmod %s s, ratio %s\n' "$i" "$s" "$d" "${ratios[-1]}"
    done
    s=$(median "${sv[@]}"); d=$(median "${dv[@]}")
    printf '  %-58s %8s\n' "symcheck check -q --tree (median of $PAIRS)" "$s"
    printf '  %-58s %8s\n' "depmod -e -E (median of $PAIRS)" "$d"
    printf '  %-58s %8s\n' "ratio symcheck/depmod (of the medians)" "$(awk "BEGIN{printf \"%.3f\", $s / $d}")"
    printf '  %-58s %8s\n' "ratio symcheck/depmod (median of the pairs)" "$(median "${ratios[@]}")"
    echo "  (load average after: $(cut -d' ' -f1-3 /proc/loadavg))"
    echo "findings: symcheck $("$SYMCHECK" check -q --tree "$TREE612" "$SYMVERS612" | tail -n1)"
    echo "          depmod   $("$DEPMOD" -b "$WORK/root612" -e -E "$SYMVERS612" "$VER612" 2>&1 | grep -cE 'unknown symbol|disagrees' || true) warning(s)"
}

[ "${SKIP_61:-0}" = 1 ] || bench_61
bench_612
