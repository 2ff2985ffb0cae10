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
# nothing consumed while the gate was shut (verify_tracepoint.py);
# hmbtrace-cmd stat of the hmb instance's capture agrees with the truth.
# With E2E_TP_BPFTRACE=1, bpftrace counts the records per event id too,
# and its counts must equal stat's.
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

count=${E2E_TP_COUNT:-2000}
perf=$(command -v perf || true)
if [[ -z "$perf" ]]; then
	echo "FAIL: perf not found: install linux-perf (scripts/install-deps.sh --kernel)"
	exit 1
fi
HMBQ_EXTRAS=("$perf:/usr/bin/perf")
# Debian 12's bpftrace (0.17) as a fourth consumer: its libraries (LLVM,
# clang: about 200 MB) need a larger guest; off by default.
# E2E_TP_BPFTRACE=sid takes sid's bpftrace (0.27) with its own libraries
# and loader instead (mock/kernels/fetch-bpftrace.sh, ~270 MB, cached).
bpf_args=()
if [[ "${E2E_TP_BPFTRACE:-0}" == sid ]]; then
	bundle=$("$E2E_DIR/../../mock/kernels/fetch-bpftrace.sh" sid) ||
		{ echo "FAIL: mock/kernels/fetch-bpftrace.sh sid failed"; exit 1; }
	HMBQ_EXTRAS+=("$bundle:/opt/bpfsid" "$bundle/run:/usr/bin/bpftrace")
	HMBQ_GUEST_ARGS="--mem 3G"
	bpf_args=(--bpftrace "$HMBQ_SHARE/bpftrace.txt" --stat "$HMBQ_SHARE/hmb-stat.json")
elif [[ "${E2E_TP_BPFTRACE:-0}" == 1 ]]; then
	bpftrace=$(command -v bpftrace || true)
	[[ -n "$bpftrace" ]] || { echo "FAIL: E2E_TP_BPFTRACE=1 but no bpftrace (apt-get install bpftrace)"; exit 1; }
	HMBQ_EXTRAS+=("$bpftrace:/usr/bin/bpftrace")
	HMBQ_GUEST_ARGS="--mem 3G"
	bpf_args=(--bpftrace "$HMBQ_SHARE/bpftrace.txt" --stat "$HMBQ_SHARE/hmb-stat.json")
fi
echo $((4 * count)) >"$HMBQ_SHARE/tp-total"
e2e_boot --cores 4 --rate 2000 --count "$count" --seed 23

e2e_check_produced
e2e_check_capture top
e2e_check_capture hmb
for c in hmb top; do
	e2e_verify "$c instance: $count records x 4 cores, exact" record \
		--truth "$HMBQ_SHARE/truth.json" --report "$HMBQ_SHARE/$c.txt" \
		--status "$HMBQ_SHARE/hmb-status.txt" --dictionary "$HMBQ_SHARE/hmb-dictionary.bin"
done
e2e_check_stat hmb --no-loss
e2e_check "the hmb instance, the top level and perf saw the same events" \
	python3 "$E2E_DIR/verify_tracepoint.py" --truth "$HMBQ_SHARE/truth.json" \
	--hmb "$HMBQ_SHARE/hmb.txt" --top "$HMBQ_SHARE/top.txt" \
	--perf "$HMBQ_SHARE/perf.txt" --gate "$HMBQ_SHARE/gate.txt" "${bpf_args[@]}"
e2e_finish
