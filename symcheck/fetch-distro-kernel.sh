#!/bin/bash
# Fetch the Debian distribution kernel (image + headers) as test fixtures for symcheck.
# Downloads with `apt-get download` (never installs), extracts with `dpkg -x`.
# Idempotent: a completed fetch leaves $DEST/.complete and is not redone.
#
# Result layout ($DEST = ${KSYMLAB_CACHE:-/var/cache/ksymlab}/distro; distro-6.12 with --line 6.12):
#   $DEST/VERSION            kernel release, e.g. 6.1.0-57-amd64
#   $DEST/build/             "build dir": Module.symvers + vmlinux
#   $DEST/modules/           all .ko files (decompressed if the package ships .ko.xz; not made
#                            for --line 6.12, whose .ko.xz stay as shipped under root/lib/modules)
#   $DEST/root/              dpkg -x tree of the image and headers packages
#   $DEST/debs/              the downloaded .deb files
#
# `fetch-distro-kernel.sh --resolve` only prints the three package names (image, headers,
# headers-common) that a fetch would download, and exits.
# `--line 6.12` takes Debian 12's 6.12 kernel instead (linux-image-6.12-amd64's dependency,
# linux-image-6.12.N+deb12-amd64, from bookworm-security) into $CACHE/distro-6.12; the default
# line is 6.1 (linux-image-amd64's dependency) into $CACHE/distro, as before. Neither form needs root, only a
# writable cache (apt-get update, run when apt knows no linux-image-amd64, does).
# `--line 7.2` takes Debian forky's 7.2 kernel (forky's linux-image-amd64 depends on
# linux-image-7.2.N+deb14-amd64) into $CACHE/distro-7.2, through the harness's private forky apt
# configuration under the cache (harness/prepare/archive.py; nothing under /etc changes). Forky
# splits the image: its package is empty and depends on linux-binary-K (vmlinuz),
# linux-modules-K (the .ko.xz under usr/lib/modules) and linux-base-K (modules.order,
# modules.builtin, System.map), which are fetched in its place.
#
# Under pipefail a pipeline fails when any of its commands does, including a writer killed
# by SIGPIPE because the reader stopped early (`awk '{...; exit}'`, `head -n1`, `grep -q`,
# `grep -m`): the script then ended with status 141 and no message. So no pipeline here
# stops reading before its input ends, and the ERR trap names the line of any failure.
set -eEuo pipefail
trap 'rc=$?; echo "fetch-distro-kernel: line $LINENO: command failed (status $rc)" >&2' ERR

CACHE=${KSYMLAB_CACHE:-/var/cache/ksymlab}
SRC_TARBALL=${LINUX_SOURCE_TARBALL:-/usr/src/linux-source-6.1.tar.xz}

die() { echo "fetch-distro-kernel: $*" >&2; exit 1; }

RESOLVE_ONLY=0
LINE=6.1
while [ $# -gt 0 ]; do
    case "$1" in
        --resolve) RESOLVE_ONLY=1 ;;
        --line) [ $# -ge 2 ] || die "usage: fetch-distro-kernel.sh [--line 6.1|6.12|7.2] [--resolve]"
                LINE=$2; shift ;;
        *) die "usage: fetch-distro-kernel.sh [--line 6.1|6.12|7.2] [--resolve]" ;;
    esac
    shift
done
# META: the metapackage whose Depends names the image; IMG_RE: the image package's name.
case "$LINE" in
    6.1)  DEST=$CACHE/distro; META=linux-image-amd64; IMG_RE='^linux-image-6\.1\.0-[0-9]+-amd64' ;;
    6.12) DEST=$CACHE/distro-6.12; META=linux-image-6.12-amd64
          IMG_RE='^linux-image-6\.12\.[0-9]+\+deb12-amd64' ;;
    7.2)  DEST=$CACHE/distro-7.2; META=linux-image-amd64; IMG_RE='^linux-image-7\.2\.[0-9]+\+deb14-amd64'
          # forky's packages: apt-get and apt-cache read the private configuration
          REPO=$(cd "$(dirname "$0")/.." && pwd)
          APT_CONFIG=$(cd "$REPO" && python3 -m harness.prepare.archive apt-config forky) \
              || die "no private apt configuration for forky (harness/prepare/archive.py)"
          export APT_CONFIG ;;
    *) die "unknown --line $LINE (6.1, 6.12 or 7.2)" ;;
esac

# IMG: the linux-image-6.1.0-NN-amd64 package that linux-image-amd64's candidate depends on
# (for 6.12: linux-image-6.12.N+deb12-amd64, from linux-image-6.12-amd64)
# (the first such alternative of the first Depends: line). awk reads all of apt-cache's
# output (no `exit`), so apt-cache never writes into a closed pipe.
resolve_image() {
    local meta_ver
    if ! apt-cache show "$META" >/dev/null 2>&1; then
        if [ "$(id -u)" = 0 ]; then apt-get update -qq || true; fi
    fi
    meta_ver=$(apt-cache policy "$META" | awk '/Candidate:/ && !v {v = $2} END {print v}')
    [ -n "$meta_ver" ] && [ "$meta_ver" != "(none)" ] || die "no candidate for $META (run apt-get update)"
    IMG=$(apt-cache show "$META=$meta_ver" | awk -F': ' -v re="$IMG_RE" '
        /^Depends:/ && img == "" {
            n = split($2, alt, /[,|]/)
            for (i = 1; i <= n; i++) {
                p = alt[i]; sub(/ *\(.*/, "", p); gsub(/^ +| +$/, "", p)
                if (p ~ re) { img = p; break }
            }
        }
        END { print img }')
    [ -n "$IMG" ] || die "cannot find an image matching $IMG_RE in Depends of $META=$meta_ver"
    META_VER=$meta_ver
}

if [ "$RESOLVE_ONLY" = 1 ]; then
    resolve_image
    KREL=${IMG#linux-image-}; KREL=${KREL%-unsigned}
    if [ "$LINE" = 7.2 ]; then
        echo "linux-binary-$KREL linux-modules-$KREL linux-base-$KREL linux-headers-$KREL linux-headers-${KREL%-amd64}-common"
    else
        echo "$IMG linux-headers-$KREL linux-headers-${KREL%-amd64}-common"
    fi
    exit 0
fi

if [ -f "$DEST/.complete" ] && [ -s "$DEST/build/vmlinux" ] && [ -s "$DEST/build/Module.symvers" ]; then
    echo "fetch-distro-kernel: already present in $DEST ($(cat "$DEST/VERSION"))"
    exit 0
fi

# apt-get download needs no root; the cache directory must be writable.
mkdir -p "$DEST" 2>/dev/null && [ -w "$DEST" ] \
    || die "cannot write $DEST: run as root or set KSYMLAB_CACHE to a writable directory"
for t in apt-get apt-cache dpkg xz tar; do
    command -v "$t" >/dev/null || die "missing tool: $t"
done

resolve_image
KREL=${IMG#linux-image-}          # 6.1.0-NN-amd64, 6.12.N+deb12-amd64
KREL=${KREL%-unsigned}
ABI=${KREL%-amd64}                # 6.1.0-NN, 6.12.N+deb12
HDR=linux-headers-$KREL
HDRC=linux-headers-$ABI-common

# Where the image's files are: /boot and /lib/modules, or forky's usr/lib/modules with
# vmlinuz inside, from the two packages its empty image package depends on.
if [ "$LINE" = 7.2 ]; then
    PKGS="linux-binary-$KREL linux-modules-$KREL linux-base-$KREL $HDR $HDRC"
    VMLINUZ=$DEST/root/usr/lib/modules/$KREL/vmlinuz
    MODROOT=$DEST/root/usr/lib/modules/$KREL
else
    PKGS="$IMG $HDR $HDRC"
    VMLINUZ=$DEST/root/boot/vmlinuz-$KREL
    MODROOT=$DEST/root/lib/modules/$KREL
fi

mkdir -p "$DEST/debs" "$DEST/root" "$DEST/build" "$DEST/modules"
echo "fetch-distro-kernel: $PKGS ($META $META_VER) -> $DEST"
cd "$DEST/debs"
for p in $PKGS; do
    if ! ls "${p}"_*.deb >/dev/null 2>&1; then
        apt-get download "$p" || die "apt-get download $p failed"
    fi
done
for d in ./*.deb; do
    dpkg -x "$d" "$DEST/root"
done

# Module.symvers from the headers package.
SYMVERS=$DEST/root/usr/src/linux-headers-$KREL/Module.symvers
[ -f "$SYMVERS" ] || die "no Module.symvers in $HDR"
cp -f "$SYMVERS" "$DEST/build/Module.symvers"

# vmlinux from vmlinuz with the kernel's own scripts/extract-vmlinux.
[ -f "$VMLINUZ" ] || die "no $VMLINUZ in $PKGS"
EXTRACT=$DEST/extract-vmlinux
if [ ! -x "$EXTRACT" ]; then
    if [ -f /usr/src/linux-headers-"$KREL"/scripts/extract-vmlinux ]; then
        cp /usr/src/linux-headers-"$KREL"/scripts/extract-vmlinux "$EXTRACT"
    elif [ -f "$DEST/root/usr/src/linux-headers-$ABI-common/scripts/extract-vmlinux" ]; then
        cp "$DEST/root/usr/src/linux-headers-$ABI-common/scripts/extract-vmlinux" "$EXTRACT"
    else
        [ -f "$SRC_TARBALL" ] || die "need $SRC_TARBALL (apt-get install linux-source-6.1) for scripts/extract-vmlinux"
        tmpd=$(mktemp -d)
        tar -xJf "$SRC_TARBALL" -C "$tmpd" --wildcards '*/scripts/extract-vmlinux' \
            || die "cannot extract scripts/extract-vmlinux from $SRC_TARBALL"
        found=$(find "$tmpd" -path '*/scripts/extract-vmlinux' -type f -print -quit)
        [ -n "$found" ] || die "no scripts/extract-vmlinux in $SRC_TARBALL"
        cp "$found" "$EXTRACT"
        rm -rf "$tmpd"
    fi
    chmod +x "$EXTRACT"
fi
if [ ! -s "$DEST/build/vmlinux" ]; then
    "$EXTRACT" "$VMLINUZ" > "$DEST/build/vmlinux.tmp" || die "extract-vmlinux failed"
    mv "$DEST/build/vmlinux.tmp" "$DEST/build/vmlinux"
fi

# Modules: copy, decompressing .ko.xz / .ko.zst if needed (6.1 only: the 6.12 and 7.2 lines
# are for checking the tree as installed, compressed).
[ -d "$MODROOT" ] || die "no $MODROOT"
if [ "$LINE" = 6.1 ]; then
    ( cd "$MODROOT/kernel" && find . -name '*.ko' -o -name '*.ko.xz' -o -name '*.ko.zst' -o -name '*.ko.gz' ) |
    while read -r rel; do
        out="$DEST/modules/${rel#./}"
        out=${out%.xz}; out=${out%.zst}; out=${out%.gz}
        [ -s "$out" ] && continue
        mkdir -p "$(dirname "$out")"
        case "$rel" in
            *.xz)  xz -dc "$MODROOT/kernel/$rel" > "$out" ;;
            *.zst) zstd -qdc "$MODROOT/kernel/$rel" > "$out" ;;
            *.gz)  gzip -dc "$MODROOT/kernel/$rel" > "$out" ;;
            *)     cp "$MODROOT/kernel/$rel" "$out" ;;
        esac
    done
fi

echo "$KREL" > "$DEST/VERSION"
touch "$DEST/.complete"
echo "fetch-distro-kernel: done: $(find "$MODROOT/kernel" -name '*.ko*' | wc -l) modules, $(wc -l < "$DEST/build/Module.symvers") Module.symvers lines"
