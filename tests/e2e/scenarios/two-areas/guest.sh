#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# two-areas, guest side: two ivshmem devices, two simulated SSDs. First the
# binding rules: insmod with no ivshmem= binds neither (both refused, with
# the line saying how to bind); ivshmem=FIRST binds the first only; the
# second is bound through driver_override + drivers_probe. Then
# trace-cmd records the hmb instance while both SSDs produce, and each
# area's status files and dictionary come back (two-areas-status.INDEX.txt),
# with hmbtrace-cmd status --json. host.sh checks it all.
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

C=/usr/bin/hmbtrace-cmd

# areas: the status directories, one a line.
areas() {
	for d in /sys/class/hmb_trace/*; do
		[ -d "$d" ] && echo "${d##*/}"
	done
}

dev_list=$(hmb_ivshmem_param)
dev_list=${dev_list#ivshmem=}
IFS=, read -r first second rest <<EOF
$dev_list
EOF
echo "ivshmem devices: $dev_list" | tee /mnt/two-areas-devices.txt
if [ -z "$first" ] || [ -z "$second" ] || [ -n "$rest" ]; then
	fail "expected two ivshmem-plain devices, saw '$dev_list'"
	finish
fi

step "insmod with no ivshmem=: no area"
params=$(cat /mnt/module-params 2>/dev/null)
# shellcheck disable=SC2086 # separate words
insmod /hmb_trace.ko $params || { fail "insmod hmb_trace.ko $params"; finish; }
areas >/mnt/two-areas-bound-none.txt
[ -s /mnt/two-areas-bound-none.txt ] &&
	fail "areas bound with no ivshmem= and no driver_override: $(cat /mnt/two-areas-bound-none.txt)"
dmesg | grep 'ivshmem device not bound' | tee /mnt/two-areas-refused.txt
rmmod hmb_trace || fail "rmmod hmb_trace (nothing bound)"

step "insmod ivshmem=$first: the first device only"
# shellcheck disable=SC2086 # separate words
insmod /hmb_trace.ko "ivshmem=$first" $params || { fail "insmod ivshmem=$first"; finish; }
areas >/mnt/two-areas-bound-first.txt
[ "$(cat /mnt/two-areas-bound-first.txt)" = "$first" ] ||
	fail "expected only $first bound with ivshmem=$first, saw: $(cat /mnt/two-areas-bound-first.txt)"
cat /sys/module/hmb_trace/parameters/ivshmem >/mnt/two-areas-param.txt

step "driver_override + drivers_probe: the second device"
echo hmb_trace >"/sys/bus/pci/devices/$second/driver_override" || fail "driver_override of $second"
echo "$second" >/sys/bus/pci/drivers_probe || fail "drivers_probe $second"
areas >/mnt/two-areas-bound-both.txt
[ "$(areas | wc -l)" = 2 ] || fail "expected two areas after driver_override, saw: $(areas | xargs)"
echo 16384 >"$I/buffer_size_kb" || fail "buffer_size_kb 16384"

capture two-areas 'wait_truth; sleep 2'
collect_areas two-areas
$C status --json >/mnt/two-areas-cmd-status.json 2>/mnt/two-areas-cmd-status.err ||
	fail "hmbtrace-cmd status --json"
finish
