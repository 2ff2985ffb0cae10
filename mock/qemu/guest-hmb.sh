# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Guest-side helper for every scenario that loads hmb_trace.ko (busybox sh).
# hmbq_boot (scenario-lib.sh) copies it into the share; a guest.sh sources
# it as /mnt/guest-hmb.sh (tests/e2e/guest-lib.sh does).
#
# hmb_ivshmem_param: "ivshmem=BDF[,BDF...]" for insmod, naming this guest's
#     ivshmem-plain devices (1af4:1110, every one is a simulated HMB here);
#     nothing when there are none. hmb_trace.ko binds no ivshmem device it
#     is not told to (ivshmem= or driver_override), so every insmod of the
#     harness passes it: insmod /hmb_trace.ko $(hmb_ivshmem_param) PARAMS

hmb_ivshmem_param() {
	_hmb_list=""
	for _hmb_d in /sys/bus/pci/devices/*; do
		[ "$(cat "$_hmb_d/vendor" 2>/dev/null)" = 0x1af4 ] || continue
		[ "$(cat "$_hmb_d/device" 2>/dev/null)" = 0x1110 ] || continue
		_hmb_list="$_hmb_list${_hmb_list:+,}${_hmb_d##*/}"
	done
	[ -z "$_hmb_list" ] || echo "ivshmem=$_hmb_list"
}
