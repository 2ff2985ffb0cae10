# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Host-side helpers of the measurements (tests/e2e/scenarios/measure-*),
# sourced by their host.sh after e2e-lib.sh:
#
#   # shellcheck source=tests/e2e/measure-lib.sh
#   source "$E2E_DIR/measure-lib.sh"
#
# measure_bench_module  copy hmb_trace_bench.ko, the bare-tracepoint
#                       benchmark (kernel/hmb_trace/bench/), into the share:
#                       the guest loads /mnt/hmb_trace_bench.ko after
#                       hmb_trace.ko. Taken from $HMB_BENCH_MODULE, else from
#                       the repository's kernel/hmb_trace/bench/; it must be
#                       built for the same kernel as the module under test
#                       (build both with one `make -C kernel/hmb_trace`).
#                       Without it the guest falls back to a bench_record
#                       file of hmb_trace.ko itself (modules before the split).

measure_bench_module() {
	local ko=${HMB_BENCH_MODULE:-$HMBQ_REPO/kernel/hmb_trace/bench/hmb_trace_bench.ko}
	local want got
	rm -f "$HMBQ_SHARE/hmb_trace_bench.ko"
	if [[ ! -f "$ko" ]]; then
		echo "note: no $ko (set HMB_BENCH_MODULE): only a module with its own bench_record can be measured"
		return 0
	fi
	if [[ -n "$HMBQ_MODULE" ]]; then
		want=$(modinfo -F vermagic "$HMBQ_MODULE" 2>/dev/null)
		got=$(modinfo -F vermagic "$ko" 2>/dev/null)
		[[ "$want" == "$got" ]] ||
			{ echo "FAIL: $ko is built for '$got', the module for '$want'"; return 1; }
	fi
	cp "$ko" "$HMBQ_SHARE/hmb_trace_bench.ko"
	hmbq_log "benchmark module: $ko ($(date -r "$ko" '+%F %T'))"
}
