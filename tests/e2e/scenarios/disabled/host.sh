#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# disabled: the flight recorder. Nothing is consumed after insmod until
# the events are enabled; echo 0 > instances/hmb/events/hmb/enable while
# firmware records flow. Checks: nothing of system hmb is recorded and
# nothing consumed while disabled; after echo 1 every core continues with
# exactly the record after the last one delivered before (the firmware
# ring kept them; or an hmb_lost that covers exactly the gap, if the ring
# overflowed), consecutive, on the right CPU; the guest stays up; no
# WARN/BUG/Oops.
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

rate=${E2E_DISABLED_RATE:-1000}
e2e_boot --cores 4 --rate "$rate" --count 60000 --seed 17

e2e_check "guest alive after disable/enable" hmbq_nonempty alive
e2e_verify "disabled: nothing while disabled, records again after echo 1" disabled \
	--truth "$HMBQ_SHARE/truth.json" --disabled "$HMBQ_SHARE/disabled-trace.txt" \
	--enabled "$HMBQ_SHARE/enabled-trace.txt" --resume "$HMBQ_SHARE/resume.txt" \
	--first "$HMBQ_SHARE/first-trace.txt"
e2e_finish
