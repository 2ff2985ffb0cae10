#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# measure-rate (a measurement, not a test; not in run-all.sh): the rate per
# core that the guest sustains with zero loss at the default module settings
# while trace-cmd records, stepping hmb-fwsim's rate up (E2E_SWEEP_RATES,
# records/s per core, 4 cores; 0 = flat out for 2 s), and the hmb_record
# tracepoint alone (debugfs bench_record). Prints a table; figures in
# build/qemu-runs/measure-rate/.
set -uo pipefail
# shellcheck source=mock/qemu/scenario-lib.sh
source "$HMBQ_LIB"
# shellcheck source=tests/e2e/e2e-lib.sh
# shellcheck disable=SC2153 # HMBQ_REPO comes from run-scenario.sh
source "$HMBQ_REPO/tests/e2e/e2e-lib.sh"

read -r -a rates <<<"${E2E_SWEEP_RATES:-5000 10000 20000 40000 80000 160000 0}"
secs=${E2E_SWEEP_SECONDS:-2}
e2e_prepare
printf '%s\n' "${rates[@]}" >"$HMBQ_SHARE/sweep-rates"
echo "${#rates[@]}" >"$HMBQ_SHARE/sweep-steps"
hmbq_have_fwsim || { echo "FAIL: hmb-fwsim not built"; exit 1; }

# One hmb-fwsim per step, each waiting for the guest's ready.i; each
# re-initialises the area (the module sees a reset between steps).
(
	for i in "${!rates[@]}"; do
		r=${rates[$i]}
		if ((r)); then lim=(--count $((r * secs))); else lim=(--duration "$secs"); fi
		"$HMBQ_FWSIM" --area "$HMBQ_AREA" --size "$HMBQ_AREA_SIZE" --cores 4 \
			--rate "$r" "${lim[@]}" --seed "$((i + 1))" --quiet \
			--wait-for "$HMBQ_SHARE/ready.$i" \
			--truth "$HMBQ_SHARE/truth.$i.json" >>"$HMBQ_SHARE/fwsim.log" 2>&1 &
		echo $! >"$HMBQ_SHARE/fwsim.pid"
		wait $! || exit 1
	done
) &
sweeper=$!
HMBQ_TIMEOUT=$((HMBQ_TIMEOUT > 400 ? HMBQ_TIMEOUT : 400))
# shellcheck disable=SC2119
hmbq_boot
if kill -0 "$sweeper" 2>/dev/null; then
	kill -TERM "$(cat "$HMBQ_SHARE/fwsim.pid")" 2>/dev/null
	kill -TERM "$sweeper" 2>/dev/null
fi
wait "$sweeper" 2>/dev/null

e2e_check "guest scenario ran to the end" e2e_guest_ok
e2e_check "measurements" python3 "$E2E_DIR/measure.py" rate "$HMBQ_SHARE"
hmbq_finish
