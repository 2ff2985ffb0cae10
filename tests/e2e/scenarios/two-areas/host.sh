#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# two-areas: two simulated SSDs in one guest, each an hmb-fwsim on its own
# area file and ivshmem device. SSD A: 4 cores, 1 GHz clock, one build;
# SSD B: 2 cores, 250 MHz, a 2 MiB area, resets mid-run into another
# build (--new-build-at-reset: every event renamed *_b2). Checks:
#   - binding (hmb_trace.ko binds only the ivshmem devices it is told to):
#     with no ivshmem= neither device is bound and both are refused with
#     the line saying how; ivshmem=FIRST binds only it; driver_override +
#     drivers_probe binds the second;
#   - each area, alone by its dev (verify_trace.py --dev): A every record
#     once, no loss, its dictionary; B both lives in order, delivered +
#     lost (reset) = produced, the reset and the new build's dictionary;
#     each against its own truth and status files;
#   - together (verify_two_areas.py): distinct indexes, each status with
#     its own geometry, clock and build; every hmb event carries one of
#     the two devs; trace-cmd report with plugin_hmb.so and hmbtrace-cmd
#     report print every record once with its own area's event name of
#     its generation; hmbtrace-cmd status (guest) and stat show both;
#   - hmbtrace-cmd stat per dev agrees with each truth.
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

cmd=$(hmbq_build_dir)/tools/hmbtrace-cmd/hmbtrace-cmd
[[ -x "$cmd" ]] || { echo "FAIL: no $cmd: build it (ninja -C BUILD tools/hmbtrace-cmd/hmbtrace-cmd)"; exit 1; }
HMBQ_EXTRAS=("$cmd:/usr/bin/hmbtrace-cmd")
HMBQ_AREA2_SIZE=$((2 * 1024 * 1024))
E2E_FWSIM2_ARGS=(--cores 2 --clock-hz 250000000 --rate 3000 --count 4500
	--reset-at 2000 --new-build-at-reset --seed 9)
e2e_boot --cores 4 --clock-hz 1000000000 --rate 2000 --count 3000 --seed 3

# area_status NR_CORES: the status file of the area with that many cores.
area_status() {
	grep -lx "nr_cores: $1" "$HMBQ_SHARE"/two-areas-status.[0-9]*.txt 2>/dev/null | head -n1
}

# shellcheck disable=SC2317 # called through e2e_check
check_binding() {
	local s=$HMBQ_SHARE first second rc=0
	IFS=, read -r first second <<<"$(sed -n 's/^ivshmem devices: //p' "$s/two-areas-devices.txt")"
	[[ -n "$first" && -n "$second" ]] || { echo "expected two ivshmem devices, saw: $(cat "$s/two-areas-devices.txt")"; return 1; }
	[[ ! -s "$s/two-areas-bound-none.txt" ]] ||
		{ echo "expected no area with no ivshmem=, saw: $(cat "$s/two-areas-bound-none.txt")"; rc=1; }
	local d
	for d in "$first" "$second"; do
		grep -q "$d: ivshmem device not bound.*ivshmem=$d.*driver_override" "$s/two-areas-refused.txt" ||
			{ echo "expected $d refused with how to bind it, saw: $(cat "$s/two-areas-refused.txt")"; rc=1; }
	done
	[[ "$(cat "$s/two-areas-bound-first.txt")" == "$first" && "$(cat "$s/two-areas-param.txt")" == "$first" ]] ||
		{ echo "expected only $first bound with ivshmem=$first, saw: $(xargs <"$s/two-areas-bound-first.txt"), parameter $(cat "$s/two-areas-param.txt")"; rc=1; }
	[[ "$(xargs <"$s/two-areas-bound-both.txt")" == "$first $second" ]] ||
		{ echo "expected $first $second bound after driver_override, saw: $(xargs <"$s/two-areas-bound-both.txt")"; rc=1; }
	((rc)) || echo "none bound by default, $first by ivshmem=, $second by driver_override"
	return "$rc"
}

# shellcheck disable=SC2317 # called through e2e_check
cmd_report() {
	"$cmd" report -i "$HMBQ_SHARE/two-areas.dat" >"$HMBQ_SHARE/two-areas-cmd.txt" &&
		"$cmd" stat --json -i "$HMBQ_SHARE/two-areas.dat" >"$HMBQ_SHARE/two-areas-stat.json"
}

e2e_check_produced
e2e_check "hmb_trace.ko binds only the ivshmem devices named by ivshmem= or driver_override" check_binding
e2e_check_capture two-areas
st_a=$(area_status 4)
st_b=$(area_status 2)
dev_a=$(sed -n 's/^index: //p' "$st_a" 2>/dev/null)
dev_b=$(sed -n 's/^index: //p' "$st_b" 2>/dev/null)
if [[ -z "$dev_a" || -z "$dev_b" ]]; then
	e2e_check "the status files of both areas came back" false
	e2e_finish
fi
r=$HMBQ_SHARE/two-areas.txt
e2e_verify "SSD A (dev $dev_a, 4 cores, 1 GHz): every record once, no loss, its dictionary" \
	record --dev "$dev_a" --truth "$HMBQ_SHARE/truth.json" --report "$r" --status "$st_a" \
	--dictionary "$HMBQ_SHARE/two-areas-dictionary.$dev_a.bin" \
	--stats "$HMBQ_SHARE/two-areas-ftrace-stats.txt" --stat-report "$HMBQ_SHARE/two-areas.stat"
e2e_verify "SSD B (dev $dev_b, 2 cores, 250 MHz): reset into a new build, both lives exact" \
	reset --dev "$dev_b" --truth "$HMBQ_SHARE/truth2.json" --report "$r" --status "$st_b"
e2e_check "trace-cmd report with plugin_hmb.so" hmbq_decoded_report two-areas.dat two-areas-decoded.txt
e2e_check "hmbtrace-cmd report and stat of the capture" cmd_report
e2e_check "two areas: own dev, own dictionary, own counters, both in hmbtrace-cmd status and stat" \
	python3 "$E2E_DIR/verify_two_areas.py" --report "$r" \
	--area "$HMBQ_SHARE/truth.json:$st_a" --area "$HMBQ_SHARE/truth2.json:$st_b" \
	--plugin "$HMBQ_SHARE/two-areas-decoded.txt" --cmd "$HMBQ_SHARE/two-areas-cmd.txt" \
	--cmd-status "$HMBQ_SHARE/two-areas-cmd-status.json" --stat "$HMBQ_SHARE/two-areas-stat.json"
e2e_check "hmbtrace-cmd stat, SSD A: records = produced, no loss" \
	python3 "$E2E_DIR/verify_stat.py" --stat "$HMBQ_SHARE/two-areas-stat.json" \
	--truth "$HMBQ_SHARE/truth.json" --dev "$dev_a" --no-loss
e2e_check "hmbtrace-cmd stat, SSD B: records + lost = produced" \
	python3 "$E2E_DIR/verify_stat.py" --stat "$HMBQ_SHARE/two-areas-stat.json" \
	--truth "$HMBQ_SHARE/truth2.json" --dev "$dev_b"
e2e_finish
