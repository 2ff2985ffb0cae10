#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# tracepoint, guest side: three consumers of the hmb tracepoints at once,
# the hmb instance, the top-level instance and perf stat -e 'hmb:*'. The
# hmb instance's tracing_on is 0 while they are set up and while hmb-fwsim
# produces everything (the firmware ring holds it): the drain's gate keeps
# the records there although the tracepoints have probes. tracing_on 1
# opens the gate; once every record is delivered, perf stops, both
# instances stop, and the two buffers are extracted. Brings back hmb.dat,
# top.dat, perf.txt, bpftrace.txt (with bpftrace), the status files and gate.txt (delivered while the
# gate was shut).
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

setup 8192
echo 8192 >"$T/buffer_size_kb" || fail "top-level buffer_size_kb"
# Nothing fires after the last record (no periodic metadata): the three
# consumers then stop on the same events.
echo 0 >"$S/dict_interval_ms" || fail "dict_interval_ms 0"
echo 0 >"$I/tracing_on" || fail "hmb tracing_on 0"
: >"$T/trace"
echo 1 >"$T/events/hmb/enable" || fail "top-level events/hmb/enable"
echo 1 >"$I/events/hmb/enable" || fail "hmb events/hmb/enable"

step "perf stat -e 'hmb:*' -a (its command runs once the counters are on)"
rm -f /tmp/perf-ready /tmp/perf-stop
perf stat -e 'hmb:*' -a -x, -o /tmp/perf.txt \
	sh -c ". /mnt/guest-lib.sh; touch /tmp/perf-ready; wait_file /tmp/perf-stop 600" \
	>/mnt/perf.log 2>&1 &
perf_pid=$!
wait_file /tmp/perf-ready 120 || fail "perf stat did not start its command"

# With bpftrace in the guest (host.sh: E2E_TP_BPFTRACE=1), a fourth
# consumer counts the records per event id; BEGIN runs once its probe is
# attached.
bpf_pid=
if command -v bpftrace >/dev/null; then
	step "bpftrace ($(bpftrace --version 2>&1 | head -n 1)): count hmb_record per event id"
	bpftrace -e 'BEGIN { printf("attached\n"); }
		tracepoint:hmb:hmb_record { @[args->event_id] = count(); }' \
		>/tmp/bpftrace.txt 2>/mnt/bpftrace.err &
	bpf_pid=$!
	n=0
	while ! grep -q attached /tmp/bpftrace.txt 2>/dev/null && [ "$n" -lt 1800 ] &&
		kill -0 "$bpf_pid" 2>/dev/null; do
		sleep 0.1
		n=$((n + 1))
	done
	grep -q attached /tmp/bpftrace.txt 2>/dev/null ||
		fail "bpftrace did not attach: $(cat /mnt/bpftrace.err)"
fi

step "hmb-fwsim produces; the hmb instance is off"
touch /mnt/ready
wait_truth
read -r d <"$S/delivered"
echo "delivered_while_off: $d" >/mnt/gate.txt
echo "consuming_while_off: $(cat "$S/consuming")" >>/mnt/gate.txt
cat /mnt/gate.txt

step "echo 1 > instances/hmb/tracing_on"
echo 1 >"$I/tracing_on" || fail "hmb tracing_on 1"
total() {
	echo $(($(sed 's/ /+/g' "$S/delivered")))
}
# Every record of every core (host.sh wrote cores x count); 120 s at most.
read -r want </mnt/tp-total
n=0
while [ "$(total)" -lt "$want" ] && [ "$n" -lt 1200 ]; do
	sleep 0.1
	n=$((n + 1))
done
step "delivered: $(cat "$S/delivered")"

if [ -n "$bpf_pid" ]; then
	kill -INT "$bpf_pid"
	wait "$bpf_pid" || fail "bpftrace failed: $(cat /mnt/bpftrace.err)"
	cp /tmp/bpftrace.txt /mnt/bpftrace.txt || fail "copy bpftrace.txt"
fi
touch /tmp/perf-stop
wait "$perf_pid" || fail "perf stat failed: $(cat /mnt/perf.log)"
cp /tmp/perf.txt /mnt/perf.txt || fail "copy perf.txt"
echo 0 >"$I/tracing_on"
echo 0 >"$T/tracing_on"
# The top level first: "trace-cmd extract -B hmb" takes the top-level
# buffer too (and consumes it), so the second file holds the instance only.
step "trace-cmd extract: the top level, then the hmb instance"
trace-cmd extract -o /tmp/top.dat >/mnt/extract-top.log 2>&1 ||
	fail "trace-cmd extract (top level)"
trace-cmd extract -B hmb -o /tmp/hmb.dat >/mnt/extract-hmb.log 2>&1 ||
	fail "trace-cmd extract -B hmb"
cp /tmp/top.dat /mnt/top.dat || fail "copy top.dat"
cp /tmp/hmb.dat /mnt/hmb.dat || fail "copy hmb.dat"
collect hmb
echo 0 >"$T/events/hmb/enable"
echo 0 >"$I/events/hmb/enable"
finish
