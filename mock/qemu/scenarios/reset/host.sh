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
set -uo pipefail
# shellcheck source=mock/qemu/scenario-lib.sh
source "$HMBQ_LIB"
# shellcheck source=tests/e2e/e2e-lib.sh
# shellcheck disable=SC2153 # HMBQ_REPO comes from run-scenario.sh
source "$HMBQ_REPO/tests/e2e/e2e-lib.sh"

rate=${E2E_RESET_RATE:-2000}
count=${E2E_RESET_COUNT:-8000}
reset_at=${E2E_RESET_AT:-4000}
e2e_prepare
hmbq_fwsim_start --cores 4 --rate "$rate" --count "$count" --reset-at "$reset_at" \
	--seed 5 --quiet --truth "$HMBQ_SHARE/truth.json" || { echo "FAIL: hmb-fwsim"; exit 1; }
# shellcheck disable=SC2119
hmbq_boot
hmbq_fwsim_stop

e2e_check "guest scenario ran to the end" e2e_guest_ok
e2e_check "guest still up after the reset" hmbq_nonempty alive
e2e_check "hmb-fwsim produced its count and wrote the truth" e2e_fwsim_finished count
e2e_check "the capture came back and decodes on the host" e2e_report reset.dat reset.txt
e2e_verify "reset at $reset_at: reset event, new life from seq 0, counters" reset \
	--truth "$HMBQ_SHARE/truth.json" --report "$HMBQ_SHARE/reset.txt" \
	--status "$HMBQ_SHARE/reset-status.txt"
e2e_check "hmbtrace-cmd stat of the capture agrees with the truth" e2e_cmd_stat reset.dat
e2e_check "no kernel WARNING/BUG/Oops" e2e_no_kernel_errors
hmbq_finish
