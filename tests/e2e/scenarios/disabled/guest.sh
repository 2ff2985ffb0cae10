#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# disabled, guest side: while hmb-fwsim produces, echo 0 >
# instances/hmb/events/hmb/enable, clear the buffer, wait, save the trace
# (must hold no hmb event); read the delivered counters; echo 1, wait, save
# the trace again (records must flow again, after those consumed meanwhile).
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

setup 16384
touch /mnt/ready
sleep 1.5
n=$(grep -c ' hmb_record:' "$I/trace")
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
echo "delivered_before_enable: $(cat "$S/delivered")" >/mnt/resume.txt
step "echo 1 > events/hmb/enable"
echo 1 >"$I/events/hmb/enable" || fail "echo 1 > events/hmb/enable"
echo "enable: $(cat "$I/events/hmb/enable")"
sleep 2
cat "$I/trace" >/mnt/enabled-trace.txt
dump_status /mnt/disabled-status.txt
alive
finish
