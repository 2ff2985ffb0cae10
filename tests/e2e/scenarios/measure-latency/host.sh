#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# measure-latency (a measurement, not a test; not in run-all.sh): latency
# from the producer's write to the record being read from
# instances/hmb/trace_pipe, at the default poll interval, for low rates
# (E2E_LATENCY_RATES records/s per core, 2 cores, E2E_LATENCY_SECONDS each).
#
# Method: fw_ts (hmb-fwsim's clock: host CLOCK_MONOTONIC minus an epoch) and
# the guest's clocks are on different machines, but under TCG the guest's
# clock (HPET = QEMU's virtual clock = host CLOCK_MONOTONIC) advances at the
# host's rate, so their offset is constant. The guest traces with
# trace_clock=mono plus workqueue_execute_start (drain pass starts), and
# pipe-stamp stamps each trace_pipe read with the guest's CLOCK_MONOTONIC.
# Per record: E = emit - fw_ts - offset (write -> in the ftrace buffer),
# P = emit - pass start, V = read - emit (P and V on one clock). A record is
# emitted after it is written, so offset = min over records of (emit -
# fw_ts): E is biased low by the true minimum write -> emit latency (>= the
# smallest P, ~10 us). The per-second minima of (emit - fw_ts) staying within
# tens of us of the overall minimum checks both assumptions (no drift, write
# phases spread over the poll period); measure.py prints that spread.
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

read -r -a rates <<<"${E2E_LATENCY_RATES:-97 997}"
secs=${E2E_LATENCY_SECONDS:-8}
e2e_prepare
gcc -O2 -static -Wall -o "$HMBQ_SHARE/pipe-stamp" "$E2E_DIR/pipe-stamp.c" ||
	{ echo "FAIL: cannot build pipe-stamp"; exit 1; }
echo "$secs" >"$HMBQ_SHARE/sweep-seconds"
# step_args I RATE: 2 cores at RATE for SECS.
# shellcheck disable=SC2317 # called by e2e_sweep_start
step_args() {
	E2E_STEP_ARGS=(--cores 2 --rate "$2" --duration "$secs")
}
e2e_sweep_start step_args "${rates[@]}"
# shellcheck disable=SC2119
hmbq_boot
e2e_sweep_stop

e2e_check "guest scenario ran to the end" e2e_guest_ok
for i in "${!rates[@]}"; do
	ln -sf "latency-pipe.$i.txt" "$HMBQ_SHARE/latency-pipe.txt"
	ln -sf "latency-drains0.$i.txt" "$HMBQ_SHARE/latency-drains0.txt"
	ln -sf "latency-drains1.$i.txt" "$HMBQ_SHARE/latency-drains1.txt"
	echo "== ${rates[$i]} records/s per core, 2 cores"
	e2e_check "latency at ${rates[$i]}/s" python3 "$E2E_DIR/measure.py" latency "$HMBQ_SHARE"
done
rm -f "$HMBQ_SHARE/latency-pipe.txt" "$HMBQ_SHARE"/latency-drains[01].txt
hmbq_finish
