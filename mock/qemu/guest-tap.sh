# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Check helpers for guest scripts that report one "ok - " / "not ok - "
# line per check (busybox sh): kernel/patches/verify-guest.sh and
# mock/qemu-nvme/guest-ssd.sh. Their host side copies this file into the
# share; the script starts with ". /mnt/guest-tap.sh".
#
#   ok MSG / not_ok MSG   one line; not_ok counts into $fails
#   die MSG               not_ok, dmesg to /mnt/dmesg.txt, exit 1
#   check "what" CMD...   ok or not ok, by the command's status
#   wait_for TEST N       wait up to N tenths of a second for eval TEST
#   save_coredump FILE    copy hmb_trace's pending devcoredump (magic
#                         HMBTDUMP) to FILE and dismiss it; 1 if none

fails=0
ok() { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; fails=$((fails + 1)); }
die() { not_ok "$*"; dmesg >/mnt/dmesg.txt; exit 1; }
check() {
	what=$1
	shift
	if "$@"; then ok "$what"; else not_ok "$what"; fi
}
wait_for() {
	i=0
	while ! eval "$1"; do
		i=$((i + 1))
		[ "$i" -le "$2" ] || return 1
		sleep 0.1
	done
}
save_coredump() {
	for d in /sys/class/devcoredump/devcd*; do
		[ "$(head -c 8 "$d/data" 2>/dev/null)" = HMBTDUMP ] || continue
		cat "$d/data" >"$1" && echo 1 >"$d/data" && return 0
	done
	return 1
}
