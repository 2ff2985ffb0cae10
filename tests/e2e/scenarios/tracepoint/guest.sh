#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# tracepoint, guest side: three consumers of the hmb tracepoints at once,
# the hmb instance, the top-level instance and perf stat -e 'hmb:*'. The
# hmb instance's tracing_on is 0 while they are set up and while hmb-fwsim
# produces everything (the firmware ring holds it): the drain's gate keeps
# the records there although the tracepoints have probes. tracing_on 1
# opens the gate; once every record is delivered, perf stops, both
# instances stop, and the two buffers are extracted. Brings back all.dat
# (both buffers), perf.txt, the status files and gate.txt (delivered while the
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
	_t=0
	for _n in $(cat "$S/delivered"); do _t=$((_t + _n)); done
	echo "$_t"
}
# Every record of every core (host.sh wrote cores x count); 120 s at most.
read -r want </mnt/tp-total
n=0
while [ "$(total)" -lt "$want" ] && [ "$n" -lt 1200 ]; do
	sleep 0.1
	n=$((n + 1))
done
step "delivered: $(cat "$S/delivered")"

touch /tmp/perf-stop
wait "$perf_pid" || fail "perf stat failed: $(cat /mnt/perf.log)"
cp /tmp/perf.txt /mnt/perf.txt || fail "copy perf.txt"
echo 0 >"$I/tracing_on"
echo 0 >"$T/tracing_on"
# One extraction holds both buffers (the top level's lines unprefixed,
# the instance's prefixed "hmb:"): a second would find them consumed.
step "trace-cmd extract -B hmb (both buffers)"
trace-cmd extract -B hmb -o /tmp/all.dat >/mnt/extract.log 2>&1 ||
	fail "trace-cmd extract -B hmb"
cp /tmp/all.dat /mnt/all.dat || fail "copy all.dat"
collect hmb
echo 0 >"$T/events/hmb/enable"
echo 0 >"$I/events/hmb/enable"
finish
