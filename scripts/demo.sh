#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The demo: simulated SSD firmware writes its trace ring; first a user-space
# reader drains it (per-core delivered/lost, decoded records, checked against
# the simulator's ground truth); then hmb_trace.ko, in a QEMU guest booting
# Debian's kernel, republishes it as the ftrace instance "hmb" and trace-cmd
# records it. Installs and builds what is missing first.
# Usage: scripts/demo.sh [--host-only]
set -euo pipefail
cd "$(dirname "$0")/.."

host_only=0
[[ "${1:-}" == "--host-only" ]] && host_only=1
if ((host_only)); then
	scripts/install-deps.sh
else
	scripts/install-deps.sh --kernel
fi
# Only what the demo runs; the tests are built by scripts/test.sh.
scripts/build.sh demo

area=/dev/shm/hmbtrace-demo-$$
truth=$(mktemp --suffix=.json)
cleanup() { rm -f "$area" "$truth"; }
trap cleanup EXIT

echo
echo "==== 1. hmb-fwsim (4 firmware cores, 3 s) -> hmb-read (user space)"
build/mock/fwsim/hmb-fwsim --area "$area" --cores 4 --rate 50000 --duration 3 \
	--seed 42 --quiet --start-delay 0.5 --truth "$truth" &
fwsim=$!
build/tools/hmb-read/hmb-read --area "$area" --truth "$truth" --show 12 --quiet
wait "$fwsim"

((host_only)) && exit 0
echo
echo "==== 2. hmb-fwsim -> ivshmem HMB -> hmb_trace.ko (QEMU guest) -> trace-cmd record -B hmb -e hmb"
make -s -C kernel/hmb_trace
mock/qemu/run-scenario.sh demo --fwsim build/mock/fwsim/hmb-fwsim --quiet
