#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Run one QEMU scenario, NAME/{host.sh,guest.sh} in one of
#   mock/qemu/scenarios/   the harness's own: smoke, demo
#   tests/e2e/scenarios/   the end-to-end tests (tests/e2e/run-all.sh) and
#                          the measurements measure-rate, measure-latency
#
# Usage: run-scenario.sh NAME [--module KO | --no-module] [--fwsim BIN]
#                        [--out DIR] [--area-size N] [--area2-size N]
#                        [--timeout S] [--keep] [--quiet] [-- RUN-GUEST-ARGS...]
#
#   --module KO    module for the guest (default: the hmb_trace.ko built for
#                  the kernel the guest boots, HMBTRACE_KVER: kernel/hmb_trace/
#                  hmb_trace.ko when its vermagic says that kernel, else
#                  build/kernels/KVER/src/kernel/hmb_trace/hmb_trace.ko from
#                  mock/kernels/build-module.sh); --no-module boots without one
#   --fwsim BIN    hmb-fwsim (default $HMB_FWSIM, else the newest
#                  build*/mock/fwsim/hmb-fwsim)
#   --out DIR      run directory, shared with the guest as /mnt (default
#                  build/qemu-runs/NAME; emptied first)
#   --area-size N  size of the simulated HMB (default 4M; host.sh may change it)
#   --area2-size N size of the second simulated HMB, for scenarios with two
#                  SSDs (hmbq_fwsim2_start; default: --area-size)
#   --timeout S    guest timeout (default 180)
#   --keep         keep the area file in /dev/shm
#   --quiet        do not copy the guest console to stdout
#
# host.sh runs on the host with the environment described in scenario-lib.sh; it
# boots the guest (hmbq_boot), which runs guest.sh from /mnt. The exit status is
# host.sh's: 0 when every check passed.
set -euo pipefail
# shellcheck source=mock/qemu/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	awk 'NR >= 4 && !/^#/ { exit } NR >= 4 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
	exit "${1:-2}"
}

name=""
module=default
fwsim=${HMB_FWSIM:-}
out=""
area_size=4M
area2_size=""
timeout=180
keep=0
guest_args=()
while (($#)); do
	case "$1" in
	--module) module=${2:?}; shift 2 ;;
	--no-module) module=""; shift ;;
	--fwsim) fwsim=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--area-size) area_size=${2:?}; shift 2 ;;
	--area2-size) area2_size=${2:?}; shift 2 ;;
	--timeout) timeout=${2:?}; shift 2 ;;
	--keep) keep=1; shift ;;
	--quiet) guest_args+=(--quiet); shift ;;
	--) shift; guest_args+=("$@"); break ;;
	-h | --help) usage 0 ;;
	-*) hmbq_die "unknown option $1" ;;
	*) [[ -z "$name" ]] || usage; name=$1; shift ;;
	esac
done
[[ -n "$name" ]] || usage

scenario_dirs=("$hmbq_dir/scenarios" "$hmbq_repo/tests/e2e/scenarios")
scenario=""
for d in "${scenario_dirs[@]}"; do
	if [[ -f "$d/$name/host.sh" && -f "$d/$name/guest.sh" ]]; then
		scenario="$d/$name"
		break
	fi
done
[[ -n "$scenario" ]] ||
	hmbq_die "no scenario '$name' (NAME/host.sh and guest.sh) in ${scenario_dirs[*]#"$hmbq_repo/"}; have: $(for d in "${scenario_dirs[@]}"; do (cd "$d" && echo *); done | xargs)"

# The kernel the guest boots (HMBTRACE_KVER), resolved once for the run.
hmbq_kernel
if [[ "$module" == default ]]; then
	module=$(hmbq_module_for "$HMBQ_KVER")
fi
[[ -z "$module" || -f "$module" ]] || hmbq_die "module $module not found"
[[ -z "$module" ]] || module=$(realpath "$module")

if [[ -z "$fwsim" ]]; then
	# shellcheck disable=SC2012 # newest first; build paths have no odd names
	fwsim=$(ls -t "$hmbq_repo"/build*/mock/fwsim/hmb-fwsim 2>/dev/null | head -n1 || true)
fi
[[ -z "$fwsim" ]] || fwsim=$(realpath "$fwsim")

[[ -n "$out" ]] || out="$hmbq_repo/build/qemu-runs/$name"
rm -rf "$out"
mkdir -p "$out"
out=$(realpath "$out")

# A snapshot: the module may be rebuilt (or cleaned) while the scenario runs.
if [[ -n "$module" ]]; then
	cp "$module" "$out/hmb_trace.ko" || hmbq_die "cannot copy $module"
	hmbq_log "module: $module ($(date -r "$module" '+%F %T'))"
	module="$out/hmb_trace.ko"
fi

area="/dev/shm/hmbtrace-qemu-$name-$$.area"
area2="/dev/shm/hmbtrace-qemu-$name-$$-2.area"
mailbox="/dev/shm/hmbtrace-qemu-$name-$$.mailbox"
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	((keep)) || rm -f "$area" "$area2" "$mailbox"
}
trap cleanup EXIT

export HMBQ_NAME=$name HMBQ_SCENARIO=$scenario HMBQ_SHARE=$out HMBQ_AREA=$area
export HMBQ_MAILBOX_FILE=$mailbox
HMBQ_AREA_SIZE=$(hmbq_size_bytes "$area_size")
HMBQ_AREA2_SIZE=$(hmbq_size_bytes "${area2_size:-$area_size}")
export HMBQ_AREA_SIZE HMBQ_AREA2=$area2 HMBQ_AREA2_SIZE HMBQ_MODULE=$module
export HMBQ_FWSIM=$fwsim HMBQ_TIMEOUT=$timeout HMBQ_REPO=$hmbq_repo
export HMBQ_GUEST_ARGS="${guest_args[*]}" HMBQ_LIB="$hmbq_dir/scenario-lib.sh"

hmbq_log "scenario $name: run dir $out"
hmbq_log "hmb-fwsim: ${fwsim:-not built}"
[[ -n "$module" ]] || hmbq_log "module: none"
t0=$(hmbq_now)
rc=0
(cd "$scenario" && bash ./host.sh) || rc=$?
total=$(hmbq_elapsed "$t0")
timings=""
[[ -f "$out/timings.txt" ]] && timings=$(tr '\n' ' ' <"$out/timings.txt")
echo "scenario_total_s=$total" >>"$out/timings.txt"
hmbq_log "scenario $name: status $rc, whole scenario ${total}s; guest: $timings"
if ((keep)); then
	hmbq_log "area kept: $area"
	[[ -e "$area2" ]] && hmbq_log "second area kept: $area2"
fi
exit "$rc"
