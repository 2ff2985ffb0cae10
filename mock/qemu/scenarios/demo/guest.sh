#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# demo, guest side: load hmb_trace.ko, record the hmb instance with trace-cmd
# while hmb-fwsim (on the host) plays a few seconds of firmware activity, and
# leave the report and the module's loss counters in /mnt.
set -u
# shellcheck source=mock/qemu/guest-hmb.sh
. /mnt/guest-hmb.sh
echo "== insmod hmb_trace.ko $(hmb_ivshmem_param)"
# shellcheck disable=SC2046 # one word, or none
insmod /hmb_trace.ko $(hmb_ivshmem_param) || exit 1
dev=$(ls /sys/class/hmb_trace | head -n 1)
echo "area $dev: $(cat /sys/class/hmb_trace/"$dev"/nr_cores) cores"

echo "== trace-cmd record -B hmb -e hmb (the traced command starts the firmware)"
trace-cmd record -B hmb -e hmb -b 8192 -o /mnt/demo.dat \
	sh -c 'touch /mnt/ready; sleep 5' >/mnt/record.log 2>&1 || {
	cat /mnt/record.log
	exit 1
}
trace-cmd report -i /mnt/demo.dat >/mnt/report.txt 2>/mnt/report.err
trace-cmd report -i /mnt/demo.dat --stat >/mnt/report-stat.txt 2>&1

s=/sys/class/hmb_trace/$dev
{
	echo "build_id     $(cat "$s/build_id")"
	echo "producer_gen $(cat "$s/producer_gen")"
	echo "resets       $(cat "$s/resets")"
	echo "core_cpu     $(cat "$s/core_cpu")"
	echo "delivered    $(cat "$s/delivered")"
	for r in overwritten torn invalid reset; do
		echo "lost_$r $(cat "$s/lost/$r")"
	done
} >/mnt/status.txt
rmmod hmb_trace
exit 0
