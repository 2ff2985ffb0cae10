#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# record, guest side: trace-cmd record -B hmb -e hmb while hmb-fwsim (host)
# produces a fixed count per core; the traced command starts the producer
# (/mnt/ready) and ends once hmb-fwsim has written its truth file, plus a
# margin for the last poll and a periodic dictionary. Brings back the
# capture, the status files and the ftrace per-cpu stats; host.sh compares
# them with the truth (tests/e2e/verify_trace.py record). Then rmmod during
# a second recording must be refused, and work once it ends.
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

setup 16384
capture_all record

# Unloading during a recording: refused (module in use) until trace-cmd
# ends, so that the capture keeps the hmb event formats. capture_all's
# trace-cmd left the events disabled; the tracer that enables hmb_record
# pins the module (hmb_trace_record_reg()).
step "rmmod while trace-cmd records"
rm -f /tmp/recording
trace-cmd record -B hmb -e hmb -o /tmp/pinned.dat \
	sh -c 'touch /tmp/recording; sleep 1' >/mnt/pinned.log 2>&1 &
rec=$!
wait_file /tmp/recording 60 || fail "trace-cmd record did not start its command"
if rmmod hmb_trace 2>/mnt/pinned-rmmod.txt; then
	fail "rmmod hmb_trace succeeded while trace-cmd was recording"
else
	echo "refused: $(cat /mnt/pinned-rmmod.txt)" >/mnt/pinned-rmmod.txt
fi
wait "$rec" || fail "trace-cmd record (during rmmod) failed"
cp /tmp/pinned.dat /mnt/pinned.dat || fail "copy pinned.dat"
rmmod hmb_trace || fail "rmmod hmb_trace after the recording ended"
finish
