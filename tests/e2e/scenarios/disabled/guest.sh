#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# disabled, guest side: echo 1 > instances/hmb/events/hmb/enable (the
# module drains nothing before: the events are off after insmod); while
# hmb-fwsim produces, echo 0, clear the buffer, wait, save the trace (must
# hold no hmb event) and the delivered counters before and after the wait
# (must not move: nothing is consumed while nobody traces); echo 1, wait,
# save the trace again (the records written meanwhile, kept in the
# firmware ring, come first).
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

setup 16384
touch /mnt/ready
sleep 1
read -r d <"$S/delivered"
echo "delivered_after_insmod: $d" >/mnt/resume.txt
echo "consuming_after_insmod: $(cat "$S/consuming")" >>/mnt/resume.txt
step "echo 1 > events/hmb/enable (firmware has produced for 1 s)"
echo 1 >"$I/events/hmb/enable" || fail "echo 1 > events/hmb/enable"
sleep 1.5
cat "$I/trace" >/mnt/first-trace.txt
n=$(grep -c ' hmb_record:' /mnt/first-trace.txt)
echo "records before disabling: $n"
[ "$n" -gt 0 ] || fail "no records before disabling"
step "echo 0 > events/hmb/enable"
echo 0 >"$I/events/hmb/enable" || fail "echo 0 > events/hmb/enable"
echo "enable: $(cat "$I/events/hmb/enable")"
: >"$I/trace"
read -r d0 <"$S/delivered"
sleep 2
read -r d1 <"$S/delivered"
cat "$I/trace" >/mnt/disabled-trace.txt
dump_ftrace_stats /mnt/disabled-ftrace-stats.txt
echo "delivered while disabled: $d0 -> $d1"
{
	echo "delivered_disabled_start: $d0"
	echo "delivered_before_enable: $d1"
	echo "consuming_while_disabled: $(cat "$S/consuming")"
} >>/mnt/resume.txt
step "echo 1 > events/hmb/enable"
echo 1 >"$I/events/hmb/enable" || fail "echo 1 > events/hmb/enable"
echo "enable: $(cat "$I/events/hmb/enable")"
sleep 2
cat "$I/trace" >/mnt/enabled-trace.txt
dump_status /mnt/disabled-status.txt
alive
finish
