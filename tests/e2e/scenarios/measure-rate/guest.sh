#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# measure-rate, guest side (a measurement, not part of run-all.sh):
# 1. the hmb_record tracepoint alone: /sys/kernel/debug/hmb_trace/bench_record
#    of hmb_trace_bench.ko (N calls with a 14-byte payload, the mean of
#    hmb-fwsim's records), on CPU 0, three times, with the hmb events enabled
#    in the instance (as trace-cmd record has them) -> /mnt/bench.txt
# 2. a rate sweep at the default module settings: for each step i the host
#    runs hmb-fwsim (4 cores, the step's rate) once /mnt/ready.i exists;
#    trace-cmd record -B hmb -e hmb runs across the step; the delivered and
#    lost counters before/after and the ftrace per-cpu stats go to
#    /mnt/sweep.i.txt.
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

setup 16384
B=/sys/kernel/debug/hmb_trace/bench_record
# A hmb_trace.ko from before the split into two modules has the file itself.
[ -e "$B" ] || insmod /mnt/hmb_trace_bench.ko || fail "insmod hmb_trace_bench.ko"
step "tracepoint benchmark"
echo 1 >"$I/events/hmb/hmb_record/enable" || fail "enable hmb_record"
for len in 14 14 14; do
	taskset 1 sh -c "echo '1000000 $len' >$B" || fail "bench_record write"
	tee -a /mnt/bench.txt <"$B"
done
echo 0 >"$I/events/hmb/hmb_record/enable"
: >"$I/trace"

steps=$(cat /mnt/sweep-steps)
i=0
while [ "$i" -lt "$steps" ]; do
	step "sweep step $i: $(sed -n "$((i + 1))p" /mnt/sweep-rates) records/s per core"
	# shellcheck disable=SC2016 # expanded by the traced shell
	trace-cmd record -B hmb -e hmb -o /tmp/sweep.dat sh -c '
		. /mnt/guest-lib.sh
		i='"$i"'
		{ echo "before_delivered: $(cat $S/delivered)"
		  for r in overwritten torn invalid reset; do
			echo "before_lost_$r: $(cat $S/lost/$r)"; done; } >/mnt/sweep.$i.txt
		touch /mnt/ready.$i
		wait_file /mnt/truth.$i.json 300 || echo "FAIL: step $i: hmb-fwsim did not finish"
		sleep 1
		{ echo "after_delivered: $(cat $S/delivered)"
		  for r in overwritten torn invalid reset; do
			echo "after_lost_$r: $(cat $S/lost/$r)"; done; } >>/mnt/sweep.$i.txt
		for c in $I/per_cpu/cpu*; do
			echo "cpu: ${c##*/cpu}"; cat $c/stats; done >>/mnt/sweep.$i.txt
		' >/mnt/sweep.$i.log 2>&1 || fail "trace-cmd record step $i"
	echo "dat_bytes: $(wc -c </tmp/sweep.dat)" >>/mnt/sweep.$i.txt
	grep -E 'delivered|overrun|dropped|dat_bytes' /mnt/sweep.$i.txt
	rm -f /tmp/sweep.dat
	i=$((i + 1))
done
finish
