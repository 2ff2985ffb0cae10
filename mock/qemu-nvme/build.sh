#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build the reference SSD: Debian's QEMU 7.2 with the patch series of
# mock/qemu-nvme/patches/ (Host Memory Buffer and the hmbtrace trace
# capability on the emulated NVMe controller) and the project's reference
# producer (producer/) compiled into it unchanged. Prints the path of the
# qemu-system-x86_64 it built (or found in the cache) on stdout; progress goes
# to stderr.
#
# Cache: $HMB_QEMU_NVME_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/hmbtrace/
# qemu-nvme, outside the tree, so that every checkout of the machine, CI's
# fresh clones too, shares one build; one build.sh at a time holds its
# lock). The binary lives in bin/<key>/, where <key> is a hash of the
# source package version, the series and the producer sources: it is rebuilt
# only when one of them changes. The unpacked source tree is kept per source
# version, so a changed patch costs an incremental ninja run (~10 s for
# hw/nvme/ctrl.c), not a full build (~8 min of 2 CPUs).
#
# Needs: scripts/install-deps.sh --qemu-source (deb-src entry, -dev packages).
# Usage: mock/qemu-nvme/build.sh [--print-key]
# Exit status 77 (with the reason on stderr) when apt knows no qemu source
# package, i.e. scripts/install-deps.sh --qemu-source could not add one.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
cache=${HMB_QEMU_NVME_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hmbtrace/qemu-nvme}
jobs=${HMB_QEMU_NVME_JOBS:-$(nproc)}

log() { echo "qemu-nvme: $*" >&2; }
die() { log "$*"; exit 1; }

# What the archive serves now: bookworm keeps only the current version, so
# it is looked up, not pinned.
src_version()
{
	apt-cache showsrc qemu 2>/dev/null |
		awk '/^Package: qemu$/ && !v { p = 1 } p && /^Version:/ && !v { v = $2 } END { print v }'
}

mapfile -t patches < <(find "$here/patches" -maxdepth 1 -name '*.patch' | sort)
# The firmware compiled into the device, unchanged: the reference producer,
# the ABI headers, and the simulated firmware's events, hmb-fwsim's own
# declarations (fwsim_events.def through hmb_trace_declare.h), so every
# tool knows them, and the die model's (patch 0004, causes_events.def).
producer_files=("$repo/producer/hmb_trace_producer.c" "$repo/producer/hmb_trace_producer.h"
		"$repo/producer/hmb_trace_declare.h"
		"$repo/include/hmb_trace_abi.h" "$repo/include/hmb_trace_ctrl_abi.h"
		"$repo/mock/fwsim/fwsim_events.c" "$repo/mock/fwsim/fwsim_events.h"
		"$repo/mock/fwsim/fwsim_events.def"
		"$repo/mock/fwsim/causes/causes_events.c" "$repo/mock/fwsim/causes/causes_events.h"
		"$repo/mock/fwsim/causes/causes_events.def")

version=$(src_version)
if [[ -z $version ]]; then
	log "no qemu source package known to apt; run scripts/install-deps.sh --qemu-source"
	exit 77
fi
key=$( { echo "$version"; cat "${patches[@]}" "${producer_files[@]}" "$here/build.sh"; } |
	sha256sum | cut -c1-16)
if [[ ${1:-} == --print-key ]]; then
	echo "$key"
	exit 0
fi

bin="$cache/bin/$key/qemu-system-x86_64"
mkdir -p "$cache"
# Two checkouts building at once would patch one source tree twice.
exec 9>"$cache/.lock"
flock 9
if [[ -x $bin ]]; then
	echo "$bin"
	exit 0
fi

mkdir -p "$cache/src"
# The source package (three files, 24 MB), kept across builds of a version.
# No epoch in the directory name: QEMU's configure refuses a colon.
srcdir="$cache/src/qemu-${version#*:}"
if [[ ! -d $srcdir/.hmb-pristine ]]; then
	log "fetching the qemu $version source package"
	dl="$cache/src/dl-${version#*:}"
	rm -rf "$dl" "$srcdir"
	mkdir -p "$dl"
	(cd "$dl" && apt-get source -q --download-only "qemu=$version" >&2)
	dsc=$(ls "$dl"/*.dsc)
	dpkg-source --no-check -x "$dsc" "$srcdir" >&2
	mkdir -p "$srcdir/.hmb-pristine"
	: >"$srcdir/.hmb-applied"
fi

# Take back what an earlier series did, then apply this one: the tree and its
# build directory stay, so ninja rebuilds only what the patches touch.
if [[ -s $srcdir/.hmb-applied ]]; then
	mapfile -t old < <(tac "$srcdir/.hmb-applied")
	for p in "${old[@]}"; do
		patch -d "$srcdir" -p1 -R -s -f <"$srcdir/.hmb-pristine/$p" >&2 ||
			die "cannot revert $p; remove $srcdir"
	done
	: >"$srcdir/.hmb-applied"
fi
rm -f "$srcdir"/.hmb-pristine/*.patch
for p in "${patches[@]}"; do
	name=$(basename "$p")
	log "applying $name"
	patch -d "$srcdir" -p1 -s -N <"$p" >&2 || die "$name does not apply to qemu $version"
	cp "$p" "$srcdir/.hmb-pristine/$name"
	echo "$name" >>"$srcdir/.hmb-applied"
done

# The reference producer, the same files the project builds and tests; the
# series' hw/nvme/meson.build compiles them from hw/nvme/hmbtrace/.
mkdir -p "$srcdir/hw/nvme/hmbtrace"
for f in "${producer_files[@]}"; do
	cmp -s "$f" "$srcdir/hw/nvme/hmbtrace/$(basename "$f")" ||
		cp "$f" "$srcdir/hw/nvme/hmbtrace/"
done

b="$srcdir/build-hmb"
if [[ ! -f $b/build.ninja ]]; then
	log "configuring (the first build takes ~8 min of 2 CPUs)"
	rm -rf "$b"
	mkdir -p "$b"
	(cd "$b" && ../configure --target-list=x86_64-softmmu --disable-docs --disable-werror \
		--without-default-features --enable-tcg --enable-virtfs --enable-attr \
		--enable-cap-ng --enable-fdt=system \
		--firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu >&2)
fi
log "building qemu-system-x86_64 ($jobs jobs)"
nice -n 5 ninja -C "$b" -j "$jobs" qemu-system-x86_64 >&2

mkdir -p "$cache/bin/$key"
cp "$b/qemu-system-x86_64" "$bin.tmp"
mv "$bin.tmp" "$bin"
echo "$bin"
