#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# measure-idle, guest side (a measurement, not part of run-all.sh): what an
# idle device costs. hmb-fwsim wrote a few records and stays attached but
# silent. Three windows of SECS seconds: the module not loaded (baseline),
# loaded with the events off (not consuming: the meta page is checked every
# 50 ms), loaded with the events on (drains back off to idle_interval_us).
# Per window: /proc/stat's busy jiffies of all CPUs (user+nice+system+irq+
# softirq) and, with the module, debugfs hmb_trace/<area>/drains.
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

secs=$(cat /mnt/idle-seconds)
D=/sys/kernel/debug
mount -t debugfs none "$D" 2>/dev/null

busy() {
	awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat
}

window() {
	b0=$(busy)
	[ -n "${1:-}" ] && cat "$1" >"/mnt/idle-$2-drains0.txt"
	t0=$(cut -d' ' -f1 /proc/uptime)
	sleep "$secs"
	t1=$(cut -d' ' -f1 /proc/uptime)
	[ -n "${1:-}" ] && cat "$1" >"/mnt/idle-$2-drains1.txt"
	b1=$(busy)
	echo "$2: busy_jiffies $((b1 - b0)) seconds $t0 $t1" | tee -a /mnt/idle.txt
}

touch /mnt/ready
wait_truth 30 || fail "hmb-fwsim did not finish"
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
