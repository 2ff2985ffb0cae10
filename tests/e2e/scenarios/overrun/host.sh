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
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

rate=${E2E_OVERRUN_RATE:-5000}
count=${E2E_OVERRUN_COUNT:-15000}
HMBQ_MODULE_PARAMS="poll_interval_us=100000"
e2e_boot --cores 4 --pages-per-core 2 --rate "$rate" --count "$count" --seed 11

e2e_check_produced
e2e_check_capture overrun
e2e_verify "overrun: 2-page rings, $rate/s, 100 ms polls: every record delivered or lost in place" \
	overrun --truth "$HMBQ_SHARE/truth.json" --report "$HMBQ_SHARE/overrun.txt" \
	--status "$HMBQ_SHARE/overrun-status.txt" \
	--stats "$HMBQ_SHARE/overrun-ftrace-stats.txt" --stat-report "$HMBQ_SHARE/overrun.stat"
e2e_check_stat overrun
e2e_finish
