#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# toggle, guest side: while hmb-fwsim produces on 4 cores and a reader
# follows trace_pipe, turn hmb_record on and off 60 times at random
# short intervals (each "on" kicks every drain), clearing the buffer
# every 10th time; then leave it on and check the records still flow.
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

setup 4096
touch /mnt/ready
cat "$I/trace_pipe" >/dev/null &
reader=$!
step "60 x echo 1 / echo 0 > events/hmb/enable"
i=0
while [ "$i" -lt 60 ]; do
	echo 1 >"$I/events/hmb/enable" || fail "echo 1 > events/hmb/enable (round $i)"
	# 0 to 30 ms on, 0 to 10 ms off: the kick lands on timers in every state.
	# shellcheck disable=SC3028 # busybox ash has RANDOM
	sleep "0.0$((RANDOM % 3))$((RANDOM % 10))"
	echo 0 >"$I/events/hmb/enable" || fail "echo 0 > events/hmb/enable (round $i)"
	[ $((i % 10)) = 9 ] && : >"$I/trace"
	# shellcheck disable=SC3028 # busybox ash has RANDOM
	sleep "0.00$((RANDOM % 10))"
	i=$((i + 1))
done
step "echo 1 > events/hmb/enable, and records must flow"
echo 1 >"$I/events/hmb/enable" || fail "echo 1 > events/hmb/enable"
read -r d0 <"$S/delivered"
sleep 1
read -r d1 <"$S/delivered"
echo "delivered per core: $d0 -> $d1"
# shellcheck disable=SC2086 # one word per core
set -- $d0
moved=0
for n in $d1; do
	[ "$n" -gt "$1" ] && moved=$((moved + 1))
	shift
done
[ "$moved" = 4 ] || fail "after the toggling, $moved of 4 cores delivered records in 1 s"
echo 0 >"$I/events/hmb/enable"
kill "$reader" 2>/dev/null
wait "$reader" 2>/dev/null
alive
finish
