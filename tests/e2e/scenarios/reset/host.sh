#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# reset: hmb-fwsim --reset-at N re-initialises the producer mid-run (new
# producer generation, sequence numbers restart). Checks: on every CPU that
# carries records one hmb_state(reset) with the new producer_gen, followed by
# a dictionary of that generation; every core's new life starts at seq 0 and
# is delivered exactly (produced per the truth); the old life is in order
# (its unread tail at the reset is reported: the producer wiped the ring);
# status resets = 1, producer_gen = the new one, delivered = the capture;
# the guest stays up.
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

rate=${E2E_RESET_RATE:-2000}
count=${E2E_RESET_COUNT:-8000}
reset_at=${E2E_RESET_AT:-4000}
e2e_boot --cores 4 --rate "$rate" --count "$count" --reset-at "$reset_at" --seed 5

e2e_check "guest still up after the reset" hmbq_nonempty alive
e2e_check_produced
e2e_check_capture reset
e2e_verify "reset at $reset_at: reset event, new life from seq 0, counters" reset \
	--truth "$HMBQ_SHARE/truth.json" --report "$HMBQ_SHARE/reset.txt" \
	--status "$HMBQ_SHARE/reset-status.txt"
e2e_check_stat reset
e2e_finish
