#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# overrun: a 2-page ring per core, a high rate and slow polling
# (poll_interval_us=100000): the producer overwrites pages the module has not
# read. Checks, per core, against the truth: delivered + lost = produced
# exactly, from the capture's hmb_record/hmb_lost events and from the status
# counters (which must agree); each hmb_lost sits at its gap (at_seq = the
# seq of the core's next hmb_record, count = the gap); loss did happen; the
# ftrace buffers themselves overran nothing (else the check means nothing).
set -uo pipefail
# shellcheck source=mock/qemu/scenario-lib.sh
source "$HMBQ_LIB"
# shellcheck source=tests/e2e/e2e-lib.sh
# shellcheck disable=SC2153 # HMBQ_REPO comes from run-scenario.sh
source "$HMBQ_REPO/tests/e2e/e2e-lib.sh"

rate=${E2E_OVERRUN_RATE:-5000}
count=${E2E_OVERRUN_COUNT:-15000}
e2e_prepare
HMBQ_MODULE_PARAMS="poll_interval_us=100000"
hmbq_fwsim_start --cores 4 --pages-per-core 2 --rate "$rate" --count "$count" \
	--seed 11 --quiet --truth "$HMBQ_SHARE/truth.json" || { echo "FAIL: hmb-fwsim"; exit 1; }
# shellcheck disable=SC2119
hmbq_boot
hmbq_fwsim_stop

e2e_check "guest scenario ran to the end" e2e_guest_ok
e2e_check "hmb-fwsim produced its count and wrote the truth" e2e_fwsim_finished count
e2e_check "the capture came back and decodes on the host" e2e_report overrun.dat overrun.txt
e2e_verify "overrun: 2-page rings, $rate/s, 100 ms polls: every record delivered or lost in place" \
	overrun --truth "$HMBQ_SHARE/truth.json" --report "$HMBQ_SHARE/overrun.txt" \
	--status "$HMBQ_SHARE/overrun-status.txt" \
	--stats "$HMBQ_SHARE/overrun-ftrace-stats.txt" --stat-report "$HMBQ_SHARE/overrun.stat"
e2e_check "hmbtrace-cmd stat of the capture agrees with the truth" e2e_cmd_stat overrun.dat
e2e_check "no kernel WARNING/BUG/Oops" e2e_no_kernel_errors
hmbq_finish
