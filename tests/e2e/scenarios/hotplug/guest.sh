#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# hotplug, guest side: trace-cmd records while hmb-fwsim writes 4 cores and
# guest CPU 1 goes offline and online again 4 times; core_cpu is saved
# while it is offline (its cores must be drained by CPU 0 then) and after.
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

C=/sys/devices/system/cpu/cpu1/online
[ -w "$C" ] || { fail "no writable $C (CONFIG_HOTPLUG_CPU)"; finish; }
setup 32768
# shellcheck disable=SC2016 # expanded by the traced command's shell
capture hotplug '
	i=0
	while [ "$i" -lt 4 ]; do
		sleep 0.7
		step "cpu1 offline ($i)"
		echo 0 >'"$C"' || fail "cpu1 offline"
		sleep 0.2
		echo "offline_$i: $(cat "$S/core_cpu")" >>/mnt/hotplug-cpus.txt
		sleep 0.5
		step "cpu1 online ($i)"
		echo 1 >'"$C"' || fail "cpu1 online"
		sleep 0.2
		echo "online_$i: $(cat "$S/core_cpu")" >>/mnt/hotplug-cpus.txt
		i=$((i + 1))
	done
	wait_truth 60
	sleep 2'
collect hotplug
alive
finish
