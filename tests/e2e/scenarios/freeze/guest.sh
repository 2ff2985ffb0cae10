#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# freeze, guest side: arm the firmware's freeze (ctrl/freeze_config: a
# 10 ms latency threshold, N = 16) before it produces, nobody tracing;
# wait for the module to see it frozen and for its crash dump
# (devcoredump), save both; re-arm (ctrl/freeze rearm) and see it running.
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

save_coredump() {
	for d in /sys/class/devcoredump/devcd*; do
		[ "$(head -c 8 "$d/data" 2>/dev/null)" = HMBTDUMP ] || continue
		cat "$d/data" >"$1" && echo 1 >"$d/data" && return 0
	done
	return 1
}

ops=/mnt/freeze-ops.txt
setup
[ "$(cat "$S/ctrl/available")" = 1 ] || { fail "no control channel (ctrl/available)"; finish; }
echo "10000000 16" >"$S/ctrl/freeze_config" || fail "ctrl/freeze_config"
echo "freeze_config: $(cat "$S/ctrl/freeze_config")" >$ops
echo "armed: $(cat "$S/ctrl/freeze")" >>$ops
step "armed; the firmware produces"
touch /mnt/ready
n=0
until [ "$(cat "$S/ctrl/freeze")" = frozen ]; do
	n=$((n + 1))
	[ "$n" -gt 600 ] && { fail "not frozen after 60 s"; break; }
	sleep 0.1
done
step "frozen: $(cat "$S/ctrl/freeze")"
echo "frozen: $(cat "$S/ctrl/freeze")" >>$ops
n=0
until save_coredump /mnt/freeze.dump; do
	n=$((n + 1))
	[ "$n" -gt 100 ] && { fail "no crash dump of the freeze after 10 s"; break; }
	sleep 0.1
done
for f in /sys/kernel/debug/hmb_trace/*/freeze; do
	[ -r "$f" ] && sed 's/^/debugfs /' "$f" >>$ops
done
echo rearm >"$S/ctrl/freeze" || fail "ctrl/freeze rearm"
sleep 1
echo "rearmed: $(cat "$S/ctrl/freeze")" >>$ops
dump_status /mnt/freeze-status.txt
wait_truth 60
alive
finish
