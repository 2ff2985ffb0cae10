#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Boot the installed Debian kernel under QEMU (TCG) with the hmbtrace initramfs.
#
# Usage: run-guest.sh --share DIR [--area FILE --area-size BYTES]... [--initrd X]
#                     [--timeout S] [--mem 1G] [--smp 2] [--append ARGS]
#                     [--kernel IMAGE] [--qemu-arg ARG]... [--nvme DISK [--nvme-trace LOG]]
#                     [--quiet] [--shell]
#
#   --share DIR       host directory mounted in the guest at /mnt (9p tag host0);
#                     the guest runs DIR/scenario.sh and writes DIR/guest.log and
#                     DIR/exit-status; the serial console goes to DIR/console.log
#   --area FILE       the simulated HMB: an ivshmem-plain device (1af4:1110) whose
#                     BAR2 is FILE, shared with the host (share=on). Created
#                     zero-filled if missing; an existing FILE must have the size.
#   --area-size N     size of FILE, a power of two (bytes, or with K/M/G)
#                     Repeat --area for more devices (more simulated SSDs),
#                     each its own memory-backend-file + ivshmem-plain, in
#                     the order given (PCI slots in that order); the i-th
#                     --area-size goes with the i-th --area, or one for all
#   --initrd X        default: build one with build-initramfs.sh (with the
#                     hmb_trace.ko built for that kernel when there is one)
#   --timeout S       kill QEMU after S seconds (default 180, times
#                     HMBTRACE_QEMU_TIMEOUT_SCALE, default 1, for a slower
#                     kernel such as the debug kernel); exit status 124.
#                     Over 60 s, the guest dumps its blocked tasks and CPU
#                     backtraces on the console 30 s before (guest-init.sh)
#   --append ARGS     more kernel command line (e.g. hmb_trace.param=1)
#   --kernel IMAGE    default: the kernel HMBTRACE_KVER selects (the installed
#                     linux-image-*-amd64 by default; mock/kernels/README.md),
#                     booted as the ELF vmlinux extracted from its vmlinuz
#                     (set HMBTRACE_QEMU_BZIMAGE=1 to boot the bzImage itself)
#   --qemu-arg ARG    one more QEMU argument, appended as is (repeat it: e.g.
#                     --qemu-arg -device --qemu-arg nvme,serial=x,drive=d0)
#   --nvme DISK       give the guest an emulated NVMe disk (QEMU's -device nvme,
#                     4 I/O queue pairs and more) backed by the raw image DISK
#                     (created sparse, 64 MiB, if missing); the guest's init
#                     loads Debian's nvme modules when it sees the controller
#   --nvme-trace LOG  QEMU writes the disk's commands and completions to LOG
#                     (trace events pci_nvme_io_cmd, pci_nvme_admin_cmd,
#                     pci_nvme_read, pci_nvme_write,
#                     pci_nvme_enqueue_req_completion, host wall-clock stamps):
#                     what hmb-fwsim --follow-qemu-nvme follows
#   --quiet           do not copy the console to stdout while the guest runs
#   --shell           interactive: console on this terminal, a shell in the guest
#                     after the scenario (no timeout)
#
# Exit status: the scenario's, as the guest wrote it to DIR/exit-status; 124 on
# timeout; 125 when the guest ended without writing a status (panic? see
# DIR/console.log); 2 on a usage or setup error.
set -euo pipefail
# shellcheck source=mock/qemu/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

usage() {
	awk 'NR >= 4 && !/^#/ { exit } NR >= 4 { sub(/^# ?/, ""); print }' "${BASH_SOURCE[0]}"
	exit "${1:-2}"
}

share=""
areas=()
area_sizes=()
initrd=""
timeout=180
mem=1G
smp=2
append=""
kernel=""
extra_qemu_args=()
nvme_disk=""
nvme_trace=""
quiet=0
shell=0
while (($#)); do
	case "$1" in
	--share) share=${2:?}; shift 2 ;;
	--area) areas+=("${2:?}"); shift 2 ;;
	--area-size) area_sizes+=("${2:?}"); shift 2 ;;
	--initrd) initrd=${2:?}; shift 2 ;;
	--timeout) timeout=${2:?}; shift 2 ;;
	--mem) mem=${2:?}; shift 2 ;;
	--smp) smp=${2:?}; shift 2 ;;
	--append) append="$append ${2:?}"; shift 2 ;;
	--kernel) kernel=${2:?}; shift 2 ;;
	--qemu-arg) extra_qemu_args+=("${2?--qemu-arg needs a value}"); shift 2 ;;
	--nvme) nvme_disk=${2:?}; shift 2 ;;
	--nvme-trace) nvme_trace=${2:?}; shift 2 ;;
	--quiet) quiet=1; shift ;;
	--shell) shell=1; shift ;;
	-h | --help) usage 0 ;;
	*) hmbq_die "unknown argument '$1' (see --help)" ;;
	esac
done

[[ -n "$share" ]] || hmbq_die "--share DIR is required"
[[ -d "$share" ]] || hmbq_die "share directory $share does not exist"
share=$(cd "$share" && pwd)
[[ "$timeout" =~ ^[0-9]+$ ]] || hmbq_die "--timeout wants whole seconds"
scale=${HMBTRACE_QEMU_TIMEOUT_SCALE:-1}
[[ "$scale" =~ ^[1-9][0-9]*$ ]] || hmbq_die "HMBTRACE_QEMU_TIMEOUT_SCALE wants a whole number"
timeout=$((timeout * scale))
qemu=${HMBTRACE_QEMU:-qemu-system-x86_64}
hmbq_need "$qemu" qemu-system-x86

hmbq_kernel
kver=$HMBQ_KVER
if [[ -z "$kernel" ]]; then
	kernel=$HMBQ_KIMAGE
	# The bzImage decompresses itself in ~6 s under TCG; boot the ELF vmlinux
	# through its PVH entry instead, extracted once into the cache.
	if [[ -z "${HMBTRACE_QEMU_BZIMAGE:-}" ]] && command -v python3 >/dev/null; then
		vmlinux="$(hmbq_cache_dir)/vmlinux-$kver-$(stat -Lc %s-%Y "$kernel")"
		if [[ ! -s "$vmlinux" ]]; then
			mkdir -p "$(hmbq_cache_dir)"
			rm -f "$(hmbq_cache_dir)/vmlinux-$kver-"*
			"$hmbq_dir/extract-vmlinux.py" "$kernel" "$vmlinux" ||
				hmbq_log "booting the bzImage (slower) instead"
		fi
		[[ -s "$vmlinux" ]] && kernel=$vmlinux
	fi
fi
[[ -r "$kernel" ]] || hmbq_die "kernel image $kernel not readable"

# One memory-backend-file + ivshmem-plain per --area: ids hmb, hmb1, hmb2...
area_args=()
((${#areas[@]} || !${#area_sizes[@]})) || hmbq_die "--area-size needs --area"
((${#area_sizes[@]} == ${#areas[@]} || ${#area_sizes[@]} == 1 || !${#areas[@]})) ||
	hmbq_die "give one --area-size, or one per --area (${#areas[@]} areas, ${#area_sizes[@]} sizes)"
for i in "${!areas[@]}"; do
	area=${areas[$i]}
	area_size=${area_sizes[$i]:-${area_sizes[0]:-}}
	[[ -n "$area_size" ]] || hmbq_die "--area needs --area-size"
	area_size=$(hmbq_size_bytes "$area_size")
	hmbq_is_pow2 "$area_size" ||
		hmbq_die "--area-size $area_size is not a power of two (QEMU's ivshmem aborts otherwise)"
	[[ "$area" != *,* ]] || hmbq_die "--area path must not contain a comma (QEMU option syntax)"
	if [[ ! -e "$area" ]]; then
		truncate -s "$area_size" "$area"
	fi
	actual=$(stat -Lc %s "$area")
	((actual == area_size)) ||
		hmbq_die "area $area has $actual bytes, --area-size says $area_size"
	id=hmb
	((i)) && id=hmb$i
	# shellcheck disable=SC2054 # commas belong to QEMU's option syntax
	area_args+=(-object "memory-backend-file,id=$id,share=on,mem-path=$area,size=$area_size"
		-device "ivshmem-plain,memdev=$id")
done

# The emulated NVMe disk, and the log of its commands for hmb-fwsim.
nvme_args=()
[[ -z "$nvme_trace" || -n "$nvme_disk" ]] || hmbq_die "--nvme-trace needs --nvme DISK"
if [[ -n "$nvme_disk" ]]; then
	[[ "$nvme_disk$nvme_trace" != *,* ]] || hmbq_die "--nvme/--nvme-trace paths must not contain a comma"
	[[ -e "$nvme_disk" ]] || truncate -s 64M "$nvme_disk"
	# shellcheck disable=SC2054 # commas belong to QEMU's option syntax
	nvme_args=(-drive "file=$nvme_disk,if=none,id=nvme0,format=raw,cache=unsafe"
		-device "nvme,serial=hmbtrace0,drive=nvme0,max_ioqpairs=4")
	if [[ -n "$nvme_trace" ]]; then
		nvme_args+=(-trace enable=pci_nvme_io_cmd -trace enable=pci_nvme_admin_cmd
			-trace enable=pci_nvme_read -trace enable=pci_nvme_write
			-trace enable=pci_nvme_enqueue_req_completion
			-D "$nvme_trace" -msg timestamp=on)
	fi
fi

if [[ -z "$initrd" ]]; then
	initrd="$(hmbq_cache_dir)/initramfs-default-$kver.cpio.gz"
	ko=$(hmbq_module_for "$kver")
	args=()
	[[ -n "$ko" ]] && args=(--module "$ko")
	"$hmbq_dir/build-initramfs.sh" "$initrd" "${args[@]}"
fi
[[ -r "$initrd" ]] || hmbq_die "initrd $initrd not readable"

# 9p: -virtfs where built in, else the long form.
qemu_help=$("$qemu" -help 2>/dev/null || true)
if [[ "$qemu_help" == *$'\n-virtfs '* ]]; then
	share_args=(-virtfs "local,path=$share,mount_tag=host0,security_model=none,id=host0")
else
	# shellcheck disable=SC2054 # commas belong to QEMU's option syntax
	share_args=(-fsdev "local,id=host0,path=$share,security_model=none"
		-device virtio-9p-pci,fsdev=host0,mount_tag=host0)
fi

# The guest dumps its blocked tasks and CPU backtraces to the console a little
# before the timeout (guest-init.sh): a hang leaves its stacks in console.log.
watchdog=0
((timeout > 60)) && watchdog=$((timeout - 30))
# no_timer_check: the kernel checks at boot that the IO-APIC delivers timer
# interrupts within a short busy-wait; under TCG on a loaded host they come
# late and the guest panics ("IO-APIC + timer doesn't work!"), seen now and
# then when the test command runs beside other builds. Virtual machines
# commonly skip the check; the timer itself works.
cmdline="console=ttyS0 panic=-1 quiet no_timer_check hmbtrace.watchdog=$watchdog$append"
((shell)) && cmdline="$cmdline hmbtrace.shell=1"

console=$share/console.log
rm -f "$share/exit-status" "$share/guest.log" "$console" "$share/timings.txt"

# -nodefaults: no NIC (no iPXE ROM), no VGA; the serial port is the console.
# TCG: this host has no usable KVM (-enable-kvm hangs). HMBTRACE_QEMU_ACCEL=kvm
# for machines that have it.
# One TCG thread for all vCPUs (thread=single), not one each: with QEMU 7.2's
# multi-threaded TCG the guest livelocks now and then while the kernel patches
# its own code (text_poke_bp: each enable or disable of a trace event flips
# static keys, e.g. sched_switch's for the cmdline record): both vCPUs spin at
# 100% on the just-patched NOP in __schedule with interrupts off, for good
# (tests/e2e/scenarios/toggle hung in 3 of 5 runs; with thread=single in none
# of 10). HMBTRACE_QEMU_ACCEL=tcg brings the multi-threaded TCG back.
qemu_args=(-accel "${HMBTRACE_QEMU_ACCEL:-tcg,thread=single}" -nodefaults -no-user-config -nographic -no-reboot
	-m "$mem" -smp "$smp"
	-kernel "$kernel" -initrd "$initrd" -append "$cmdline"
	"${area_args[@]}" "${share_args[@]}" "${nvme_args[@]}" "${extra_qemu_args[@]}")

if ((shell)); then
	# Interactive: console on the terminal, also kept in console.log.
	"$qemu" "${qemu_args[@]}" -serial mon:stdio | tee "$console"
	[[ -s "$share/exit-status" ]] || exit 0
	rc=$(tr -dc '0-9' <"$share/exit-status")
	exit "${rc:-0}"
fi

qemu_pid=""
tail_pid=""
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	if [[ -n "$qemu_pid" ]]; then
		kill -KILL "$qemu_pid" 2>/dev/null || true
	fi
	if [[ -n "$tail_pid" ]]; then
		kill "$tail_pid" 2>/dev/null || true
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

t0=$(hmbq_now)
"$qemu" "${qemu_args[@]}" -serial stdio -monitor none \
	</dev/null >"$console" 2>"$share/qemu.stderr" &
qemu_pid=$!
if ((!quiet)); then
	tail -n +1 -F --pid="$qemu_pid" "$console" 2>/dev/null &
	tail_pid=$!
fi

deadline=$((SECONDS + timeout))
t_init=""
t_scen=""
timed_out=0
while kill -0 "$qemu_pid" 2>/dev/null; do
	if [[ -z "$t_init" ]] && grep -q 'hmbtrace-init: start' "$console" 2>/dev/null; then
		t_init=$(hmbq_now)
	fi
	if [[ -z "$t_scen" ]] && grep -q 'hmbtrace-init: scenario start' "$console" 2>/dev/null; then
		t_scen=$(hmbq_now)
	fi
	if ((SECONDS >= deadline)); then
		timed_out=1
		hmbq_log "timeout after ${timeout}s: killing QEMU (pid $qemu_pid)"
		kill -TERM "$qemu_pid" 2>/dev/null || true
		sleep 2
		kill -KILL "$qemu_pid" 2>/dev/null || true
		break
	fi
	sleep 0.1
done
qemu_rc=0
wait "$qemu_pid" || qemu_rc=$?
qemu_pid=""
t_end=$(hmbq_now)
if [[ -n "$tail_pid" ]]; then
	wait "$tail_pid" 2>/dev/null || true
	tail_pid=""
fi

# Timings: host wall clock from QEMU start; guest uptime from the init markers.
guest_uptime() {
	sed -n "s/.*hmbtrace-init: $1.*uptime=\([0-9.]*\).*/\1/p" "$console" | head -n1 | tr -d '\r'
}
{
	echo "qemu_total_s=$(hmbq_elapsed "$t0" "$t_end")"
	[[ -n "$t_init" ]] && echo "boot_to_init_s=$(hmbq_elapsed "$t0" "$t_init")"
	[[ -n "$t_scen" ]] && echo "boot_to_scenario_s=$(hmbq_elapsed "$t0" "$t_scen")"
	[[ -n "$t_scen" ]] && echo "scenario_to_exit_s=$(hmbq_elapsed "$t_scen" "$t_end")"
	echo "guest_uptime_init_s=$(guest_uptime start)"
	echo "guest_uptime_scenario_start_s=$(guest_uptime 'scenario start')"
	echo "guest_uptime_scenario_end_s=$(guest_uptime 'scenario end')"
} >"$share/timings.txt"
hmbq_log "timings: $(tr '\n' ' ' <"$share/timings.txt")"

if ((timed_out)); then
	hmbq_log "error: guest timed out; console: $console"
	exit 124
fi
if ((qemu_rc != 0)); then
	hmbq_log "error: QEMU exited with status $qemu_rc: $(tail -n 5 "$share/qemu.stderr")"
fi
if grep -q 'Kernel panic' "$console"; then
	hmbq_log "error: kernel panic in the guest; see $console"
fi
if [[ ! -s "$share/exit-status" ]]; then
	hmbq_log "error: the guest wrote no exit status (init failed or panic?); see $console"
	exit 125
fi
rc=$(tr -dc '0-9' <"$share/exit-status")
exit "${rc:-125}"
