#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# demo, guest side: the guest has QEMU's emulated NVMe disk (/dev/nvme0n1),
# whose commands hmb-fwsim (on the host) serves as the simulated firmware.
# Load hmb_trace.ko, wait for its first fit of the firmware clock, then
# `hmbtrace-cmd record` (the host's nvme events and the firmware's records)
# while a short mixed read/write workload runs on the disk between two
# trace_marker lines. Leaves in /mnt: demo.dat, record.log, status.txt (the
# module's loss counters), demo-workload.txt.
set -u
# shellcheck source=mock/qemu/guest-hmb.sh
. /mnt/guest-hmb.sh
# shellcheck disable=SC2046 # one word, or none
insmod /hmb_trace.ko $(hmb_ivshmem_param) || exit 1
for s in /sys/class/hmb_trace/*; do
	[ -d "$s" ] && break
done
[ -b /dev/nvme0n1 ] || { echo "demo: no /dev/nvme0n1 (nvme driver not loaded?)"; exit 1; }
# No clock fit to wait for: the sync runs only while someone traces, and
# when tracing starts the drains hold the first records back until the
# first fit (kernel/hmb_trace/README.md, "Control channel").
[ "$(cat "$s/ctrl/available")" = 1 ] || { echo "demo: no control channel (ctrl/available)"; exit 1; }

# On each vCPU: one reader (4 KiB) and one writer (16 KiB), O_DIRECT, so
# every block is one NVMe command on that vCPU's queue.
ncpu=$(grep -c ^processor /proc/cpuinfo)
blocks=150
echo "$ncpu vCPUs x (dd read 4 KiB + dd write 16 KiB) x $blocks blocks, O_DIRECT" \
	>/mnt/demo-workload.txt
cat >/tmp/io.sh <<IO
touch /mnt/ready
sleep 1
hmbtrace-cmd marker "demo: mixed read/write workload on /dev/nvme0n1 begins"
c=0
while [ \$c -lt $ncpu ]; do
	taskset -c \$c dd if=/dev/nvme0n1 of=/dev/null bs=4k count=$blocks skip=\$((c * 4 * $blocks)) iflag=direct 2>/dev/null &
	taskset -c \$c dd if=/dev/zero of=/dev/nvme0n1 bs=16k count=$blocks seek=\$(((c + 1) * $blocks)) oflag=direct 2>/dev/null &
	c=\$((c + 1))
done
wait
hmbtrace-cmd marker "demo: workload done"
sleep 1
IO
hmbtrace-cmd record -o /tmp/demo.dat -- sh /tmp/io.sh >/mnt/record.log 2>&1 || {
	cat /mnt/record.log
	exit 1
}
cp /tmp/demo.dat /mnt/demo.dat || exit 1
{
	echo "delivered    $(cat "$s/delivered")"
	for r in overwritten torn invalid reset; do
		echo "lost_$r $(cat "$s/lost/$r")"
	done
} >/mnt/status.txt
rmmod hmb_trace
exit 0
