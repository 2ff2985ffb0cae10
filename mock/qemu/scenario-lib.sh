# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
# shellcheck disable=SC2034 # HMBQ_* results are read by host.sh
#
# Functions for a scenario's host.sh (sourced: `source "$HMBQ_LIB"`). run-scenario.sh
# sets up the environment:
#
#   HMBQ_NAME        scenario name
#   HMBQ_SCENARIO    the scenario's directory (guest.sh, host.sh)
#   HMBQ_SHARE       the run directory; the guest sees it as /mnt
#   HMBQ_AREA        the simulated HMB file (in /dev/shm), HMBQ_AREA_SIZE its size
#   HMBQ_AREA2       the second simulated HMB's file, HMBQ_AREA2_SIZE its size:
#                    the guest gets it (a second ivshmem-plain device) only
#                    when host.sh starts a second hmb-fwsim (hmbq_fwsim2_start)
#   HMBQ_MAILBOX_FILE where hmbq_mailbox puts the control channel's mailbox
#   HMBQ_MODULE      hmb_trace.ko to put in the guest as /hmb_trace.ko ("" = none)
#   HMBQ_FWSIM       the hmb-fwsim binary ("" when not built)
#   HMBQ_TIMEOUT     guest timeout in seconds
#   HMBQ_GUEST_ARGS  more run-guest.sh arguments (array-like string)
#   HMBQ_REPO        the repository root
#
# A host.sh may set, before hmbq_boot: HMBQ_AREA_SIZE, HMBQ_AREA2_SIZE,
# HMBQ_EXTRAS (array of build-initramfs.sh --extra arguments),
# HMBQ_MODULE_PARAMS (insmod arguments; the guest reads them from
# /mnt/module-params). hmbq_boot puts guest-hmb.sh in the share: a guest.sh
# loads the module with `insmod /hmb_trace.ko $(hmb_ivshmem_param) ...`.

# shellcheck source=mock/qemu/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

HMBQ_FAILURES=0
HMBQ_FWSIM_PID=""
HMBQ_FWSIM_STATUS=""
HMBQ_FWSIM2_PID=""
HMBQ_FWSIM2_STATUS=""
HMBQ_GUEST_STATUS=""
HMBQ_EXTRAS=()
HMBQ_MAILBOX=""
HMBQ_NVME_DISK=""
HMBQ_NVME_TRACE=""

hmbq_scenario_cleanup() {
	local pid
	for pid in "$HMBQ_FWSIM_PID" "$HMBQ_FWSIM2_PID"; do
		[[ -n "$pid" ]] || continue
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	HMBQ_FWSIM_PID=""
	HMBQ_FWSIM2_PID=""
}
trap hmbq_scenario_cleanup EXIT

# hmbq_have_fwsim: true when hmb-fwsim is built.
hmbq_have_fwsim() {
	[[ -n "${HMBQ_FWSIM:-}" && -x "$HMBQ_FWSIM" ]]
}

# hmbq_fwsim_start ARGS...: start hmb-fwsim in the background on the area, waiting
# for the guest to create /mnt/ready before it produces. Output: fwsim.log.
hmbq_fwsim_start() {
	hmbq_have_fwsim || { hmbq_log "hmb-fwsim is not built"; return 1; }
	rm -f "$HMBQ_SHARE/ready"
	hmbq_fwsim_launch "$HMBQ_AREA" "$HMBQ_AREA_SIZE" fwsim.log "$@"
	HMBQ_FWSIM_PID=$!
	hmbq_log "hmb-fwsim started (pid $HMBQ_FWSIM_PID)"
}

# hmbq_fwsim2_start ARGS...: a second simulated SSD: hmb-fwsim on the second
# area (HMBQ_AREA2), waiting for the same /mnt/ready; hmbq_boot then gives
# the guest a second ivshmem-plain device. Output: fwsim2.log. Give it its
# own --truth file.
hmbq_fwsim2_start() {
	hmbq_have_fwsim || { hmbq_log "hmb-fwsim is not built"; return 1; }
	hmbq_fwsim_launch "$HMBQ_AREA2" "$HMBQ_AREA2_SIZE" fwsim2.log "$@"
	HMBQ_FWSIM2_PID=$!
	hmbq_log "second hmb-fwsim started (pid $HMBQ_FWSIM2_PID)"
}

# hmbq_mailbox: give the first area a control channel. Creates the mailbox
# file (HMB_CTRL_MAILBOX_SIZE, 4 KiB), sets HMBQ_MAILBOX to it; pass
# "--mailbox $HMBQ_MAILBOX" to hmbq_fwsim_start. hmbq_boot gives the guest
# a 4 KiB ivshmem-plain device for it (after the areas), which
# hmb_ivshmem_param (guest-hmb.sh) pairs with the first area.
hmbq_mailbox() {
	HMBQ_MAILBOX=$HMBQ_MAILBOX_FILE
	rm -f "$HMBQ_MAILBOX"
	truncate -s 4096 "$HMBQ_MAILBOX"
}

# hmbq_nvme: give the guest an emulated NVMe disk (HMBQ_SHARE/nvme.img,
# sparse) whose commands QEMU logs to HMBQ_NVME_TRACE (HMBQ_SHARE/qemu-nvme.log,
# created empty here); pass "--follow-qemu-nvme $HMBQ_NVME_TRACE" to
# hmbq_fwsim_start so the simulated firmware serves those very commands.
# The guest sees /dev/nvme0n1 (its init loads the nvme driver).
hmbq_nvme() {
	HMBQ_NVME_DISK=$HMBQ_SHARE/nvme.img
	HMBQ_NVME_TRACE=$HMBQ_SHARE/qemu-nvme.log
	rm -f "$HMBQ_NVME_DISK"
	truncate -s 64M "$HMBQ_NVME_DISK"
	: >"$HMBQ_NVME_TRACE"
}

# hmbq_fwsim_launch AREA SIZE LOG ARGS...: hmb-fwsim in the background ($!).
hmbq_fwsim_launch() {
	local area=$1 size=$2 log=$HMBQ_SHARE/$3
	shift 3
	echo "+ hmb-fwsim --area $area --size $size --wait-for $HMBQ_SHARE/ready $*" >"$log"
	"$HMBQ_FWSIM" --area "$area" --size "$size" \
		--wait-for "$HMBQ_SHARE/ready" "$@" >>"$log" 2>&1 &
}

# hmbq_fwsim_stop: stop hmb-fwsim (both, with a second one) if it still
# runs; its exit status goes to HMBQ_FWSIM_STATUS, the second's to
# HMBQ_FWSIM2_STATUS (143 = stopped here by SIGTERM).
hmbq_fwsim_stop() {
	local rc
	if [[ -n "$HMBQ_FWSIM_PID" ]]; then
		rc=0
		kill -TERM "$HMBQ_FWSIM_PID" 2>/dev/null || true
		wait "$HMBQ_FWSIM_PID" || rc=$?
		HMBQ_FWSIM_PID=""
		HMBQ_FWSIM_STATUS=$rc
		hmbq_log "hmb-fwsim ended with status $rc"
	fi
	if [[ -n "$HMBQ_FWSIM2_PID" ]]; then
		rc=0
		kill -TERM "$HMBQ_FWSIM2_PID" 2>/dev/null || true
		wait "$HMBQ_FWSIM2_PID" || rc=$?
		HMBQ_FWSIM2_PID=""
		HMBQ_FWSIM2_STATUS=$rc
		hmbq_log "second hmb-fwsim ended with status $rc"
	fi
}

# hmbq_boot [run-guest.sh ARGS...]: build the initramfs, boot the guest, run
# guest.sh. Sets HMBQ_GUEST_STATUS; returns it.
hmbq_boot() {
	local initrd="$HMBQ_SHARE/initramfs.cpio.gz" args=() e
	[[ -n "$HMBQ_MODULE" ]] && args+=(--module "$HMBQ_MODULE")
	for e in "${HMBQ_EXTRAS[@]}"; do
		args+=(--extra "$e")
	done
	if ! "$hmbq_dir/build-initramfs.sh" "$initrd" "${args[@]}"; then
		hmbq_log "error: cannot build the initramfs; the guest did not run"
		HMBQ_GUEST_STATUS=2
		return 2
	fi
	cp "$HMBQ_SCENARIO/guest.sh" "$HMBQ_SHARE/scenario.sh"
	cp "$hmbq_dir/guest-hmb.sh" "$HMBQ_SHARE/guest-hmb.sh"
	printf '%s\n' "${HMBQ_MODULE_PARAMS:-}" >"$HMBQ_SHARE/module-params"
	args=(--area "$HMBQ_AREA" --area-size "$HMBQ_AREA_SIZE")
	[[ -n "$HMBQ_FWSIM2_PID" || -n "$HMBQ_FWSIM2_STATUS" ]] &&
		args+=(--area "$HMBQ_AREA2" --area-size "$HMBQ_AREA2_SIZE")
	[[ -n "$HMBQ_MAILBOX" ]] && args+=(--area "$HMBQ_MAILBOX" --area-size 4096)
	[[ -n "$HMBQ_NVME_DISK" ]] && args+=(--nvme "$HMBQ_NVME_DISK" --nvme-trace "$HMBQ_NVME_TRACE")
	HMBQ_GUEST_STATUS=0
	# shellcheck disable=SC2086 # HMBQ_GUEST_ARGS is a word list on purpose
	"$hmbq_dir/run-guest.sh" --share "$HMBQ_SHARE" --initrd "$initrd" "${args[@]}" \
		--timeout "$HMBQ_TIMEOUT" ${HMBQ_GUEST_ARGS:-} "$@" || HMBQ_GUEST_STATUS=$?
	hmbq_log "guest status $HMBQ_GUEST_STATUS"
	return "$HMBQ_GUEST_STATUS"
}

# hmbq_check DESCRIPTION COMMAND...: run a check, print PASS/FAIL, count failures.
hmbq_check() {
	local desc=$1
	shift
	if "$@" >/dev/null 2>&1; then
		echo "PASS: $desc"
	else
		echo "FAIL: $desc"
		HMBQ_FAILURES=$((HMBQ_FAILURES + 1))
	fi
}

# hmbq_skip DESCRIPTION: a check that could not run here.
hmbq_skip() {
	echo "SKIP: $1"
}

# hmbq_nonempty FILE: FILE (relative to the share) exists and is not empty.
hmbq_nonempty() {
	[[ -s "$HMBQ_SHARE/$1" ]]
}

# hmbq_grep PATTERN FILE: extended regex PATTERN occurs in FILE (share-relative).
hmbq_grep() {
	grep -Eq -- "$1" "$HMBQ_SHARE/$2"
}

# hmbq_no_kernel_errors: the guest console and dmesg.txt show no kernel
# report (hmbq_kernel_report_re, lib.sh: WARNING, BUG, Oops, panic, KASAN,
# UBSAN, lockdep, ODEBUG, the workqueue and hung-task watchdogs).
hmbq_no_kernel_errors() {
	! grep -Eq "$hmbq_kernel_report_re" "$HMBQ_SHARE/console.log" "$HMBQ_SHARE/dmesg.txt" 2>/dev/null
}

# hmbq_build_dir: the meson build directory that holds HMBQ_FWSIM.
hmbq_build_dir() {
	echo "${HMBQ_FWSIM%/mock/fwsim/hmb-fwsim}"
}

# hmbq_decoded_report DAT TXT: host `trace-cmd report` of the guest's capture
# $HMBQ_SHARE/DAT with plugin_hmb.so (from the meson build that holds
# HMBQ_FWSIM, or HMB_PLUGIN_DIR) into $HMBQ_SHARE/TXT. HOME points to an
# empty directory so that a plugin installed in ~/.local cannot take over.
hmbq_decoded_report() {
	local dir=${HMB_PLUGIN_DIR:-$(hmbq_build_dir)/plugins/traceevent}
	local home rc=0
	if [[ ! -f "$dir/plugin_hmb.so" ]]; then
		echo "no plugin_hmb.so in $dir: build it (ninja -C BUILD plugins/traceevent/plugin_hmb.so)"
		return 1
	fi
	home=$(mktemp -d)
	TRACEEVENT_PLUGIN_DIR=$dir HOME=$home trace-cmd report -i "$HMBQ_SHARE/$1" \
		>"$HMBQ_SHARE/$2" 2>"$HMBQ_SHARE/$2.err" || rc=$?
	rmdir "$home"
	((rc == 0)) || { echo "trace-cmd report -i $1 (with plugin_hmb.so) failed:"; cat "$HMBQ_SHARE/$2.err"; }
	return "$rc"
}

# hmbq_finish: exit 0 when every check passed, 1 otherwise.
hmbq_finish() {
	if ((HMBQ_FAILURES)); then
		echo "$HMBQ_NAME: $HMBQ_FAILURES check(s) failed"
		exit 1
	fi
	echo "$HMBQ_NAME: all checks passed"
	exit 0
}
