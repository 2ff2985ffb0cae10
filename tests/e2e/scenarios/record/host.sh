#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# record: hmb-fwsim produces E2E_RECORD_COUNT records on each of 4 cores at
# E2E_RECORD_RATE records/s per core (a rate the TCG guest sustains with
# room to spare) while trace-cmd records the hmb instance in the guest.
# Checks against the truth: every record of every core exactly once, in
# sequence order, on CPU core mod 2; lost = 0 in the capture and in the
# status files; no ftrace-side overrun; hmb_state and a complete dictionary
# (hmb_dict chunks reassembling to total_len, equal to the status file);
# trace-cmd report with plugin_hmb.so decodes the records with it. Then
# rmmod during a second recording is refused (module in use) and that
# capture decodes (no UNKNOWN EVENT).
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

rate=${E2E_RECORD_RATE:-5000}
count=${E2E_RECORD_COUNT:-20000}
e2e_boot --cores 4 --rate "$rate" --count "$count" --seed 7

e2e_check_produced
e2e_check_capture record
e2e_verify "record: $count records x 4 cores at $rate/s, exact" record \
	--truth "$HMBQ_SHARE/truth.json" --report "$HMBQ_SHARE/record.txt" \
	--status "$HMBQ_SHARE/record-status.txt" --dictionary "$HMBQ_SHARE/record-dictionary.bin" \
	--stats "$HMBQ_SHARE/record-ftrace-stats.txt" --stat-report "$HMBQ_SHARE/record.stat"
e2e_check "trace-cmd report with plugin_hmb.so" hmbq_decoded_report record.dat record-decoded.txt
e2e_check "plugin_hmb.so decodes every record after the dictionary, as the payload says" \
	python3 "$E2E_DIR/verify_decoded.py" \
	--raw "$HMBQ_SHARE/record.txt" --decoded "$HMBQ_SHARE/record-decoded.txt"
e2e_check_stat record --no-loss

# The capture recorded across the refused rmmod decodes: every hmb event
# has its format (an unload during a recording made them UNKNOWN EVENT).
# shellcheck disable=SC2317 # called through e2e_check
pinned_capture_decodes() {
	e2e_report pinned.dat pinned.txt || return 1
	if grep -q "UNKNOWN EVENT" "$HMBQ_SHARE/pinned.txt"; then
		echo "UNKNOWN EVENT in the capture:"
		grep -m3 "UNKNOWN EVENT" "$HMBQ_SHARE/pinned.txt"
		return 1
	fi
	local n
	n=$(grep -c "hmb_state:" "$HMBQ_SHARE/pinned.txt")
	echo "$n hmb_state events decoded"
	((n > 0))
}
e2e_check "rmmod refused while trace-cmd records (module in use)" \
	hmbq_grep '^refused: ' pinned-rmmod.txt
e2e_check "the capture recorded across the refused rmmod decodes" pinned_capture_decodes
e2e_finish
