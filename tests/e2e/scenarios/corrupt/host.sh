#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# corrupt: hmb-fwsim --corrupt-page CORE:SEQ writes garbage into a page
# header. Checks: the status error counters count it; the corrupted core
# reports hmb_lost(invalid) whose range lies within the corrupted page, and
# status lost/invalid agrees; every other record of every core is delivered
# in order (delivered + lost = produced, exactly); other cores lose nothing;
# the guest stays up; no WARN/BUG/Oops.
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

rate=${E2E_CORRUPT_RATE:-2000}
count=${E2E_CORRUPT_COUNT:-8000}
corrupt=${E2E_CORRUPT_PAGE:-1:3000}
e2e_boot --cores 4 --rate "$rate" --count "$count" --corrupt-page "$corrupt" --seed 9

e2e_check "guest still up after the corruption" hmbq_nonempty alive
e2e_check_produced
e2e_check_capture corrupt
e2e_verify "corrupt page $corrupt: errors counted, invalid loss in place, rest delivered" \
	corrupt --truth "$HMBQ_SHARE/truth.json" --report "$HMBQ_SHARE/corrupt.txt" \
	--status "$HMBQ_SHARE/corrupt-status.txt"
e2e_check_stat corrupt
e2e_finish
