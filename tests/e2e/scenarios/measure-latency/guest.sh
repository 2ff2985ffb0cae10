#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# measure-latency, guest side (a measurement, not part of run-all.sh): the
# hmb instance's clock is set to "mono", workqueue_execute_start is enabled
# in it (to see when each drain pass starts) and so are the hmb events
# (which starts the drain); for each step i
# the host runs hmb-fwsim at a low rate once /mnt/ready.i exists, and
# pipe-stamp reads instances/hmb/trace_pipe, stamping every read with
# CLOCK_MONOTONIC -> /mnt/latency-pipe.i.txt, while a second pipe-stamp
# writes trace_marker lines carrying their write time at the same rate
# (the baseline: what the same path costs an event written at once).
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

# shellcheck disable=SC2119 # the default buffer size
setup
echo mono >"$I/trace_clock" || fail "trace_clock mono"
echo 1 >"$I/events/workqueue/workqueue_execute_start/enable" || fail "workqueue_execute_start"
# The module drains only while its events are enabled (older ones: always).
echo 1 >"$I/events/hmb/enable" || fail "enable the hmb events"
echo "trace_clock: $(cat "$I/trace_clock")"
# The drains' passes and their time, before and after each step: what
# polling costs while records flow at a low rate.
dr=$(ls -d /sys/kernel/debug/hmb_trace/*/drains 2>/dev/null | head -n 1)
[ -n "$dr" ] || fail "no debugfs hmb_trace/<area>/drains"
steps=$(cat /mnt/sweep-steps)
secs=$(cat /mnt/sweep-seconds)
i=0
while [ "$i" -lt "$steps" ]; do
	step "latency step $i: $(sed -n "$((i + 1))p" /mnt/sweep-rates) records/s per core"
	: >"$I/trace"
	cat "$dr" >"/mnt/latency-drains0.$i.txt"
	/mnt/pipe-stamp "$I/trace_pipe" "$((secs + 2))" >/tmp/lat.txt &
	p=$!
	/mnt/pipe-stamp -m "$I/trace_marker" "$secs" "$(sed -n "$((i + 1))p" /mnt/sweep-rates)" &
	m=$!
	touch "/mnt/ready.$i"
	wait "$m" || fail "marker writer step $i"
	wait "$p" || fail "pipe-stamp step $i"
	cat "$dr" >"/mnt/latency-drains1.$i.txt"
	cp /tmp/lat.txt "/mnt/latency-pipe.$i.txt"
	echo "$(grep -c ' hmb_record:' /tmp/lat.txt) records read"
	wait_file "/mnt/truth.$i.json" 30 || fail "hmb-fwsim step $i did not finish"
	i=$((i + 1))
done
finish
