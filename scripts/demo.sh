#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The demo: simulated SSD firmware writes its trace ring; first a user-space
# reader drains it and checks it against the simulator's ground truth; then
# a QEMU guest booting Debian's kernel, with an emulated NVMe disk whose
# commands the simulator serves as the firmware, records with hmbtrace-cmd
# while dd reads and writes that disk: host NVMe commands joined to the
# firmware work that served them, trace_marker lines, converted firmware
# time with its bound, the per-opcode latency split, loss against the
# truth, and a Perfetto trace (mock/qemu/scenarios/demo). Each step says in
# one line what it shows; details go to the files it names. Installs and
# builds what is missing first.
# Usage: scripts/demo.sh [--host-only]
set -euo pipefail
cd "$(dirname "$0")/.."

host_only=0
[[ "${1:-}" == "--host-only" ]] && host_only=1
log=$(mktemp /tmp/hmbtrace-demo-setup.XXXXXX)
echo "==== installing what is missing and building what the demo runs (log: $log)"
deps=()
((host_only)) || deps=(--kernel)
# Only what the demo runs; the tests are built by scripts/test.sh.
if ! { scripts/install-deps.sh "${deps[@]}" && scripts/build.sh demo; } >"$log" 2>&1; then
	tail -n 20 "$log"
	echo "demo: setup failed (log: $log)"
	exit 1
fi

area=/dev/shm/hmbtrace-demo-$$
out=build/demo
mkdir -p "$out"
cleanup() { rm -f "$area"; }
trap cleanup EXIT

printf '\n==== hmb-fwsim (4 firmware cores, 2 s) -> hmb-read, in user space\n'
printf '     -> the reader accounts for every record the firmware wrote: delivered + lost == produced, per core\n'
build/mock/fwsim/hmb-fwsim --area "$area" --cores 4 --rate 20000 --duration 2 \
	--seed 42 --quiet --start-delay 0.5 --truth "$out/host-truth.json" &
fwsim=$!
build/tools/hmb-read/hmb-read --area "$area" --truth "$out/host-truth.json" --show 3 --quiet \
	>"$out/hmb-read.txt"
wait "$fwsim"
sed -n '/^producer generation/,$p' "$out/hmb-read.txt" | head -n 12
echo "     (the first records, decoded, and the count per event: $out/hmb-read.txt)"

((host_only)) && exit 0
printf '\n==== QEMU guest: Debian kernel, emulated NVMe disk, hmb_trace.ko; hmbtrace-cmd record while dd runs\n'
printf '     -> booting and recording; the guest console goes to %s\n' "$out/qemu/console.log"
make -s -C kernel/hmb_trace
mock/qemu/run-scenario.sh demo --fwsim build/mock/fwsim/hmb-fwsim --out "$out/qemu" --quiet
