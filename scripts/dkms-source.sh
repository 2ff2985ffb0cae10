#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Writes the DKMS source tree of hmb_trace.ko into DIR (made if missing):
# dkms.conf and the files the module's Kbuild reads, in the tree's layout
# (kernel/hmb_trace/ + consumer/ + clock/ + include/), plus the licences.
# Only sources: no build output of a previous make is copied.
# With --nvme: the tree of hmbtrace-nvme-dkms instead: the same files, with
# kernel/patches/dkms.conf as its dkms.conf, kernel/patches/nvme-build.sh
# and every series of kernel/patches (the patches, no scripts or tests).
# Usage: scripts/dkms-source.sh [--nvme] DIR
#        (e.g. /usr/src/hmbtrace-0.1.0, /usr/src/hmbtrace-nvme-0.1.0)
set -euo pipefail
nvme=0
[[ ${1:-} != --nvme ]] || { nvme=1; shift; }
if (($# != 1)) || [[ $1 == -* ]]; then
	echo "usage: $0 [--nvme] DIR   (e.g. /usr/src/hmbtrace-\$VERSION)" >&2
	exit 2
fi
src=$(cd "$(dirname "$0")/.." && pwd)
dest=$1
files=(
	kernel/hmb_trace/Kbuild kernel/hmb_trace/Makefile kernel/hmb_trace/README.md
	kernel/hmb_trace/*.c kernel/hmb_trace/*.h
	kernel/hmb_trace/bench/Kbuild kernel/hmb_trace/bench/*.c
	consumer/hmb_consumer.c consumer/hmb_consumer.h consumer/hmb_consumer_port.h
	clock/hmb_clock_fit.c clock/hmb_clock_fit.h
	clock/hmb_clock_sync.c clock/hmb_clock_sync.h
	include/hmb_trace_abi.h include/hmb_trace_ctrl_abi.h include/hmb_trace_events_abi.h include/hmb_trace_dump_abi.h
	LICENSES/preferred/GPL-2.0 LICENSES/preferred/MIT LICENSES/exceptions/Linux-syscall-note
)
cd "$src"
if ((nvme)); then
	files+=(kernel/patches/nvme-build.sh kernel/patches/README.md
		kernel/patches/0[0-9][0-9][0-9]-*.patch kernel/patches/[0-9]*.[0-9]*/0[0-9][0-9][0-9]-*.patch)
	install -D -m 0644 kernel/patches/dkms.conf "$dest/dkms.conf"
else
	files+=(dkms.conf)
fi
mkdir -p "$dest"
for f in "${files[@]}"; do
	[[ -f $f ]] || { echo "dkms-source: $f is missing from $src" >&2; exit 1; }
	install -D -m 0644 "$f" "$dest/$f"
done
((!nvme)) || chmod 0755 "$dest/kernel/patches/nvme-build.sh"
