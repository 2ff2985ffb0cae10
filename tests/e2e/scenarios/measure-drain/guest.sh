#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# measure-drain, guest side (a measurement, not part of run-all.sh). The
# host filled the area before the boot and wrote /mnt/drain-params:
# "RUN RECORDS LEN BUFFER_KB".
# 1. the instance hmb is made first, with BUFFER_KB per CPU (the whole
#    drain fits: nothing overwritten) and workqueue_execute_start/end
#    enabled in it (drain passes); hmb_trace.ko adopts it at insmod. A
#    second instance, bench, as large, takes the benchmark's events.
# 2. the bare tracepoint, twice: hmb_trace_bench.ko's bench_record, RECORDS
#    calls of LEN bytes on CPU 0, with hmb_record enabled in instance bench
#    only (enabling it there starts no drain) -> /mnt/bench.RUN.txt
# 3. echo 1 > instances/hmb/events/hmb/enable starts the drain; wait until
#    the delivered counters stop growing; echo 0
# 4. the bare tracepoint twice more, so that the drain sits between its runs
#    on a host whose load changes
# 5. trace-cmd extract -B hmb -> /mnt/drain.RUN.dat; counters before and
#    after -> /mnt/drain.RUN.txt, status.RUN.txt, ftrace-stats.RUN.txt
# A module that drains from insmod (before issue 9) has drained when step 2
# begins: step 2 then waits for it and disables its events first (the
# tracepoint would write into both instances otherwise).
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

read -r run records len buffer_kb </mnt/drain-params
B=/sys/kernel/debug/hmb_trace/bench_record
BI=$T/instances/bench
notes=/mnt/drain.$run.txt

# delivered_sum: records delivered by the area, all cores (no fork: the
# poll shares the CPU with the drain).
delivered_sum() {
	read -r line <"$S/delivered"
	t=0
	for x in $line; do
		t=$((t + x))
	done
	echo "$t"
}

# wait_drained: until every record is delivered, or 3 s without growth;
# then 1 s more: a module may count a pass's records before it has emitted
# them all, and what it emits after the events are disabled is gone.
wait_drained() {
	prev=-1
	still=0
	n=0
	while [ "$n" -lt 600 ]; do
		d=$(delivered_sum)
		[ "$d" -ge "$records" ] && sleep 1 && return 0
		if [ "$d" = "$prev" ]; then
			still=$((still + 1))
			[ "$still" -ge 15 ] && return 1
		else
			still=0
		fi
		prev=$d
		n=$((n + 1))
		sleep 0.2
	done
	return 1
}

# bench: one bench_record run on CPU 0 into instance bench -> bench.RUN.txt
bench() {
	: >"$BI/trace"
	echo 1 >"$BI/events/hmb/hmb_record/enable" || fail "enable hmb_record in bench"
	taskset 1 sh -c "echo '$records $len' >$B" || fail "bench_record write"
	echo 0 >"$BI/events/hmb/hmb_record/enable"
	tee -a "/mnt/bench.$run.txt" <"$B"
}

step "run $run: instances hmb and bench with buffer_size_kb $buffer_kb, then insmod"
mkdir "$I" "$BI" 2>/dev/null
for d in "$I" "$BI"; do
	echo "$buffer_kb" >"$d/buffer_size_kb" || fail "$d/buffer_size_kb $buffer_kb"
done
for e in workqueue_execute_start workqueue_execute_end; do
	echo 1 >"$I/events/workqueue/$e/enable" || fail "enable $e"
done
load_module || finish
# Not adopted (a resize while a module drains would discard events): set it.
read -r kb _ <"$I/buffer_size_kb"
[ "$kb" -ge $((buffer_kb / 2)) ] ||
	{ echo "$buffer_kb" >"$I/buffer_size_kb" || fail "buffer_size_kb after insmod"; }
[ -e "$B" ] || insmod /mnt/hmb_trace_bench.ko || fail "insmod hmb_trace_bench.ko"
if [ "$(cat "$I/events/hmb/hmb_record/enable")" = 1 ]; then
	step "hmb_record enabled at insmod: the module drains from insmod"
	wait_drained || fail "only $(delivered_sum) of $records delivered"
	echo 0 >"$I/events/hmb/enable"
fi

step "bare tracepoint: $records calls of $len bytes on CPU 0, twice"
: >"/mnt/bench.$run.txt"
bench
bench

echo "delivered_before_enable: $(cat "$S/delivered")" | tee "$notes"
step "drain: echo 1 > events/hmb/enable"
echo 1 >"$I/events/hmb/enable" || fail "enable the hmb events"
wait_drained || fail "only $(delivered_sum) of $records delivered"
echo 0 >"$I/events/hmb/enable"
step "drained: $(delivered_sum) of $records"
echo "delivered_after: $(cat "$S/delivered")" | tee -a "$notes"

step "bare tracepoint twice more"
bench
bench

dump_status "/mnt/status.$run.txt"
dump_ftrace_stats "/mnt/ftrace-stats.$run.txt"
grep -E '^(cpu|entries|overrun|dropped)' "/mnt/ftrace-stats.$run.txt" | tr '\n' ' '
echo
step "trace-cmd extract -B hmb"
if trace-cmd extract -B hmb -o /tmp/drain.dat >/tmp/extract.log 2>&1; then
	cp /tmp/drain.dat "/mnt/drain.$run.dat" || fail "copy drain.$run.dat"
else
	cat /tmp/extract.log
	fail "trace-cmd extract"
fi
rm -f /tmp/drain.dat
finish
