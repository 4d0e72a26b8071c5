#!/bin/bash
# Benchmark (not a test): check every .ko of the Debian distro kernel against its Module.symvers
# with symcheck, side by side with `depmod -e -E` on the same input.
# Needs the fixtures of fetch-distro-kernel.sh (run as root; KSYMLAB_CACHE overrides the cache dir).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
SYMCHECK=${SYMCHECK:-$HERE/build/symcheck}
DEST=${KSYMLAB_CACHE:-/var/cache/ksymlab}/distro
REPEAT=${REPEAT:-3}

[ -x "$SYMCHECK" ] || make -C "$HERE" all >/dev/null
if [ ! -f "$DEST/.complete" ]; then
    "$HERE/fetch-distro-kernel.sh"
fi
VER=$(cat "$DEST/VERSION")
DEPMOD=$(command -v depmod || echo /sbin/depmod)

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
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
