#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# clock: firmware time on the host clock, checked by causality. hmb-fwsim
# has a drifting clock (E2E_CLOCK_PPM, changing to E2E_CLOCK_PPM_AFTER half
# way) and a control channel (mailbox); the guest brackets E2E_CLOCK_PROBES
# firmware echo records between two trace_marker lines. Checks
# (tests/e2e/verify_clock.py): every echo record's converted time (the
# capture's hmb_clock fit) lies between its two markers widened by the
# stated bound, for every probe; the bound is reported (median, worst);
# the control ops were acknowledged; no WARN/BUG/Oops. Then the capture is
# retimed (hmbtrace-cmd retime) and the same check runs on plain
# `trace-cmd report` of it, with each echo record's own timestamp, in
# trace-cmd's own order.
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

probes=${E2E_CLOCK_PROBES:-1000}
e2e_prepare
echo "$probes" >"$HMBQ_SHARE/probes"
hmbq_mailbox
hmbq_fwsim_start --cores 2 --rate 2000 --duration 40 --seed 31 --quiet \
	--clock-hz 1000000000 --drift-ppm "${E2E_CLOCK_PPM:-80}" \
	--drift-change-at 20 --drift-ppm-after "${E2E_CLOCK_PPM_AFTER:--90}" \
	--mailbox "$HMBQ_MAILBOX" --truth "$HMBQ_SHARE/truth.json" ||
	{ echo "FAIL: hmb-fwsim"; exit 1; }
HMBQ_TIMEOUT=$((HMBQ_TIMEOUT > 300 ? HMBQ_TIMEOUT : 300))
# shellcheck disable=SC2119 # no extra run-guest.sh arguments
hmbq_boot
hmbq_fwsim_stop
e2e_check "guest scenario ran to the end" e2e_guest_ok
e2e_check_capture clock
e2e_check "every echo record's converted time between its markers, within the bound" \
	python3 "$E2E_DIR/verify_clock.py" --report "$HMBQ_SHARE/clock.txt" \
	--truth "$HMBQ_SHARE/truth.json" --probes "$probes" \
	--status "$HMBQ_SHARE/clock-status.txt" --ops "$HMBQ_SHARE/ctrl-ops.txt"
e2e_check "hmbtrace-cmd retime of the capture" e2e_cmd_retime clock.dat clock-retimed.dat
e2e_check_capture clock-retimed
e2e_check "trace-cmd report of the retimed capture: every echo record between its markers, within the bound" \
	python3 "$E2E_DIR/verify_clock.py" --retimed --report "$HMBQ_SHARE/clock-retimed.txt" \
	--truth "$HMBQ_SHARE/truth.json" --probes "$probes"
e2e_finish
