# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Guest-side helpers for the e2e scenarios (busybox sh). host.sh copies this
# file into the share (e2e_boot, e2e_prepare); every guest.sh starts with
#
#   . /mnt/guest-lib.sh
#   setup [BUFFER_KB]
#
#   T, I        tracefs root and the hmb instance
#   S           /sys/class/hmb_trace/<area> (set by load_module: the first)
#   step MSG    log a step with the guest uptime
#   fail MSG    log a failure and count it (the scenario's exit status)
#   setup [BUFFER_KB]   load_module, or finish if it fails; with BUFFER_KB,
#               set the instance's buffer_size_kb (per CPU)
#   load_module insmod /hmb_trace.ko with ivshmem= naming the guest's
#               ivshmem devices (hmb_ivshmem_param, /mnt/guest-hmb.sh) and
#               /mnt/module-params, find S
#   wait_file PATH SECONDS   wait until PATH exists (0) or time out (1)
#   wait_truth [SECONDS]     wait until hmb-fwsim wrote its truth file (each
#               of /mnt/truth-files when there, e.g. two simulated SSDs)
#   dump_status FILE [DIR]   every status file of DIR (default S) as
#               "name: value" lines
#   dump_ftrace_stats FILE   per_cpu/cpuN/stats of the hmb instance
#   capture NAME CMD         trace-cmd record -B hmb -e hmb of the traced
#               command "touch /mnt/ready; CMD" (CMD runs with this file
#               sourced); the capture is copied to /mnt/NAME.dat
#   collect NAME             status, dictionary and ftrace stats to
#               /mnt/NAME-status.txt, NAME-dictionary.bin, NAME-ftrace-stats.txt
#   collect_areas NAME       the same for every area (several devices):
#               NAME-status.INDEX.txt, NAME-dictionary.INDEX.bin (INDEX: the
#               area's index, the dev of its events), NAME-ftrace-stats.txt
#   capture_all NAME         capture NAME until hmb-fwsim has written its
#               truth file, plus 2 s (the last poll, a periodic
#               dictionary); then collect NAME
#   alive       show that the guest still runs commands: /mnt/alive
#   finish      dmesg to /mnt/dmesg.txt, exit with the failure count

# shellcheck source=mock/qemu/guest-hmb.sh
. /mnt/guest-hmb.sh

T=/sys/kernel/tracing
I=$T/instances/hmb
S=${S:-}
fails=0

step() {
	echo "== [$(cut -d' ' -f1 /proc/uptime)] $*"
}

fail() {
	echo "FAIL: $*"
	fails=$((fails + 1))
}

setup() {
	load_module || finish
	if [ -n "${1:-}" ]; then
		echo "$1" >"$I/buffer_size_kb" || fail "buffer_size_kb $1"
	fi
}

load_module() {
	params="$(hmb_ivshmem_param) $(cat /mnt/module-params 2>/dev/null)"
	step "insmod /hmb_trace.ko $params"
	# shellcheck disable=SC2086 # separate words
	if ! insmod /hmb_trace.ko $params; then
		fail "insmod hmb_trace.ko $params"
		return 1
	fi
	for d in /sys/class/hmb_trace/*; do
		[ -d "$d" ] && S=$d && break
	done
	if [ -z "$S" ]; then
		fail "no /sys/class/hmb_trace/<area> directory after insmod"
		return 1
	fi
	[ -d "$I" ] || { fail "no trace instance $I"; return 1; }
	export S
	echo "area status: $S"
	return 0
}

wait_file() {
	n=0
	while [ ! -e "$1" ]; do
		n=$((n + 1))
		[ "$n" -gt $(($2 * 10)) ] && return 1
		sleep 0.1
	done
	return 0
}

dump_status() {
	_s=${2:-$S}
	{
		for f in "$_s"/* "$_s"/lost/* "$_s"/errors/*; do
			n=${f#"$_s"/}
			case "$n" in
			dictionary) echo "dictionary_bytes: $(wc -c <"$f")" ;;
			device | power | subsystem | uevent | lost | errors) ;;
			*) [ -f "$f" ] && echo "$n: $(cat "$f" 2>&1)" ;;
			esac
		done
		echo "guest_uptime: $(cut -d' ' -f1 /proc/uptime)"
	} >"$1"
}

dump_ftrace_stats() {
	for c in "$I"/per_cpu/cpu*; do
		echo "cpu: ${c##*/cpu}"
		cat "$c/stats"
	done >"$1"
}

capture() {
	name=$1
	shift
	step "trace-cmd record -B hmb -e hmb -o /mnt/$name.dat (traced command starts the producer)"
	if trace-cmd record -B hmb -e hmb -o "/tmp/$name.dat" \
		sh -c ". /mnt/guest-lib.sh; touch /mnt/ready; $*" >"/mnt/$name.log" 2>&1; then
		cp "/tmp/$name.dat" "/mnt/$name.dat" || fail "copy $name.dat to /mnt"
		rm -f "/tmp/$name.dat"
	else
		cat "/mnt/$name.log"
		fail "trace-cmd record ($name)"
	fi
	grep '^FAIL' "/mnt/$name.log" && fail "traced command ($name)"
	step "trace-cmd record ($name) done"
}

collect() {
	dump_status "/mnt/$1-status.txt"
	cat "/mnt/$1-status.txt"
	cat "$S/dictionary" >"/mnt/$1-dictionary.bin"
	dump_ftrace_stats "/mnt/$1-ftrace-stats.txt"
}

collect_areas() {
	for _d in /sys/class/hmb_trace/*; do
		[ -d "$_d" ] || continue
		_i=$(cat "$_d/index")
		dump_status "/mnt/$1-status.$_i.txt" "$_d"
		echo "${_d##*/}: index $_i, delivered $(cat "$_d/delivered")"
		cat "$_d/dictionary" >"/mnt/$1-dictionary.$_i.bin"
	done
	dump_ftrace_stats "/mnt/$1-ftrace-stats.txt"
}

capture_all() {
	capture "$1" 'wait_truth; sleep 2'
	collect "$1"
}

alive() {
	step "still alive: $(cat /proc/loadavg)"
	echo alive >/mnt/alive
}

# wait_truth [SECONDS]: until hmb-fwsim (host) wrote its truth file: it has
# produced everything. With two simulated SSDs, e2e_boot lists both truth
# files in /mnt/truth-files.
wait_truth() {
	for _t in $(cat /mnt/truth-files 2>/dev/null || echo truth.json); do
		wait_file "/mnt/$_t" "${1:-120}" || echo "FAIL: hmb-fwsim did not finish ($_t)"
	done
}

finish() {
	dmesg >/mnt/dmesg.txt
	step "done: $fails failure(s)"
	exit "$fails"
}
