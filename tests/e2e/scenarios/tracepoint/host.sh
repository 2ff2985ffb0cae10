#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# tracepoint: the hmb events fire through their tracepoints, so every
# consumer gets them. The hmb instance, the top-level instance and
# perf stat -e 'hmb:*' (Debian's linux-perf, copied into the guest) listen
# at once while hmb-fwsim produces E2E_TP_COUNT records on each of 4 cores,
# all held in the firmware ring while the hmb instance's tracing_on is 0
# (the drain's gate), delivered once it is 1. Checks: each capture exact
# against the truth (verify_trace.py record, both instances); every hmb
# event counted the same by the three consumers, hmb_record as produced;
# nothing consumed while the gate was shut (verify_tracepoint.py).
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

count=${E2E_TP_COUNT:-2000}
perf=$(command -v perf || true)
if [[ -z "$perf" ]]; then
	echo "FAIL: perf not found: install linux-perf (scripts/install-deps.sh --kernel)"
	exit 1
fi
HMBQ_EXTRAS=("$perf:/usr/bin/perf")
echo $((4 * count)) >"$HMBQ_SHARE/tp-total"
e2e_boot --cores 4 --rate 2000 --count "$count" --seed 23

e2e_check_produced
e2e_check_capture all

# all.txt: the top level's lines, then the instance's, prefixed "hmb:".
# shellcheck disable=SC2317 # called through e2e_check
split_buffers() {
	grep '^hmb:' "$HMBQ_SHARE/all.txt" >"$HMBQ_SHARE/hmb.txt"
	grep -v '^hmb:' "$HMBQ_SHARE/all.txt" >"$HMBQ_SHARE/top.txt"
	cp "$HMBQ_SHARE/all.formats" "$HMBQ_SHARE/hmb.formats"
	cp "$HMBQ_SHARE/all.formats" "$HMBQ_SHARE/top.formats"
	wc -l "$HMBQ_SHARE/hmb.txt" "$HMBQ_SHARE/top.txt"
	[[ -s "$HMBQ_SHARE/hmb.txt" && -s "$HMBQ_SHARE/top.txt" ]]
}
e2e_check "the capture holds the hmb instance and the top level" split_buffers
for c in hmb top; do
	e2e_verify "$c instance: $count records x 4 cores, exact" record \
		--truth "$HMBQ_SHARE/truth.json" --report "$HMBQ_SHARE/$c.txt" \
		--status "$HMBQ_SHARE/hmb-status.txt" --dictionary "$HMBQ_SHARE/hmb-dictionary.bin"
done
e2e_check "the hmb instance, the top level and perf saw the same events" \
	python3 "$E2E_DIR/verify_tracepoint.py" --truth "$HMBQ_SHARE/truth.json" \
	--hmb "$HMBQ_SHARE/hmb.txt" --top "$HMBQ_SHARE/top.txt" \
	--perf "$HMBQ_SHARE/perf.txt" --gate "$HMBQ_SHARE/gate.txt"
e2e_finish
