#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# hostile: a buggy device. hmb-fwsim produces on 4 cores (two firmware
# resets) while hmb-mutate (mock/mutator) rewrites fields of the live area
# in phases, one boot, trace-cmd recording throughout (issue 8, item 6; the
# letters are the phases, in the order they run):
#   A  random bit flips in record payloads and headers (damage to records
#      only: every record must stay accounted, delivered + lost = produced)
#   E  (row 1) at each firmware reset, the old generation's final
#      prev_next_seq published + 2^32, then + 2^63
#   B  (rows 2, 5) core 1: a page header page_seq + ~2^50 (whole laps) with
#      a consistent first_seq; core 2: one bit of a page's producer_gen;
#      core 3: a closed page's CLOSED bit cleared
#   C  (row 3) meta producer_gen alternating G+1, G, ... for 1 s
#   D  (row 4) meta state alternating INIT, READY, same generation, 1 s;
#      then 2.5 s of production without damage
#   F  (row 6) after the producer stopped, the whole area all zeros, all
#      0xff, random (status read live, after a fresh insmod, and after the
#      good area is written back)
# Checks (tests/e2e/verify_hostile.py) on the capture and the status
# files: no duplicate (generation, core, seq); no single hmb_lost larger
# than a ring can hold; no core silent for 2 s while its producer advanced
# (phase B is followed by 3 s without meta-page damage); delivered + lost =
# produced exactly over phase A, charged as invalid; every record of every
# life delivered or reported lost; status resets <= real resets +
# mutations, status delivered = the capture; garbage areas are reported
# with a state other than detached / producer_init / attached (the names
# come from the capture's hmb_state format), and attached again once the
# good area is back. About 50 s with a consumer that copes.
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

rate=${E2E_HOSTILE_RATE:-2000}
count=${E2E_HOSTILE_COUNT:-29000} # 14.5 s: D ends 2.5 s before
mutate=$(hmbq_build_dir)/mock/mutator/hmb-mutate
# run-all.sh builds hmb-fwsim and the tools, not the mutator: build it here.
[[ -x "$mutate" ]] || ninja -C "$(hmbq_build_dir)" mock/mutator/hmb-mutate >/dev/null ||
	{ echo "FAIL: no $mutate (ninja -C BUILD mock/mutator/hmb-mutate)"; exit 1; }

sh=$HMBQ_SHARE
# The guest's answers come as much slower as its timeouts are scaled (the
# debug kernel: HMBTRACE_QEMU_TIMEOUT_SCALE=4, mock/qemu/run-guest.sh).
x=${HMBTRACE_QEMU_TIMEOUT_SCALE:-1}
steps=(
	"wait-file:$sh/ready:$((120 * x))" sleep:1
	mark:phase-A payload-flips:all:1:200 record-flips:all:1:200 mark:phase-A-end sleep:0.5
	mark:phase-E reset-prev-next:32:30 reset-prev-next:63:30 mark:phase-E-end sleep:0.5
	mark:phase-B page-seq-ahead:1:50 page-gen-bit:2:0 page-unclose:3 mark:phase-B-end sleep:3
	mark:phase-C gen-alternate:1:20 mark:phase-C-end sleep:0.5
	mark:phase-D state-flip:1:20 mark:phase-D-end
	"wait-file:$sh/row6-go:$((90 * x))" mark:phase-F save
)
for w in zero ff random; do
	steps+=("fill:$w" "touch:$sh/fill-$w" "wait-file:$sh/seen-$w:$((30 * x))"
		restore "touch:$sh/restored-$w" "wait-file:$sh/reattached-$w:$((30 * x))")
done
steps+=(mark:phase-F-end)

e2e_prepare
hmbq_fwsim_start --cores 4 --rate "$rate" --count "$count" \
	--reset-at $((rate * 4)) --reset-at $((rate * 11 / 2)) --seed 11 \
	--quiet --truth "$sh/truth.json" || { echo "FAIL: hmb-fwsim"; exit 1; }
"$mutate" --area "$HMBQ_AREA" --log "$sh/mutations.jsonl" --seed 11 "${steps[@]}" \
	>"$sh/mutator.log" 2>&1 &
mutator=$!
# shellcheck disable=SC2119 # no extra run-guest.sh arguments
hmbq_boot
hmbq_fwsim_stop
kill -TERM "$mutator" 2>/dev/null
wait "$mutator"
echo "hmb-mutate ended with status $?" >>"$sh/mutator.log"
e2e_check "guest scenario ran to the end" e2e_guest_ok
e2e_check "guest still up after the hostile device" hmbq_nonempty alive
e2e_check_produced
e2e_check_capture hostile
e2e_check "hostile device: no duplicates, bounded losses, no silent core, exact over record damage, garbage not 'detached'" \
	python3 "$E2E_DIR/verify_hostile.py" --truth "$sh/truth.json" \
	--report "$sh/hostile.txt" --mutations "$sh/mutations.jsonl" \
	--status "$sh/hostile-status.txt" --fill-status "$sh"
e2e_finish
