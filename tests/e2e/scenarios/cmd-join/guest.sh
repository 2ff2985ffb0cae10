#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# cmd-join, guest side: the guest has an emulated NVMe disk (/dev/nvme0n1,
# one I/O queue per vCPU) whose commands hmb-fwsim (host) follows in QEMU's
# trace log and serves as the simulated firmware. No clock sync before the
# capture (nobody traces); `hmbtrace-cmd record` (nvme events in the top
# instance, hmb records) while, on each vCPU, JOBS dd processes pinned with
# taskset read or write COUNT 4 KiB blocks with O_DIRECT: several queues,
# queue depth JOBS per queue.
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

count=$(cat /mnt/count)
jobs=$(cat /mnt/jobs)
clock=$(cat /mnt/clock 2>/dev/null)
setup 16384
[ -b /dev/nvme0n1 ] || { fail "no /dev/nvme0n1 (nvme driver not loaded? see console.log)"; finish; }
nq=0
for q in /sys/block/nvme0n1/mq/*; do
	[ -e "$q" ] && nq=$((nq + 1))
done
echo "nvme queues: $nq"
[ "$(cat "$S/ctrl/available")" = 1 ] || { fail "no control channel (ctrl/available)"; finish; }
# No clock fit before the capture: the sync runs only while someone
# traces (and once at attach for a crash dump's fit: coredump_kb=0 here,
# host.sh); when tracing starts, the drains hold the first records until
# the first fit (kernel/hmb_trace/README.md, "Control channel").
[ "$(cat "$S/ctrl/sync")" = idle ] || fail "clock sync not idle before the capture ($(cat "$S/ctrl/sync"))"
ncpu=$(grep -c ^processor /proc/cpuinfo)
cat >/tmp/io.sh <<IO
touch /mnt/ready
sleep 1
c=0
while [ \$c -lt $ncpu ]; do
	j=0
	while [ \$j -lt $jobs ]; do
		off=\$(((c * $jobs + j) * $count))
		if [ \$((j % 2)) = 0 ]; then
			taskset -c \$c dd if=/dev/nvme0n1 of=/dev/null bs=4k count=$count skip=\$off iflag=direct 2>/dev/null &
		else
			taskset -c \$c dd if=/dev/zero of=/dev/nvme0n1 bs=4k count=$count seek=\$off oflag=direct 2>/dev/null &
		fi
		j=\$((j + 1))
	done
	c=\$((c + 1))
done
wait
sleep 1
IO
step "hmbtrace-cmd record: $ncpu vCPUs x $jobs dd x $count blocks${clock:+, trace clock $clock}"
t0=$(cut -d' ' -f1 /proc/uptime)
if hmbtrace-cmd record ${clock:+--clock "$clock"} -o /tmp/cmd-join.dat -- sh /tmp/io.sh >/mnt/cmd-join-record.log 2>&1; then
	cp /tmp/cmd-join.dat /mnt/cmd-join.dat || fail "copy cmd-join.dat to /mnt"
else
	cat /mnt/cmd-join-record.log
	fail "hmbtrace-cmd record"
fi
t1=$(cut -d' ' -f1 /proc/uptime)
echo "record_s: $t0 $t1" >/mnt/cmd-join-times.txt
cat /mnt/cmd-join-record.log
collect cmd-join
alive
finish
