#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# checkpatch.sh - run the kernel's checkpatch.pl --strict on hmb_trace.ko.
#
# checkpatch.pl comes from Debian's linux-source-6.1 package
# (apt-get install linux-source-6.1); the three files it needs are
# extracted once into a cache directory.
#
#   ./checkpatch.sh            the module's own sources
#   ./checkpatch.sh --core     also the portable consumer core and clock/
#                              code it compiles
#   ./checkpatch.sh FILE...    the given files
#
# Environment: LINUX_SOURCE_TAR (default /usr/src/linux-source-6.1.tar.xz),
# HMB_CHECKPATCH_CACHE (default ${XDG_CACHE_HOME:-$HOME/.cache}/hmbtrace/checkpatch).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
tarball=${LINUX_SOURCE_TAR:-/usr/src/linux-source-6.1.tar.xz}
cache=${HMB_CHECKPATCH_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hmbtrace/checkpatch}
script=$cache/scripts/checkpatch.pl

if [ ! -x "$script" ]; then
	if [ ! -f "$tarball" ]; then
		echo "checkpatch.sh: $tarball missing: apt-get install linux-source-6.1" >&2
		exit 2
	fi
	top=$(basename "$tarball" .tar.xz)
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	echo "checkpatch.sh: extracting checkpatch.pl from $tarball into $cache" >&2
	tar -xJf "$tarball" -C "$tmp" \
		"$top/scripts/checkpatch.pl" \
		"$top/scripts/spelling.txt" \
		"$top/scripts/const_structs.checkpatch"
	mkdir -p "$cache/scripts"
	cp "$tmp/$top/scripts/checkpatch.pl" \
	   "$tmp/$top/scripts/spelling.txt" \
	   "$tmp/$top/scripts/const_structs.checkpatch" "$cache/scripts/"
	chmod +x "$script"
fi

core=
if [ "${1:-}" = "--core" ]; then
	core=1
	shift
fi

if [ $# -eq 0 ]; then
	# Relative names: checkpatch's file-name checks need them.
	cd "$here"
	# The consumer core (../../consumer) and the clock fit and sync
	# policy (../../clock) are portable C shared with user space (uint*_t,
	# no kernel types): checked only with --core.
	set -- hmb_trace_*.c hmb_trace.h hmb_trace_*.h bench/hmb_trace_bench.c
	if [ -n "$core" ]; then
		set -- "$@" ../../consumer/hmb_consumer.c \
			../../consumer/hmb_consumer.h \
			../../consumer/hmb_consumer_port.h \
			../../clock/hmb_clock_fit.c ../../clock/hmb_clock_fit.h \
			../../clock/hmb_clock_sync.c ../../clock/hmb_clock_sync.h
	fi
fi

exec "$script" --strict --no-tree --show-types --terse -f "$@"
