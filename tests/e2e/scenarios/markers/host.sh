#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# markers: lines written to instances/hmb/trace_marker while firmware records
# flow land in the same capture, between the right firmware records. For each
# marker the guest read the per-core delivered counters just before (B) and
# just after (A) the write. Checks: every marker is in the capture once, in
# order; for every core k the record seq B[k]-1 has a timestamp <= the
# marker's and the record seq A[k] one >= it (records counted before the
# write were emitted before it, records not counted after it came after it);
# most markers were written mid-stream, so the check is not vacuous; plus the
# exact delivery of the record scenario.
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

rate=${E2E_MARKERS_RATE:-2000}
count=${E2E_MARKERS_COUNT:-8000}
e2e_boot --cores 4 --rate "$rate" --count "$count" --seed 3

e2e_check_produced
e2e_check_capture markers
e2e_verify "markers: trace_marker lines between the right firmware records" markers \
	--truth "$HMBQ_SHARE/truth.json" --report "$HMBQ_SHARE/markers.txt" \
	--status "$HMBQ_SHARE/markers-status.txt" --markers "$HMBQ_SHARE/marker-log.txt"
e2e_finish
