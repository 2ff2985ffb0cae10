#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# isolated, guest side (booted with isolcpus=1 nohz_full=1): the module
# with a control channel; an instance "iso" records every hrtimer expiry
# and every work item, per CPU, while nobody traces (2 s) and while the
# hmb events are on (5 s; enabled and disabled from CPU 1, an isolated
# CPU kicking the drains). The per-CPU traces, the drains' debugfs file
# and core_cpu go to /mnt for verify_isolated.py.
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

D=/sys/kernel/debug
mount -t debugfs none "$D" 2>/dev/null
cat /proc/cmdline >/mnt/iso-cmdline.txt
setup 8192
[ "$(cat "$S/ctrl/available")" = 1 ] || fail "no control channel (ctrl/available)"
W=/sys/kernel/tracing/instances/iso
mkdir "$W" || fail "mkdir instance iso"
echo 4096 >"$W/buffer_size_kb"
echo 1 >"$W/events/timer/hrtimer_expire_entry/enable" || fail "enable hrtimer_expire_entry"
echo 1 >"$W/events/workqueue/workqueue_execute_start/enable" || fail "enable workqueue_execute_start"
echo 1 >"$W/events/workqueue/workqueue_queue_work/enable" || fail "enable workqueue_queue_work"
cat /proc/[0-9]*/comm >/mnt/iso-comm.txt 2>/dev/null
touch /mnt/ready
step "nobody traces: 2 s"
sleep 2
echo "before tracing: requests $(cat "$S/ctrl/requests") sync $(cat "$S/ctrl/sync")" >/mnt/iso-quiet.txt
step "tracing from CPU 1: 5 s"
taskset -c 1 sh -c "echo 1 >$I/events/hmb/enable" || fail "enable the hmb events from CPU 1"
sleep 5
echo "sync while tracing: $(cat "$S/ctrl/sync"), requests $(cat "$S/ctrl/requests")" >/mnt/iso-ctrl.txt
taskset -c 1 sh -c "echo 0 >$I/events/hmb/enable" || fail "disable the hmb events from CPU 1"
sleep 1
echo 0 >"$W/tracing_on"
for c in 0 1; do
	cat "$W/per_cpu/cpu$c/trace" >"/mnt/iso-cpu$c.txt"
done
cat "$D"/hmb_trace/*/drains >/mnt/iso-drains.txt 2>/dev/null || fail "no debugfs drains"
echo "core_cpu: $(cat "$S/core_cpu")" >/mnt/iso-status.txt
echo "delivered: $(cat "$S/delivered")" >>/mnt/iso-status.txt
finish
