#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest half of kernel/patches/verify.sh (runs as /mnt/scenario.sh in the
# QEMU guest, busybox sh): loads the patched nvme-core/nvme from
# /mnt/modules instead of Debian's and checks that QEMU's emulated NVMe disk
# (no HMB, no HMB trace capability) works as before. One "ok - " or
# "not ok - " line per check; exits 1 if any failed.
#
# Disk layout (1 MiB patterns from the host's share): A written at 0 before
# the reset, B put at 4 MiB by the host, C written at 8 MiB after the reset.

MB=1048576
fails=0
ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; fails=$((fails + 1)); }
die() { not_ok "$*"; dmesg >/mnt/dmesg.txt; exit 1; }
# check "what" command...: ok or not ok, by the command's status.
check() {
	what=$1
	shift
	if "$@"; then ok "$what"; else not_ok "$what"; fi
}

# Wait up to $2 tenths of a second for the test $1 to succeed.
wait_for() {
	i=0
	while ! eval "$1"; do
		i=$((i + 1))
		[ "$i" -le "$2" ] || return 1
		sleep 0.1
	done
}

# Read 1 MiB at MiB offset $1 of the disk, bypassing the page cache, and
# compare it with the file $2.
mib_equals() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	blockdev --flushbufs /dev/nvme0n1
	dd if=/dev/nvme0n1 of=/tmp/read.bin bs=$MB skip="$1" count=1 2>/dev/null &&
		cmp -s /tmp/read.bin "$2"
}

# Write the file $2 at MiB offset $1, synchronously, and read it back.
write_mib() {
	dd if="$2" of=/dev/nvme0n1 bs=$MB seek="$1" count=1 conv=fsync 2>/dev/null &&
		mib_equals "$1" "$2"
}

is_patched() {
	[ "$(cat /sys/module/nvme/srcversion)" = "$(cat /mnt/nvme.srcversion)" ] &&
		[ "$(cat /sys/module/nvme_core/srcversion)" = "$(cat /mnt/nvme-core.srcversion)" ] &&
		[ -f /sys/module/nvme/parameters/hmb_trace ]
}

nvme_gone() { [ ! -d /sys/module/nvme ] && [ ! -d /sys/module/nvme_core ]; }
no_hmb_trace_area() { [ -z "$(ls /sys/class/hmb_trace 2>/dev/null)" ]; }

for m in crct10dif_common crc-t10dif crc64 crc64-rocksoft t10-pi nvme-core nvme; do
	insmod "/mnt/modules/$m.ko" || die "insmod $m.ko"
done
is_patched ||
	die "the loaded nvme, nvme_core are not the patched ones (srcversion, hmb_trace parameter)"
ok "patched nvme-core and nvme loaded (srcversion matches, hmb_trace=$(cat /sys/module/nvme/parameters/hmb_trace))"

wait_for '[ -b /dev/nvme0n1 ]' 200 || die "no /dev/nvme0n1 20 s after insmod"
ok "nvme0n1 appeared: $(tr -s ' ' </sys/class/nvme/nvme0/model), $(cat /sys/block/nvme0n1/size) sectors"

check "1 MiB written at 0 reads back equal" write_mib 0 /mnt/a.bin
check "1 MiB the host put at 4 MiB reads equal" mib_equals 4 /mnt/b.bin

# hmb_trace.ko's nvme backend subscribes to the patched nvme's notifier;
# with no HMB-capable controller it gets no area, before or after a reset.
hmb=0
if [ ! -f /mnt/modules/hmb_trace.ko ]; then
	not_ok "no hmb_trace.ko with the nvme backend to load"
elif insmod /mnt/modules/hmb_trace.ko; then
	hmb=1
	check "hmb_trace.ko (nvme backend) loaded: subscribed, no trace area" no_hmb_trace_area
else
	not_ok "insmod hmb_trace.ko (nvme backend)"
fi

echo 1 >/sys/class/nvme/nvme0/reset_controller || not_ok "write reset_controller"
# shellcheck disable=SC2016 # evaluated by wait_for
check "controller reset through sysfs, live again" \
	wait_for '[ "$(cat /sys/class/nvme/nvme0/state)" = live ]' 300
wait_for '[ -b /dev/nvme0n1 ]' 100 || not_ok "nvme0n1 gone after the reset"

check "after the reset: 1 MiB written at 8 MiB reads back equal" write_mib 8 /mnt/c.bin
check "after the reset: the data written before it reads equal" mib_equals 0 /mnt/a.bin

if [ "$hmb" = 1 ]; then
	if rmmod nvme 2>/dev/null; then
		not_ok "nvme could be removed while hmb_trace uses it"
	fi
	check "hmb_trace registered no area after the reset" no_hmb_trace_area
	check "rmmod hmb_trace (nvme backend unsubscribed)" rmmod hmb_trace
fi
rmmod nvme && rmmod nvme_core
check "rmmod nvme nvme_core" nvme_gone

dmesg >/mnt/dmesg.txt
bad=$(grep -E 'WARNING:|BUG:|Oops|Call Trace|general protection|HMB trace' /mnt/dmesg.txt)
if [ -z "$bad" ]; then
	ok "dmesg: no WARNING, BUG, Oops, call trace or HMB trace message"
else
	not_ok "dmesg: $bad"
fi
grep -E 'nvme' /mnt/dmesg.txt | sed 's/^/dmesg: /'

[ "$fails" -eq 0 ]
