#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# measure-idle, guest side (a measurement, not part of run-all.sh): what an
# idle device costs. hmb-fwsim writes 1 record per second per core and
# answers the control channel. Three windows of SECS seconds: the module not loaded (baseline),
# loaded with the events off (not consuming: the meta page is checked every
# 50 ms), loaded with the events on (drains back off to idle_interval_us).
# Per window: /proc/stat's busy jiffies of all CPUs (user+nice+system+irq+
# softirq), the module's timer expiries and work items (an instance "cost"
# with timer:hrtimer_expire_entry and workqueue:workqueue_execute_start,
# counted by function) and its control requests (ctrl/requests: vendor
# commands on nvme-pci, mailbox requests here) and, with the module,
# debugfs hmb_trace/<area>/drains.
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

secs=$(cat /mnt/idle-seconds)
D=/sys/kernel/debug
mount -t debugfs none "$D" 2>/dev/null

busy() {
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat
}

W=/sys/kernel/tracing/instances/cost
mkdir "$W" && echo 4096 >"$W/buffer_size_kb" &&
	echo 1 >"$W/events/timer/hrtimer_expire_entry/enable" &&
	echo 1 >"$W/events/workqueue/workqueue_execute_start/enable" ||
	fail "instance cost with the timer and workqueue events"

requests() {
	cat "$S/ctrl/requests" 2>/dev/null || echo 0
}

window() {
	b0=$(busy)
	r0=$(requests)
	[ -n "${1:-}" ] && cat "$1" >"/mnt/idle-$2-drains0.txt"
	: >"$W/trace"
	t0=$(cut -d' ' -f1 /proc/uptime)
	sleep "$secs"
	t1=$(cut -d' ' -f1 /proc/uptime)
	timers=$(grep -c 'hrtimer_expire_entry:.*function=hmb_trace_' "$W/trace")
	works=$(grep -c 'workqueue_execute_start:.*function hmb_trace_' "$W/trace")
	[ -n "${1:-}" ] && cat "$1" >"/mnt/idle-$2-drains1.txt"
	b1=$(busy)
	r1=$(requests)
	echo "$2: busy_jiffies $((b1 - b0)) seconds $t0 $t1 timers $timers works $works requests $((r1 - r0))" |
		tee -a /mnt/idle.txt
}

touch /mnt/ready
sleep 2
step "window: module not loaded"
window "" unloaded
setup
dr=$(ls -d "$D"/hmb_trace/*/drains 2>/dev/null | head -n 1)
[ -n "$dr" ] || fail "no debugfs hmb_trace/<area>/drains"
step "window: events off"
window "$dr" off
echo 1 >"$I/events/hmb/enable" || fail "echo 1 > events/hmb/enable"
sleep 1
step "window: events on, device idle"
window "$dr" on
echo 0 >"$I/events/hmb/enable"
dump_status /mnt/idle-status.txt
finish
