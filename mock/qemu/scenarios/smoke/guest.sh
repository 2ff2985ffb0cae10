#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# smoke, guest side: the ivshmem HMB is visible, tracefs works, trace-cmd records
# and reports; with the module, it loads and its "hmb" instance records events.
# Results go to /mnt for host.sh to check. Exit status: number of failed steps.

fails=0
step() {
	echo "== [$(cut -d' ' -f1 /proc/uptime)] $*"
}
fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

step "PCI devices (vendor device)"
for d in /sys/bus/pci/devices/*; do
	echo "${d##*/} $(cat "$d/vendor") $(cat "$d/device")"
done | tee /mnt/pci.txt
grep -q '0x1af4 0x1110' /mnt/pci.txt || fail "no ivshmem-plain (1af4:1110) device"

step "tracefs"
if [ -d /sys/kernel/tracing/events ]; then
	echo "tracefs ok; trace_clock: $(cat /sys/kernel/tracing/trace_clock)"
else
	fail "/sys/kernel/tracing is not a mounted tracefs"
fi

module=0
if [ -f /hmb_trace.ko ]; then
	module=1
	# shellcheck source=mock/qemu/guest-hmb.sh
	. /mnt/guest-hmb.sh
	params="$(hmb_ivshmem_param) $(cat /mnt/module-params 2>/dev/null)"
	step "insmod /hmb_trace.ko $params"
	# shellcheck disable=SC2086 # params are separate words
	if insmod /hmb_trace.ko $params; then
		lsmod | tee /mnt/lsmod.txt
	else
		fail "insmod hmb_trace.ko"
		module=0
	fi
	dmesg | grep -i hmb | tee /mnt/dmesg-hmb.txt
	# shellcheck disable=SC2012 # plain names
	ls /sys/kernel/tracing/instances | tee /mnt/instances.txt
	[ -d /sys/kernel/tracing/instances/hmb ] || fail "no trace instance hmb"
else
	echo "(no /hmb_trace.ko in the initramfs: module steps skipped)"
fi

# hmb-fwsim (on the host, --wait-for /mnt/ready) starts producing when told; with
# the module, right before the hmb instance is recorded (trace-cmd clears it).
[ "$module" = 1 ] || touch /mnt/ready

step "trace-cmd record -e sched:sched_switch sleep 1"
if trace-cmd record -o /mnt/smoke.dat -e sched:sched_switch sleep 1 \
	>/mnt/record.log 2>&1; then
	trace-cmd report -i /mnt/smoke.dat 2>&1 | head -n 20 | tee /mnt/smoke-report.txt
else
	cat /mnt/record.log
	fail "trace-cmd record"
fi

if [ "$module" = 1 ] && [ -d /sys/kernel/tracing/instances/hmb ]; then
	step "trace-cmd record -B hmb -e hmb, hmb-fwsim producing for 4 s"
	# trace-cmd clears the instance before it records, and the module enables
	# its events at load: so the traced command itself starts the producer, once
	# trace-cmd is recording, and the capture begins at the first record.
	trace-cmd record -B hmb -e hmb -o /mnt/hmb.dat \
		sh -c 'touch /mnt/ready; sleep 4' >/mnt/hmb-record.log 2>&1 &
	rec=$!
	if wait $rec; then
		trace-cmd report -i /mnt/hmb.dat >/mnt/hmb-report.txt 2>&1
		head -n 5 /mnt/hmb-report.txt
		echo "hmb events: $(grep -c ' hmb_' /mnt/hmb-report.txt)"
		# First sequence number seen per firmware core.
		sed -n 's/.* hmb_record: .* core=\([0-9]*\) seq=\([0-9]*\) .*/\1 \2/p' \
			/mnt/hmb-report.txt | awk '!($1 in f) { f[$1] = $2 } END {
			for (c in f) print "core " c ": first seq " f[c] }'
	else
		cat /mnt/hmb-record.log
		fail "trace-cmd record -B hmb"
	fi
	step "status: /sys/class/hmb_trace/*/"
	for f in /sys/class/hmb_trace/*/*; do
		case "$f" in
		*/dictionary) echo "${f#/sys/class/hmb_trace/}: $(wc -c <"$f") bytes" ;;
		*) [ -f "$f" ] && echo "${f#/sys/class/hmb_trace/}: $(cat "$f" 2>&1)" ;;
		esac
	done | tee /mnt/hmb-status.txt
	step "rmmod hmb_trace"
	rmmod hmb_trace || fail "rmmod hmb_trace"
	dmesg | tail -n 5
fi

dmesg >/mnt/dmesg.txt
step "done: $fails failure(s)"
exit "$fails"
