#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# disabled: echo 0 > instances/hmb/events/hmb/enable while firmware records
# flow. Checks: nothing of system hmb is recorded while disabled; after
# echo 1 records of every core arrive again, with consecutive sequence
# numbers starting after the records consumed while disabled, on the right
# CPU; the guest stays up; no WARN/BUG/Oops.
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

rate=${E2E_DISABLED_RATE:-1000}
e2e_boot --cores 4 --rate "$rate" --count 60000 --seed 17

e2e_check "guest alive after disable/enable" hmbq_nonempty alive
e2e_verify "disabled: nothing while disabled, records again after echo 1" disabled \
	--truth "$HMBQ_SHARE/truth.json" --disabled "$HMBQ_SHARE/disabled-trace.txt" \
	--enabled "$HMBQ_SHARE/enabled-trace.txt" --resume "$HMBQ_SHARE/resume.txt"
e2e_finish
