#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# Fail if the firmware build of the producer needs any symbol from outside
# (no libc, no libgcc helpers); print its code size.
set -eu
obj=$1
size=$2
nm=$(dirname "$size")/arm-none-eabi-nm
"$size" "$obj"
undef=$("$nm" -u "$obj")
if [ -n "$undef" ]; then
	echo "producer needs external symbols on Cortex-R5:" >&2
	echo "$undef" >&2
	exit 1
fi
echo "producer: freestanding, no external symbols"
