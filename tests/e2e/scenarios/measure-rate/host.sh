#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# measure-rate (a measurement, not a test; not in run-all.sh): the rate per
# core that the guest sustains with zero loss at the default module settings
# while trace-cmd records, stepping hmb-fwsim's rate up (E2E_SWEEP_RATES,
# records/s per core, 4 cores; 0 = flat out for 2 s), and the hmb_record
# tracepoint alone (debugfs bench_record of hmb_trace_bench.ko; see
# measure-lib.sh for where it is taken from). Prints a table; figures in
# build/qemu-runs/measure-rate/.
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"
# shellcheck source=tests/e2e/measure-lib.sh
source "$E2E_DIR/measure-lib.sh"

read -r -a rates <<<"${E2E_SWEEP_RATES:-5000 10000 20000 40000 80000 160000 0}"
secs=${E2E_SWEEP_SECONDS:-2}
e2e_prepare
measure_bench_module || exit 1
# step_args I RATE: 4 cores; a count of SECS at RATE, or flat out for SECS.
# shellcheck disable=SC2317 # called by e2e_sweep_start
step_args() {
	E2E_STEP_ARGS=(--cores 4 --rate "$2")
	if (($2)); then
		E2E_STEP_ARGS+=(--count $(($2 * secs)))
	else
		E2E_STEP_ARGS+=(--duration "$secs")
	fi
}
e2e_sweep_start step_args "${rates[@]}"
HMBQ_TIMEOUT=$((HMBQ_TIMEOUT > 400 ? HMBQ_TIMEOUT : 400))
# shellcheck disable=SC2119
hmbq_boot
e2e_sweep_stop

e2e_check "guest scenario ran to the end" e2e_guest_ok
e2e_check "measurements" python3 "$E2E_DIR/measure.py" rate "$HMBQ_SHARE"
hmbq_finish
