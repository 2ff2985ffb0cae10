#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# rmmod, guest side: hmb-fwsim produces at full rate; readers hold
# per_cpu/cpuN/trace_pipe_raw of the hmb instance open; rmmod hmb_trace under
# that load. Then: the module is gone, the guest still runs commands, the
# instance (left in place while busy) is removed with rmdir, and the module
# loads again, delivers again and unloads cleanly without a reader. The
# area is drained for nobody (consume mode "always"): with the events off,
# no tracer pins the module, and the drain still runs at full rate.
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

# shellcheck disable=SC2119 # the default buffer size
setup
echo always >"$S/consume" || fail "echo always > $S/consume"
touch /mnt/ready
sleep 1
step "readers on trace_pipe_raw"
cat "$I/per_cpu/cpu0/trace_pipe_raw" >/dev/null &
r0=$!
cat "$I/per_cpu/cpu1/trace_pipe_raw" >/dev/null &
r1=$!
sleep 1
read -r d1 <"$S/delivered"
sleep 1
read -r d2 <"$S/delivered"
echo "delivered: $d1 -> $d2 (1 s)"
echo "load_delivered_1s: $d1 -> $d2" >/mnt/rmmod-load.txt
cat "$S/lost/overwritten" >>/mnt/rmmod-load.txt
step "rmmod hmb_trace (readers attached, producer at full rate)"
if rmmod hmb_trace; then
	echo "rmmod_status: 0" >>/mnt/rmmod-load.txt
else
	fail "rmmod hmb_trace under load with readers attached"
fi
if grep -q '^hmb_trace ' /proc/modules; then
	fail "hmb_trace still in /proc/modules after rmmod"
	grep '^hmb_trace ' /proc/modules
else
	echo "hmb_trace gone from /proc/modules"
fi
[ -e /sys/class/hmb_trace ] && ls /sys/class/hmb_trace && fail "/sys/class/hmb_trace still there"
kill "$r0" "$r1" 2>/dev/null
wait "$r0" "$r1" 2>/dev/null
step "after rmmod: the guest runs commands"
uname -r >/mnt/after-rmmod.txt && cat /proc/loadavg >>/mnt/after-rmmod.txt
dmesg | grep -i hmb_trace | tail -n 5
if [ -d "$I" ]; then
	rmdir "$I" || fail "rmdir $I (left busy by rmmod) failed"
fi
[ -d "$I" ] && fail "instance $I still there after rmdir"

step "insmod again, records flow, rmmod without a reader"
S=""
load_module || finish
step "echo 1 > events/hmb/enable: records reach the buffer"
echo 1 >"$I/events/hmb/enable" || fail "echo 1 > events/hmb/enable (after reload)"
read -r e1 <"$I/per_cpu/cpu0/stats"
sleep 1
read -r d3 <"$S/delivered"
# Not the trace file: iterating it while the producer overruns the buffer
# does not finish under TCG. The stats' first line is "entries: N".
read -r e2 <"$I/per_cpu/cpu0/stats"
echo "after reload: delivered $d3; cpu0 $e1 -> $e2"
echo "reload_delivered: $d3" >>/mnt/rmmod-load.txt
echo "reload_cpu0_$e2" >>/mnt/rmmod-load.txt
# shellcheck disable=SC2086 # split into per-core values
set -- $d3
[ "${1:-0}" -gt 0 ] || fail "nothing delivered after loading the module again"
rmmod hmb_trace 2>/dev/null && fail "rmmod succeeded while a tracer had hmb_record enabled"
step "echo 0 > events/hmb/enable, then rmmod"
echo 0 >"$I/events/hmb/enable" || fail "echo 0 > events/hmb/enable"
rmmod hmb_trace || fail "second rmmod hmb_trace"
grep -q '^hmb_trace ' /proc/modules && fail "hmb_trace in /proc/modules after the second rmmod"
[ -d "$I" ] && fail "instance $I not removed by rmmod without a reader"

step "a user's instance: adopted at insmod, left in place by rmmod"
mkdir "$I" || fail "mkdir $I"
echo 2048 >"$I/buffer_size_kb"
kb=$(cat "$I/buffer_size_kb")	# as ftrace rounds it
S=""
load_module || finish
rmmod hmb_trace || fail "rmmod hmb_trace (adopted instance)"
if [ -d "$I" ] && [ "$(cat "$I/buffer_size_kb")" = "$kb" ]; then
	echo "adopted_kept: yes" >>/mnt/rmmod-load.txt
else
	fail "rmmod removed the user's instance $I (or its buffer_size_kb): $(ls -d "$I" 2>&1) $(cat "$I/buffer_size_kb" 2>&1)"
fi
rmdir "$I"
alive
finish
