#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# clock, guest side: the area has a control channel (a mailbox device, see
# hmbq_mailbox); wait for the module's first clock fit, then record while
# hmb-fwsim writes and, PROBES times: a trace_marker line "HMBPROBE n=I
# before", a request to the firmware to emit an hmb_echo record with cookie
# I (ctrl/echo), a trace_marker line "HMBPROBE n=I after". Then the control
# channel's ops once each (event mask, stop/start, ring mode), the status.
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

probes=$(cat /mnt/probes)
setup 16384
[ "$(cat "$S/ctrl/available")" = 1 ] || { fail "no control channel (ctrl/available)"; finish; }
# shellcheck disable=SC2016 # expanded by the traced command's shell
capture clock '
	n=0
	while [ "$(cat "$S/clock/have_fit")" != 1 ]; do
		n=$((n + 1))
		[ "$n" -gt 100 ] && { fail "no clock fit after 10 s"; break; }
		sleep 0.1
	done
	sleep 2
	step "'"$probes"' echo probes"
	M=$I/trace_marker
	i=0
	while [ "$i" -lt '"$probes"' ]; do
		echo "HMBPROBE n=$i before" >"$M"
		echo "$i $((i % 2))" >"$S/ctrl/echo" || fail "ctrl/echo $i"
		echo "HMBPROBE n=$i after" >"$M"
		i=$((i + 1))
	done
	step "control ops"
	echo "0 0xfffffffffffffffe" >"$S/ctrl/event_mask" || fail "ctrl/event_mask"
	echo "event_mask: $(cat "$S/ctrl/event_mask")" >>/mnt/ctrl-ops.txt
	echo stop >"$S/ctrl/tracing" || fail "ctrl/tracing stop"
	echo "tracing: $(cat "$S/ctrl/tracing")" >>/mnt/ctrl-ops.txt
	echo start >"$S/ctrl/tracing" || fail "ctrl/tracing start"
	echo "tracing: $(cat "$S/ctrl/tracing")" >>/mnt/ctrl-ops.txt
	echo overwrite >"$S/ctrl/ring_mode" || fail "ctrl/ring_mode"
	echo "ring_mode: $(cat "$S/ctrl/ring_mode")" >>/mnt/ctrl-ops.txt
	sleep 1'
collect clock
for f in "$S"/clock/* "$S"/ctrl/*; do
	[ -r "$f" ] && echo "${f#"$S"/}: $(cat "$f")"
done >/mnt/clock-status.txt
alive
finish
