#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# End-to-end suite: builds hmb_trace.ko and hmb-fwsim, then runs every e2e
# test scenario (tests/e2e/scenarios/NAME/{host.sh,guest.sh}; not the
# measure-* measurements) in QEMU with the harness's run-scenario.sh
# (mock/qemu) and compares what came back from the guest with hmb-fwsim's
# truth (tests/e2e/verify_*.py).
#
# Usage: tests/e2e/run-all.sh [BUILD_DIR] [SCENARIO...]
#
#   BUILD_DIR  meson build directory for hmb-fwsim (default: build; set up
#              when missing). Runs go to BUILD_DIR/e2e/<scenario>/ (console,
#              guest log, capture, report, truth), the scenario's output to
#              BUILD_DIR/e2e/<scenario>.log.
#
# HMBTRACE_KVER=KERNEL runs them on another kernel of the matrix (trixie|6.12,
# sid|7.2, ...: mock/kernels/README.md): the module is built for it by
# mock/kernels/build-module.sh (W=1, in its release's chroot), the runs go to
# BUILD_DIR/e2e-KVER/. HMBTRACE_KERNEL_DIR=DIR (mock/qemu/lib.sh) boots a
# kernel built from source, e.g. the debug kernel (mock/debug-kernel/build.sh),
# with hmb_trace.ko (ivshmem backend alone) built against its tree.
#   SCENARIO   run only these (default: all of them, in the order below)
#
# Prints one "PASS|FAIL <scenario> (<seconds>s)" line per scenario (with the
# failed checks under a FAIL), then "N passed, M failed"; exits 1 if any
# failed, 2 if the build failed. Needs: the Debian kernel headers and image
# (scripts/install-deps.sh --kernel), qemu-system-x86, trace-cmd, python3.
set -uo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=${1:-build}
(($#)) && shift
all=(record overrun markers reset flight-reset corrupt rmmod disabled toggle cmd decoders hostile two-areas hotplug clock cmd-join isolated tracepoint freeze)
scenarios=("$@")
((${#scenarios[@]})) || scenarios=("${all[@]}")
cd "$repo" || exit 2
mkdir -p "$build" || exit 2
build=$(cd "$build" && pwd)
logs="$build/e2e"
# Another kernel of the matrix (HMBTRACE_KVER: mock/kernels/README.md): its
# own module build and run directories, build/e2e-KVER.
kernel_arg=${HMBTRACE_KVER:-${HMBTRACE_KERNEL_DIR:-}}
if [[ -n $kernel_arg ]]; then
	# shellcheck source=mock/qemu/lib.sh
	source mock/qemu/lib.sh
	hmbq_kernel
	logs="$build/e2e-$HMBQ_KVER"
fi
mkdir -p "$logs"

t_start=$(date +%s)
module="$repo/kernel/hmb_trace/hmb_trace.ko"
if [[ -n $kernel_arg && -f $HMBQ_KBUILD/include/linux/nvme-hmb-trace.h ]]; then
	# A tree with the nvme-pci series (the debug kernel): the ivshmem
	# backend alone, the guests here load no nvme.
	echo "== building hmb_trace.ko against $HMBQ_KBUILD"
	if ! module=$(hmbq_build_module "$logs/module" HMB_TRACE_NVME=n 2>"$logs/build-module.log"); then
		cat "$logs/build-module.log"
		echo "FAIL build: hmb_trace.ko against $HMBQ_KBUILD"
		echo "0 passed, ${#scenarios[@]} failed"
		exit 2
	fi
elif [[ -n $kernel_arg ]]; then
	echo "== building hmb_trace.ko for $HMBQ_KVER (mock/kernels/build-module.sh, W=1)"
	if ! module=$(mock/kernels/build-module.sh "$HMBQ_KVER" 2>"$logs/build-module.log"); then
		tail -n 20 "$logs/build-module.log"
		echo "FAIL build: mock/kernels/build-module.sh $HMBQ_KVER (log: $logs/build-module.log)"
		echo "0 passed, ${#scenarios[@]} failed"
		exit 2
	fi
else
	echo "== building hmb_trace.ko"
	if ! make -C kernel/hmb_trace >"$logs/build-module.log" 2>&1; then
		tail -n 20 "$logs/build-module.log"
		echo "FAIL build: make -C kernel/hmb_trace (log: $logs/build-module.log)"
		echo "0 passed, ${#scenarios[@]} failed"
		exit 2
	fi
fi
echo "== building hmb-fwsim in $build"
if { [[ -f "$build/build.ninja" ]] || meson setup "$build"; } >"$logs/build-fwsim.log" 2>&1 &&
	ninja -C "$build" mock/fwsim/hmb-fwsim plugins/traceevent/plugin_hmb.so \
		tools/hmbtrace-cmd/hmbtrace-cmd tools/hmb-read/hmb-read mock/mutator/hmb-mutate \
		>>"$logs/build-fwsim.log" 2>&1; then
	:
else
	tail -n 20 "$logs/build-fwsim.log"
	echo "FAIL build: hmb-fwsim (log: $logs/build-fwsim.log)"
	echo "0 passed, ${#scenarios[@]} failed"
	exit 2
fi
fwsim="$build/mock/fwsim/hmb-fwsim"

passed=0
failed=0
for s in "${scenarios[@]}"; do
	t0=$(date +%s)
	rc=0
	mock/qemu/run-scenario.sh "$s" --module "$module" --fwsim "$fwsim" \
		--out "$logs/$s" --quiet >"$logs/$s.log" 2>&1 || rc=$?
	dt=$(($(date +%s) - t0))
	if ((rc == 0)); then
		passed=$((passed + 1))
		echo "PASS $s (${dt}s)"
	else
		failed=$((failed + 1))
		echo "FAIL $s (${dt}s, status $rc; log: $logs/$s.log, run: $logs/$s/)"
		grep -E '^(FAIL|    FAIL|    expected|    info)' "$logs/$s.log" | head -n 15 | sed 's/^/    /'
	fi
done
echo "(total $(($(date +%s) - t_start))s)"
echo "$passed passed, $failed failed"
((failed == 0))
