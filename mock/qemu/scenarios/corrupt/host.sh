#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# corrupt: hmb-fwsim --corrupt-page CORE:SEQ writes garbage into a page
# header. Checks: the status error counters count it; the corrupted core
# reports hmb_lost(invalid) whose range lies within the corrupted page, and
# status lost/invalid agrees; every other record of every core is delivered
# in order (delivered + lost = produced, exactly); other cores lose nothing;
# the guest stays up; no WARN/BUG/Oops.
set -uo pipefail
# shellcheck source=mock/qemu/scenario-lib.sh
source "$HMBQ_LIB"
# shellcheck source=tests/e2e/e2e-lib.sh
# shellcheck disable=SC2153 # HMBQ_REPO comes from run-scenario.sh
source "$HMBQ_REPO/tests/e2e/e2e-lib.sh"

rate=${E2E_CORRUPT_RATE:-2000}
count=${E2E_CORRUPT_COUNT:-8000}
corrupt=${E2E_CORRUPT_PAGE:-1:3000}
e2e_prepare
hmbq_fwsim_start --cores 4 --rate "$rate" --count "$count" --corrupt-page "$corrupt" \
	--seed 9 --quiet --truth "$HMBQ_SHARE/truth.json" || { echo "FAIL: hmb-fwsim"; exit 1; }
# shellcheck disable=SC2119
hmbq_boot
hmbq_fwsim_stop

e2e_check "guest scenario ran to the end" e2e_guest_ok
e2e_check "guest still up after the corruption" hmbq_nonempty alive
e2e_check "hmb-fwsim produced its count and wrote the truth" e2e_fwsim_finished count
e2e_check "the capture came back and decodes on the host" e2e_report corrupt.dat corrupt.txt
e2e_verify "corrupt page $corrupt: errors counted, invalid loss in place, rest delivered" \
	corrupt --truth "$HMBQ_SHARE/truth.json" --report "$HMBQ_SHARE/corrupt.txt" \
	--status "$HMBQ_SHARE/corrupt-status.txt"
e2e_check "hmbtrace-cmd stat of the capture agrees with the truth" e2e_cmd_stat corrupt.dat
e2e_check "no kernel WARNING/BUG/Oops" e2e_no_kernel_errors
hmbq_finish
