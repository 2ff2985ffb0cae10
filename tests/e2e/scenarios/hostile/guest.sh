#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# hostile, guest side: trace-cmd records while hmb-fwsim produces and
# hmb-mutate (host) damages the area; then, for each of an area of all
# zeros, all 0xff and random bytes written by hmb-mutate: the status as the
# running module sees it (fill-W-live), after rmmod + insmod (fill-W-fresh),
# and once hmb-mutate wrote the good area back (fill-W-restored).
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

setup 16384
capture hostile 'wait_truth 90; sleep 2'
collect hostile
touch /mnt/row6-go
for w in zero ff random; do
	wait_file "/mnt/fill-$w" 30 || fail "no fill-$w from hmb-mutate"
	sleep 1
	dump_status "/mnt/hostile-fill-$w-live.txt"
	rmmod hmb_trace || fail "rmmod hmb_trace"
	S=
	load_module || fail "insmod after fill $w"
	sleep 1
	dump_status "/mnt/hostile-fill-$w-fresh.txt"
	touch "/mnt/seen-$w"
	wait_file "/mnt/restored-$w" 30 || fail "no restored-$w from hmb-mutate"
	sleep 1
	dump_status "/mnt/hostile-fill-$w-restored.txt"
	touch "/mnt/reattached-$w"
	step "fill $w: live $(cat "$S/state"), status files written"
done
alive
finish
