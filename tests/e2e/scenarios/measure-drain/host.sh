#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# measure-drain (a measurement, not a test; not in run-all.sh): what the
# module costs per record when it republishes a backlog, next to the bare
# hmb_record tracepoint in the same boot (issue 9: ratio <= 1.25x).
#
# E2E_DRAIN_RUNS boots (default 3), each with a fresh area: before the boot
# hmb-fwsim fills it flat out with no reader (E2E_DRAIN_CORES cores x
# E2E_DRAIN_COUNT records, default 4 x 80000, in a 16 MiB area that holds
# ~172k records per core: nothing is overwritten) and ends; measure.py area
# counts the records and their mean payload length. In the guest (guest.sh)
# hmb_trace_bench.ko emits as many bare tracepoint events of that length on
# CPU 0 into another instance, twice; enabling the hmb events then starts
# the drain into a buffer large enough for all of it; then the benchmark
# twice more. The capture comes back as drain.N.dat. measure.py drain
# prints per run: ns per record first to last (per guest CPU, over the CPUs
# that drained), drain-work ns per record (workqueue_execute_start/end of
# hmb_trace's work), the tracepoint's ns per call (median of the four), and
# the ratio.
#
# A boot per run rather than three drains in one boot: the area is full
# before the module sees it, whatever the module does at load (a module
# that drains from insmod is measured too, and says so in the table).
#
# One guest CPU by default (E2E_DRAIN_SMP): the drain and the benchmark then
# run on the same vCPU under the same conditions. With two, both vCPUs drain
# at once while the benchmark runs on one; on a 2-CPU host that others use,
# the two vCPU threads compete for the host and the drain looks slower than
# it is (measured: the benchmark alone on CPU 0 took 1.6-2x longer while
# CPU 1 spun; the smp=2 ratio came out 1.6-2.6x against 1.2-1.3x with one).
# The host's load average after each boot is printed with the run.
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"
# shellcheck source=tests/e2e/measure-lib.sh
source "$E2E_DIR/measure-lib.sh"

runs=${E2E_DRAIN_RUNS:-3}
cores=${E2E_DRAIN_CORES:-4}
count=${E2E_DRAIN_COUNT:-80000}
smp=${E2E_DRAIN_SMP:-1}
HMBQ_AREA_SIZE=$((16 << 20))
e2e_prepare
hmbq_have_fwsim || { echo "FAIL: hmb-fwsim not built"; exit 1; }
measure_bench_module || exit 1
for ko in "$HMBQ_MODULE" "$HMBQ_SHARE/hmb_trace_bench.ko"; do
	[[ -f "$ko" ]] && echo "${ko##*/}: sha256 $(sha256sum <"$ko" | cut -c1-16)"
done

for ((i = 0; i < runs; i++)); do
	echo "== run $i: fill $cores x $count records, boot, drain"
	rm -f "$HMBQ_AREA"
	"$HMBQ_FWSIM" --area "$HMBQ_AREA" --size "$HMBQ_AREA_SIZE" --cores "$cores" \
		--rate 0 --count "$count" --seed "$((i + 1))" --quiet \
		--truth "$HMBQ_SHARE/truth.$i.json" >>"$HMBQ_SHARE/fwsim.log" 2>&1 ||
		{ echo "FAIL: hmb-fwsim (fwsim.log)"; exit 1; }
	area=$(python3 "$E2E_DIR/measure.py" area "$HMBQ_AREA") ||
		{ echo "FAIL: $area"; exit 1; }
	records=${area#records=}
	records=${records%% *}
	len=$(printf '%.0f' "${area#*mean_len=}")
	# buffer_size_kb of instance hmb (per CPU: its whole cores of the drain)
	# and of instance bench (CPU 0: RECORDS events); ~60 bytes an event,
	# 25% to spare.
	echo "$i $records $len $((records * 60 * 5 / 4 / 1024))" >"$HMBQ_SHARE/drain-params"
	echo "   $area: guest drains $records records, benchmark $records calls of $len bytes"
	hmbq_boot --smp "$smp"
	cp /proc/loadavg "$HMBQ_SHARE/host-load.$i.txt"
	e2e_check "run $i: guest scenario ran to the end" e2e_guest_ok
	e2e_check "run $i: no kernel WARNING/BUG/Oops" e2e_no_kernel_errors
	for f in console.log guest.log dmesg.txt; do
		[[ -f "$HMBQ_SHARE/$f" ]] && mv "$HMBQ_SHARE/$f" "$HMBQ_SHARE/${f%.*}.$i.${f##*.}"
	done
done

e2e_check "measurements" python3 "$E2E_DIR/measure.py" drain "$HMBQ_SHARE"
hmbq_finish
