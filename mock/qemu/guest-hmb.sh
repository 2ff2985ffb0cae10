# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Guest-side helper for every scenario that loads hmb_trace.ko (busybox sh).
# hmbq_boot (scenario-lib.sh) copies it into the share; a guest.sh sources
# it as /mnt/guest-hmb.sh (tests/e2e/guest-lib.sh does).
#
# hmb_ivshmem_param: "ivshmem=BDF[+MAILBOX][,BDF...]" for insmod, naming
#     this guest's ivshmem-plain devices (1af4:1110: every one is a
#     simulated HMB here, or a control mailbox: those have a 4 KiB BAR2 and
#     go with the areas in order, the first mailbox with the first area);
#     nothing when there are none. hmb_trace.ko binds no ivshmem device it
#     is not told to (ivshmem= or driver_override), so every insmod of the
#     harness passes it: insmod /hmb_trace.ko $(hmb_ivshmem_param) PARAMS

# _hmb_bar2_size DEV: bytes of BAR2 (third line of "resource").
_hmb_bar2_size() {
	sed -n 3p "$1/resource" | {
		read -r _s _e _f
		echo $((_e - _s + 1))
	}
}

hmb_ivshmem_param() {
	_hmb_areas=""
	_hmb_mbs=""
	for _hmb_d in /sys/bus/pci/devices/*; do
		[ "$(cat "$_hmb_d/vendor" 2>/dev/null)" = 0x1af4 ] || continue
		[ "$(cat "$_hmb_d/device" 2>/dev/null)" = 0x1110 ] || continue
		if [ "$(_hmb_bar2_size "$_hmb_d")" = 4096 ]; then
			_hmb_mbs="$_hmb_mbs ${_hmb_d##*/}"
		else
			_hmb_areas="$_hmb_areas ${_hmb_d##*/}"
		fi
	done
	_hmb_list=""
	# shellcheck disable=SC2086 # word lists
	set -- $_hmb_mbs
	for _hmb_a in $_hmb_areas; do
		_hmb_e=$_hmb_a
		if [ $# -gt 0 ]; then
			_hmb_e="$_hmb_a+$1"
			shift
		fi
		_hmb_list="$_hmb_list${_hmb_list:+,}$_hmb_e"
	done
	[ -z "$_hmb_list" ] || echo "ivshmem=$_hmb_list"
}
