#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# measure-idle (a measurement, not a test; not in run-all.sh): the CPU an
# idle device costs, with the events off and on (tests/e2e/measure_idle.py
# prints passes per second, ns per pass, busy CPU against the window
# without the module, the module's timer expiries and work items per
# second and its control requests per second: the area has a control
# channel, a mailbox). E2E_IDLE_SECONDS per window (default 10).
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

secs=${E2E_IDLE_SECONDS:-10}
e2e_prepare
echo "$secs" >"$HMBQ_SHARE/idle-seconds"
hmbq_mailbox
# A nearly idle firmware (1 record/s per core) that keeps answering the
# control channel for the whole run (hmb-fwsim serves it until it exits).
hmbq_fwsim_start --cores 4 --rate 1 --duration 600 --quiet --mailbox "$HMBQ_MAILBOX" \
	--truth "$HMBQ_SHARE/truth.json" ||
	{ echo "FAIL: hmb-fwsim"; exit 1; }
HMBQ_TIMEOUT=$((HMBQ_TIMEOUT > 200 ? HMBQ_TIMEOUT : 200))
# shellcheck disable=SC2119
hmbq_boot
hmbq_fwsim_stop
e2e_check "guest scenario ran to the end" e2e_guest_ok
e2e_check "idle cost" python3 "$E2E_DIR/measure_idle.py" "$HMBQ_SHARE"
hmbq_finish
