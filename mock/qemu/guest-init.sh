#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# /init of the hmbtrace QEMU guest (busybox ash). Mounts the pseudo filesystems and
# tracefs, loads the 9p modules listed in /etc/hmbtrace/modules, mounts the host
# share (9p tag host0) at /mnt, runs /mnt/scenario.sh with its output on the console
# and in /mnt/guest.log, writes its exit status to /mnt/exit-status, powers off.
#
# Kernel command line switches (run-guest.sh --shell, --append):
#   hmbtrace.shell=1    open a shell on the console after the scenario
#   hmbtrace.noscenario=1   do not run /mnt/scenario.sh (with hmbtrace.shell=1)
#   hmbtrace.watchdog=S     a scenario still running S seconds after it started
#                           gets its blocked tasks, every CPU's backtrace and the
#                           process list dumped on the console (0: never)
#
# The "hmbtrace-init:" lines are parsed by run-guest.sh for timings.

export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root TERM="${TERM:-vt100}"

uptime_s() { cut -d' ' -f1 /proc/uptime; }

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# What udev would add: bpftrace's clang writes to /dev/fd/N.
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /tmp
mount -t tmpfs tmpfs /run
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
echo
echo "hmbtrace-init: start uptime=$(uptime_s) kernel=$(uname -r)"

shell=0
noscenario=0
nvme_driver=1
watchdog=0
# shellcheck disable=SC2013 # words, not lines
for arg in $(cat /proc/cmdline); do
	case "$arg" in
	hmbtrace.shell=1) shell=1 ;;
	hmbtrace.noscenario=1) noscenario=1 ;;
	# The scenario loads an NVMe driver of its own (kernel/patches/verify.sh).
	hmbtrace.nvme_driver=0) nvme_driver=0 ;;
	hmbtrace.watchdog=*) watchdog=${arg#hmbtrace.watchdog=} ;;
	esac
done

finish() {
	if [ "$shell" = 1 ]; then
		echo "hmbtrace-init: shell (exit or Ctrl-D to power off)"
		setsid cttyhack sh -l
	fi
	cd /
	sync
	umount /mnt 2>/dev/null
	echo "hmbtrace-init: poweroff uptime=$(uptime_s)"
	poweroff -f
	sleep 5
}

moddir=/lib/modules/hmbtrace
# shellcheck disable=SC2013 # one name a line, no spaces
for m in $(cat /etc/hmbtrace/modules); do
	if ! insmod "$moddir/$m.ko"; then
		echo "hmbtrace-init: error: insmod $m failed"
		finish
	fi
done

# An NVMe controller (class 0x010802, run-guest.sh --nvme): Debian's driver,
# unless the kernel command line says hmbtrace.nvme_driver=0.
if [ "$nvme_driver" = 1 ] &&
	grep -qx 0x010802 /sys/bus/pci/devices/*/class 2>/dev/null; then
	# shellcheck disable=SC2013 # one name a line, no spaces
	for m in $(cat /etc/hmbtrace/modules-nvme); do
		insmod "$moddir/$m.ko" || echo "hmbtrace-init: error: insmod $m failed"
	done
	echo "hmbtrace-init: nvme loaded uptime=$(uptime_s)"
fi

if ! mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 host0 /mnt; then
	echo "hmbtrace-init: error: cannot mount the 9p share host0 at /mnt"
	finish
fi
echo "hmbtrace-init: share mounted uptime=$(uptime_s)"

if [ "$noscenario" = 1 ]; then
	echo 0 >/mnt/exit-status
	finish
fi
if [ ! -f /mnt/scenario.sh ]; then
	echo "hmbtrace-init: error: no /mnt/scenario.sh in the share"
	echo 125 >/mnt/exit-status
	finish
fi

# A hung scenario is killed from the host (run-guest.sh --timeout), which
# would leave nothing to say where it hung: dump it first.
watchdog() {
	sleep "$1"
	echo 8 >/proc/sys/kernel/printk
	echo "hmbtrace-init: watchdog: the scenario still runs after $1 s (uptime=$(uptime_s)): blocked tasks, CPU backtraces, processes"
	echo 1 >/proc/sys/kernel/sysrq
	echo w >/proc/sysrq-trigger
	echo l >/proc/sysrq-trigger
	ps -o pid,stat,comm,args 2>/dev/null || ps
	for s in /proc/[0-9]*/stack; do
		grep -q '^State:.*D' "${s%stack}status" 2>/dev/null || continue
		echo "hmbtrace-init: watchdog: $s ($(cat "${s%stack}comm"))"
		cat "$s"
	done
	echo "hmbtrace-init: watchdog: end"
}
wd_pid=""
case "$watchdog" in
'' | *[!0-9]* | 0) ;;
*)
	watchdog "$watchdog" </dev/null >/dev/console 2>&1 &
	wd_pid=$!
	;;
esac

cd /mnt || finish
echo "hmbtrace-init: scenario start uptime=$(uptime_s)"
# The pipe through tee would hide the status; carry it in a file.
{
	sh /mnt/scenario.sh
	echo $? >/tmp/scenario-status
} 2>&1 | tee /mnt/guest.log
[ -n "$wd_pid" ] && kill "$wd_pid" 2>/dev/null
rc=$(cat /tmp/scenario-status 2>/dev/null)
rc=${rc:-125}
echo "hmbtrace-init: scenario end status=$rc uptime=$(uptime_s)"
echo "$rc" >/mnt/exit-status
finish
