#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# hotplug: guest CPU 1 goes offline and online 4 times while hmb-fwsim
# writes 4 cores at E2E_HOTPLUG_RATE records/s each and trace-cmd records.
# Checks: every record of every core exactly once or reported lost
# (delivered + lost = produced, in the capture and in the status files; no
# duplicate), nothing lost at this rate; the cores of CPU 1 are drained by
# CPU 0 while it is offline (status core_cpu) and by CPU 1 again after; no
# WARN/BUG/Oops.
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

rate=${E2E_HOTPLUG_RATE:-5000}
count=${E2E_HOTPLUG_COUNT:-30000}
e2e_boot --cores 4 --rate "$rate" --count "$count" --seed 23

e2e_check_produced
e2e_check_capture hotplug
e2e_verify "hotplug: every record exactly once across 4 offline/online cycles" hotplug \
	--truth "$HMBQ_SHARE/truth.json" --report "$HMBQ_SHARE/hotplug.txt" \
	--status "$HMBQ_SHARE/hotplug-status.txt" --moves "$HMBQ_SHARE/hotplug-cpus.txt"
e2e_check "guest alive after the CPU hotplug cycles" hmbq_nonempty alive
e2e_finish
