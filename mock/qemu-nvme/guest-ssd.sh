#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest half of mock/qemu-nvme/run-ssd.sh (runs as /mnt/scenario.sh, busybox
# sh): the patched nvme-core/nvme from /mnt/modules drive the reference SSD
# (QEMU's NVMe with the HMB and the trace capability), hmb_trace.ko's nvme
# backend attaches to the trace area nvme-pci placed, and the records of the
# device's work are drained into instances/hmb. /mnt/scenario-name says
# which scenario: record (record-mono, record-global: on that trace clock),
# causes (causes-off: the same load, the device's causes switched off),
# reset, dump, hang, assert, freeze, ctrl, maxd1, quiet or resets. One "ok - " / "not ok - " line per
# check; the trace and dmesg go to /mnt for the host's checks.

# shellcheck source=mock/qemu/guest-tap.sh
. /mnt/guest-tap.sh

scenario=$(cat /mnt/scenario-name)
# record-CLOCK: the record scenario with both buffers on trace clock CLOCK.
clock=""
case "$scenario" in
record-*) clock=${scenario#record-} scenario=record ;;
causes-*) scenario=causes ;;
esac
T=/sys/kernel/tracing/instances/hmb

# O_DIRECT reads and writes on both CPUs (so on both I/O queues), four dd
# in flight per CPU (queue depth 4): $1 = MiB offset of this round's
# writes (two MiB used). 2 x (2 x 128 reads + 2 x 32 writes) = 640 commands.
command -v taskset >/dev/null || taskset() { shift 2; "$@"; }
io_round() {
	pids=""
	for cpu in 0 1; do
		for j in 0 1; do
			taskset -c $cpu dd if=/dev/nvme0n1 of=/dev/null bs=4096 count=128 \
				skip=$((j * 8192 + cpu * 512)) iflag=direct 2>/dev/null &
			pids="$pids $!"
			taskset -c $cpu dd if=/tmp/p.bin of=/dev/nvme0n1 bs=16384 \
				count=32 seek=$(( ($1 + cpu) * 128 + j * 32)) oflag=direct 2>/dev/null &
			pids="$pids $!"
		done
	done
	# Its own dd only (resets keeps a trace_pipe reader in the background).
	# shellcheck disable=SC2086 # a list of pids
	wait $pids
}

# causes: a mixed load long enough for a p99 tail of a hundred reads, on
# both CPUs (both I/O queues): per CPU two dd of 4 KiB O_DIRECT reads and
# two of 16 KiB O_DIRECT writes (away from round 0's), $1 rounds of
# 2 x 2 x (640 + 160) = 3200 commands each.
causes_load() {
	r=0
	while [ $r -lt "$1" ]; do
		pids=""
		for cpu in 0 1; do
			for j in 0 1; do
				taskset -c $cpu dd if=/dev/nvme0n1 of=/dev/null bs=4096 count=640 \
					skip=$((r * 2560 + j * 1280 + cpu * 640)) iflag=direct 2>/dev/null &
				pids="$pids $!"
				taskset -c $cpu dd if=/dev/zero of=/dev/nvme0n1 bs=16384 count=160 \
					seek=$((1024 + (r % 4) * 640 + cpu * 320 + j * 160)) oflag=direct 2>/dev/null &
				pids="$pids $!"
			done
		done
		# shellcheck disable=SC2086 # a list of pids
		wait $pids
		r=$((r + 1))
	done
}

# The firmware stops writing (control STOP; the device logs each core's
# next_seq as it takes it), then the drain catches up: nothing is written
# after this, so the trace can be counted against the device exactly.
stop_firmware() {
	# STOP is idempotent: tried again when its answer came too late (the
	# sysfs write's deadline is 100 ms; a loaded host can stall the vCPUs
	# longer; the device then logs a STOP more, which changes nothing).
	n=0
	until echo stop >"$1/ctrl/tracing"; do
		n=$((n + 1))
		[ $n -lt 5 ] || return 1
		sleep 0.2
	done
	# The drain has caught up when "delivered" stays the same over four
	# reads 0.5 s apart (a drain pass is due every few ms).
	last=-1
	same=0
	while [ $same -lt 4 ]; do
		now=$(cat "$1/delivered")
		if [ "$now" = "$last" ]; then same=$((same + 1)); else same=0; fi
		last=$now
		sleep 0.5
	done
}

# The guest's trace clock ("local", the one the clock fit maps firmware time
# to) against "mono", which under TCG reads the HPET, i.e. QEMU's virtual
# clock, the firmware clock's base: a marker in an instance of each, the
# local one twice around the mono one, five times (verify_ssd.py takes the
# tightest) at the start and at the end: the guest clock's own rate error.
clock_mark() {
	exec 3>/sys/kernel/tracing/instances/clk_local/trace_marker \
		4>/sys/kernel/tracing/instances/clk_mono/trace_marker
	for i in 1 2 3 4 5; do
		echo "mark $1" >&3
		echo "mark $1" >&4
		echo "mark $1" >&3
	done
	exec 3>&- 4>&-
}

# A mark in the device's own log (QEMU's pci_nvme_read: "lba 0x..."): one
# O_DIRECT 4 KiB read at 4 KiB block $1, i.e. lba $1 * 8 (verify_ssd.py
# MARKS), for counting the device's commands between two moments.
device_mark() {
	dd if=/dev/nvme0n1 of=/dev/null bs=4096 count=1 skip="$1" iflag=direct 2>/dev/null
}

# The resets scenario's memory pressure: most of what is available pinned
# in a tmpfs (no swap: it cannot be reclaimed), the page cache dropped,
# and buffered writes to the disk under reset, which reclaim must write
# back.
fill_memory() {
	avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo)
	dd if=/dev/zero of=/tmp/fill/f bs=1M count=$((avail * 6 / 10)) 2>/dev/null
	echo 3 >/proc/sys/vm/drop_caches
}

# dmesg to /mnt, and no kernel report in it: the host's list of report
# titles (mock/qemu/lib.sh, hmbq_kernel_report_re: WARNING, BUG, lockdep,
# KASAN, ODEBUG, the workqueue and hung-task watchdogs...), and no call
# trace of any kind.
dmesg_check() {
	dmesg >/mnt/dmesg.txt
	bad=$(grep -E "$(cat /mnt/kernel-report-re)|Call Trace" /mnt/dmesg.txt)
	if [ -z "$bad" ]; then
		ok "dmesg: no WARNING, BUG, lockdep, KASAN, ODEBUG, watchdog report or call trace"
	else
		not_ok "dmesg: $bad"
	fi
}

# What the record scenario runs under hmbtrace-cmd record.
if [ "${1:-}" = --capture ]; then
	io_round 0
	if [ "$scenario" = causes ]; then
		t0=$(cut -d' ' -f1 /proc/uptime)
		causes_load "$(cat /mnt/causes-rounds)"
		echo "# causes: the load took $(awk -v t0="$t0" '{ printf "%d", ($1 - t0) * 1000 }' /proc/uptime) ms" >/mnt/causes-load.txt
	fi
	dd if=/dev/nvme0n1 of=/tmp/r.bin bs=16384 count=32 skip=0 iflag=direct 2>/dev/null
	cmp -s /tmp/r.bin /tmp/p.bin && : >/tmp/cmp-ok
	stop_firmware "$2"
	exit
fi

# The host staged each of these that is a module of the kernel booted; one
# it did not stage is built in (mock/qemu/lib.sh, hmbq_stage_modules).
# nvme gets /mnt/nvme-args: on 6.12 and 7.2 the HMB trace extension is off
# unless asked for (run-ssd.sh).
for m in crct10dif_common crc-t10dif crc64 crc64-rocksoft t10-pi nvme-keyring \
	nvme-auth nvme-core nvme; do
	[ -f "/mnt/modules/$m.ko" ] || continue
	args=""
	[ "$m" != nvme ] || args=$(cat /mnt/nvme-args 2>/dev/null)
	# hang: a short I/O timeout (run-ssd.sh), so the reset comes soon.
	[ "$m" != nvme-core ] || args=$(cat /mnt/nvme-core-args 2>/dev/null)
	# shellcheck disable=SC2086 # one word per parameter
	insmod "/mnt/modules/$m.ko" $args || die "insmod $m.ko $args"
done
[ "$(cat /sys/module/nvme/srcversion)" = "$(cat /mnt/nvme.srcversion)" ] ||
	die "the loaded nvme is not the patched one"
wait_for '[ -b /dev/nvme0n1 ]' 300 || die "no /dev/nvme0n1 30 s after insmod"
ok "patched nvme drives the reference SSD: nvme0n1 $(cat /sys/block/nvme0n1/size) sectors"
if [ -f /mnt/modules/nvme-tcp.ko ]; then
	# scripts/install-nvme-hmb-trace.sh's transports, built from the same
	# tree: they load on the patched nvme-core (the kernel's own would not).
	check "nvme-fabrics and nvme-tcp load on the patched nvme-core" \
		sh -c "insmod /mnt/modules/nvme-fabrics.ko && insmod /mnt/modules/nvme-tcp.ko &&
			rmmod nvme-tcp && rmmod nvme-fabrics"
fi
if [ "$scenario" = maxd1 ]; then
	# HMMAXD = 1: the one descriptor entry goes to the data HMB, the
	# trace area is dropped (feature EN=0), the HMB works as without it.
	check "HMMAXD=1: data HMB allocated ($(dmesg | grep -o 'allocated .* host memory buffer' | head -n 1))" \
		sh -c "dmesg | grep -q 'allocated .* host memory buffer'"
	check "HMMAXD=1: no HMB trace area allocated" \
		sh -c "! dmesg | grep -q 'HMB trace area'"
	insmod /mnt/modules/hmb_trace.ko || die "insmod hmb_trace.ko"
	check "HMMAXD=1: hmb_trace got no area" sh -c "! ls /sys/class/hmb_trace/nvme* >/dev/null 2>&1"
	head -c 524288 /dev/urandom >/tmp/p.bin
	io_round 0
	dd if=/dev/nvme0n1 of=/tmp/r.bin bs=16384 count=32 skip=0 iflag=direct 2>/dev/null
	check "disk data intact" cmp -s /tmp/r.bin /tmp/p.bin
	: >/mnt/trace.txt
	check "rmmod hmb_trace nvme nvme_core" sh -c "rmmod hmb_trace && rmmod nvme && rmmod nvme_core"
	dmesg_check
	[ "$fails" -eq 0 ]
	exit
fi
# nvme_hmb_trace_probe/alloc: the capability read, the area allocated.
check "nvme-pci allocated the HMB trace area ($(dmesg | grep -o 'allocated [0-9]* KiB HMB trace area.*' | head -n 1))" \
	sh -c "dmesg | grep -q 'allocated [0-9]* KiB HMB trace area'"

# Consume mode "traced": the ring keeps what the device wrote since the HMB
# was enabled (the partition scan's reads) until the events are enabled.
# dump: the smallest crash dump, so that the busiest cores' shares are full
# and keep only their newest records (hmb_trace_dump.c).
hmb_args=$(cat /mnt/hmb-args 2>/dev/null)
[ "$scenario" != dump ] || [ -n "$hmb_args" ] || hmb_args=coredump_kb=64
# shellcheck disable=SC2086 # one word per parameter
insmod /mnt/modules/hmb_trace.ko $hmb_args || die "insmod hmb_trace.ko $hmb_args"
area=""
for a in /sys/class/hmb_trace/nvme*; do [ -d "$a" ] && area=$a && break; done
[ -n "$area" ] || die "no nvme trace area in /sys/class/hmb_trace after insmod (the notifier's or subscribe's replay)"
ok "hmb_trace's nvme backend attached $(basename "$area") (replayed ENABLED)"
if ! mkdir /sys/kernel/tracing/instances/clk_local /sys/kernel/tracing/instances/clk_mono ||
	! echo mono >/sys/kernel/tracing/instances/clk_mono/trace_clock; then
	not_ok "instances clk_local and clk_mono (trace clocks local, mono)"
fi
clock_mark start
check "control channel available" [ "$(cat "$area/ctrl/available")" = 1 ]

if [ "$scenario" = quiet ]; then
	# Nobody traces: no control request but the attach's one calibration
	# run for the crash dump (at most 32 answered bursts of 4,
	# hmb_trace_clock.c),
	# no command; the host counts the device's C1h commands between the
	# marks (verify_ssd.py). The calibration spreads its last bursts
	# over ~25 s: the quiet spell starts when it is over.
	# shellcheck disable=SC2016 # evaluated by wait_for
	check "nobody tracing: the attach's calibration run ends (ctrl/sync idle)" \
		wait_for '[ "$(cat "$area/ctrl/sync")" = idle ]' 600
	echo "# quiet: calibration: ctrl/requests $(cat "$area/ctrl/requests") clock/bursts $(cat "$area/clock/bursts") have_fit $(cat "$area/clock/have_fit")"
	device_mark 1001
	sleep 20
	device_mark 1002
	check "nobody tracing for 20 s: no control request but the attach's calibration, at most 128 (ctrl/requests $(cat "$area/ctrl/requests"), sync $(cat "$area/ctrl/sync"))" \
		[ "$(cat "$area/ctrl/requests")" -le 128 ]
	check "nobody tracing: the clock sync is idle" [ "$(cat "$area/ctrl/sync")" = idle ]
	check "nobody tracing: the calibration at attach made a clock fit (for the crash dump)" \
		[ "$(cat "$area/clock/have_fit")" = 1 ]
fi

head -c 524288 /dev/urandom >/tmp/p.bin 2>/dev/null

if [ "$scenario" = record ] || [ "$scenario" = causes ]; then
	# hmbtrace-cmd record: trace-cmd enables the hmb events (the ring still
	# holds everything the device wrote since the HMB was enabled) and
	# records them with the host's nvme_setup_cmd / nvme_complete_rq.
	check "hmbtrace-cmd record of O_DIRECT I/O on 2 queues, depth 4 each" \
		sh -c "hmbtrace-cmd record ${clock:+--clock $clock} -o /tmp/ssd.dat -- sh /mnt/scenario.sh --capture $area >/mnt/record.log 2>&1"
	cat /mnt/record.log
	check "disk data intact (what CPU 0 wrote reads back)" [ -e /tmp/cmp-ok ]
	cp /tmp/ssd.dat /mnt/ssd.dat || not_ok "copy the capture to /mnt"
else
	# Room for every record (verify_ssd.py counts each against the device,
	# and fails if ftrace overwrote any): the busy firmware of resets, and
	# any scenario on a slow kernel (the debug kernel's reset scenario
	# runs ~5 min: 42314 events, 9472 more than the default buffer held).
	echo 16384 >$T/buffer_size_kb
	if [ "$scenario" = dump ]; then
		# Nobody traces: the ring keeps the device's newest records. A
		# reset: hmb_trace hands them to devcoredump (verify_ssd.py
		# checks the dump against the device); then generation 2 is
		# traced as in reset. The attach's calibration run gives the
		# dump a clock fit though nobody traces (hmb_trace_clock.c).
		# shellcheck disable=SC2016 # evaluated by wait_for
		check "nobody tracing: the attach's calibration run made a clock fit for the crash dump" \
			wait_for '[ "$(cat $area/clock/have_fit)" = 1 ]' 100
		echo "# dump: calibration: ctrl/requests $(cat "$area/ctrl/requests") timeouts $(cat "$area/ctrl/timeouts") not_sent $(cat "$area/ctrl/not_sent") sync $(cat "$area/ctrl/sync") clock/bursts $(cat "$area/clock/bursts")"
		io_round 0
		# I/O in flight at the reset: the dump lists the commands. Rounds
		# until the reset is over, and the reset written once the block
		# layer has some in flight (inflight: reads, writes), not after
		# a fixed sleep: on 7.2 and 6.12 one round was over 60 ms
		# before it.
		rm -f /tmp/io-stop
		(while [ ! -e /tmp/io-stop ]; do io_round 2; done) &
		n=0
		until awk '{ exit !($1 + $2) }' /sys/block/nvme0n1/inflight ||
			[ $n -ge 500 ]; do
			n=$((n + 1))
		done
		t0=$(cut -d' ' -f1 /proc/uptime)
		echo 1 >/sys/class/nvme/nvme0/reset_controller || not_ok "write reset_controller"
		touch /tmp/io-stop
		wait
		# shellcheck disable=SC2016 # evaluated by wait_for
		check "nobody tracing, a controller reset: live again" \
			wait_for '[ "$(cat /sys/class/nvme/nvme0/state)" = live ]' 300
		echo "# dump: the reset took $(awk -v t0="$t0" '{ printf "%d", ($1 - t0) * 1000 }' /proc/uptime) ms to live (hmb_trace $hmb_args)"
		check "nobody tracing: a crash dump of the reset for devcoredump, saved" \
			wait_for "save_coredump /mnt/coredump.bin" 100
		check "the trace area is back after the reset" \
			wait_for "[ \"\$(cat $area/state 2>/dev/null)\" = attached ] && [ \"\$(cat $area/producer_gen)\" = 2 ]" 100
	fi
	if [ "$scenario" = hang ]; then
		# Nobody traces. The device holds every command of I/O queue 1
		# (CPU 0's) after its first 40 (run-ssd.sh: hmb.hang_qid=1,
		# hmb.hang_after=40): the dd on CPU 0 wait, nvme times out
		# (nvme_core.io_timeout=3), aborts (QEMU's Abort does not), times
		# out again and resets the controller; the reset ends the hang.
		# Queue 2 (CPU 1) works all along.
		t0=$(cut -d' ' -f1 /proc/uptime)
		for j in 0 1 2 3; do
			taskset -c 0 dd if=/dev/nvme0n1 of=/dev/null bs=4096 count=32 \
				skip=$((j * 4096)) iflag=direct 2>/dev/null &
			taskset -c 1 dd if=/dev/nvme0n1 of=/dev/null bs=4096 count=32 \
				skip=$((j * 4096 + 1024)) iflag=direct 2>/dev/null &
		done
		wait
		echo "# hang: the dd were over $(awk -v t0="$t0" '{ printf "%d", ($1 - t0) * 1000 }' /proc/uptime) ms after they started"
		check "a hung queue: nvme timed out and reset the controller ($(dmesg | grep -c 'timeout, ') timeout lines)" \
			sh -c "dmesg | grep -q 'timeout, reset controller'"
		# shellcheck disable=SC2016 # evaluated by wait_for
		check "after the timeout's reset: live again" \
			wait_for '[ "$(cat /sys/class/nvme/nvme0/state)" = live ]' 300
		check "nobody tracing, a hung queue: a crash dump of the reset for devcoredump, saved" \
			wait_for "save_coredump /mnt/coredump.bin" 100
		check "the trace area is back after the reset" \
			wait_for "[ \"\$(cat $area/state 2>/dev/null)\" = attached ] && [ \"\$(cat $area/producer_gen)\" = 2 ]" 100
		check "the hung queue works again: O_DIRECT reads on CPU 0" \
			taskset -c 0 dd if=/dev/nvme0n1 of=/dev/null bs=4096 count=16 iflag=direct
	fi
	if [ "$scenario" = assert ]; then
		# Nobody traces. The firmware asserts at its 400th I/O fetch,
		# during this round (run-ssd.sh: hmb.assert_after=400), and
		# restarts its trace area itself 1 s later: a new generation
		# with no reset. hmb_trace notices the restart under way (the
		# area in INIT) and dumps the ended generation.
		io_round 0
		check "nobody tracing, a firmware assert: a crash dump of the ended generation, saved" \
			wait_for "save_coredump /mnt/coredump.bin" 100
		check "the firmware restarted its area itself: generation 2, attached" \
			wait_for "[ \"\$(cat $area/state 2>/dev/null)\" = attached ] && [ \"\$(cat $area/producer_gen)\" = 2 ]" 100
		# shellcheck disable=SC2016 # evaluated by check
		check "a firmware restart is no controller reset: live all along" \
			[ "$(cat /sys/class/nvme/nvme0/state)" = live ]
	fi
	if [ "$scenario" = freeze ]; then
		# Nobody traces. The guest arms the firmware's freeze over the
		# control channel (a command slower than 200 ms freezes, then
		# N = 16 records per core); the device completes queue 1's
		# 100th I/O command 1 s late (run-ssd.sh: hmb.slow_qid=1,
		# hmb.slow_after=100, hmb.slow_us=1000000), in this round.
		# hmb_trace sees FROZEN at its idle poll and dumps the frozen
		# rings (reason fw_freeze); the re-arm lets the firmware write
		# again.
		check "freeze: ctrl/freeze reads running before anything" \
			[ "$(cat "$area/ctrl/freeze")" = running ]
		check "freeze: armed over the control channel (hmbtrace-cmd ctrl freeze-config 200000 16)" \
			sh -c "hmbtrace-cmd ctrl freeze-config 200000 16 >/mnt/freeze-ctrl.txt 2>&1"
		check "freeze: ctrl/freeze_config says the threshold and N ($(cat "$area/ctrl/freeze_config"))" \
			[ "$(cat "$area/ctrl/freeze_config")" = "200000000 16" ]
		io_round 0
		# shellcheck disable=SC2016 # evaluated by wait_for
		check "freeze: the firmware froze its rings on the slow command (ctrl/freeze)" \
			wait_for '[ "$(cat "$area/ctrl/freeze")" = frozen ]' 300
		# dump save prints a line per dump saved (status 0 also for none).
		rm -rf /tmp/fdump /tmp/fdump2 && mkdir /tmp/fdump /tmp/fdump2
		check "freeze: a crash dump of the freeze, saved (hmbtrace-cmd dump save)" \
			wait_for "hmbtrace-cmd dump save --dir /tmp/fdump >>/mnt/dump-save.txt 2>&1 &&
				ls /tmp/fdump/*.hmbdump >/dev/null 2>&1" 100
		cat /mnt/dump-save.txt
		cp /tmp/fdump/*.hmbdump /mnt/coredump.bin || not_ok "copy the dump to /mnt"
		check "freeze: re-armed (hmbtrace-cmd ctrl rearm)" \
			sh -c "hmbtrace-cmd ctrl rearm >>/mnt/freeze-ctrl.txt 2>&1"
		# shellcheck disable=SC2016 # evaluated by wait_for
		check "freeze: ctrl/freeze reads running after the re-arm" \
			wait_for '[ "$(cat "$area/ctrl/freeze")" = running ]' 100
		check "freeze: no second crash dump (one per freeze)" \
			sh -c "hmbtrace-cmd dump save --dir /tmp/fdump2 >/dev/null 2>&1 &&
				[ -z \"\$(ls /tmp/fdump2)\" ]"
		io_round 2
	fi
	[ "$scenario" != quiet ] || device_mark 1003
	echo 1 >$T/events/hmb/enable || not_ok "enable the hmb events"
	if [ "$scenario" = resets ]; then
		# A reader all along: 8 resets of a busy firmware write more than
		# a buffer the memory pressure leaves room for (102205 events
		# overwritten in 16 MiB per CPU, loaded host); trace_pipe says
		# "[LOST N EVENTS]" where it fell behind (verify_ssd.py fails).
		cat $T/trace_pipe >/mnt/trace.txt &
		pipe_pid=$!
	fi
	echo 1 >$T/tracing_on
	io_round 0
fi

case "$scenario" in
reset)
	io_round 2 &
	echo 1 >/sys/class/nvme/nvme0/reset_controller || not_ok "write reset_controller"
	wait
	# shellcheck disable=SC2016 # evaluated by wait_for
	check "controller reset while tracing: live again" \
		wait_for '[ "$(cat /sys/class/nvme/nvme0/state)" = live ]' 300
	check "the trace area is back after the reset" \
		wait_for "[ -d $area ] && [ \"\$(cat $area/state 2>/dev/null)\" = attached ]" 100
	# What the ring held at DISABLING (verify_ssd.py checks it).
	check "a crash dump of the reset for devcoredump, saved" \
		wait_for "save_coredump /mnt/coredump.bin" 100
	io_round 4
	;;
quiet)
	check "tracing: the clock sync runs ($(cat "$area/ctrl/sync"))" \
		[ "$(cat "$area/ctrl/sync")" = running ]
	check "tracing: a clock fit" [ "$(cat "$area/clock/have_fit")" = 1 ]
	sleep 5
	device_mark 1004
	echo "quiet: $(cat "$area/ctrl/requests") control requests while tracing" >/mnt/quiet.txt
	# Tracing stops: the sync stops at its next burst (100 ms).
	echo 0 >$T/events/hmb/enable
	sleep 1
	req=$(cat "$area/ctrl/requests")
	device_mark 1005
	sleep 10
	device_mark 1006
	check "tracing stopped: the clock sync is idle again ($(cat "$area/ctrl/sync"))" \
		[ "$(cat "$area/ctrl/sync")" = idle ]
	check "tracing stopped: no control request in 10 s ($req, then $(cat "$area/ctrl/requests"))" \
		[ "$(cat "$area/ctrl/requests")" = "$req" ]
	echo 1 >$T/events/hmb/enable
	;;
resets)
	mkdir -p /tmp/fill && mount -t tmpfs -o size=90% tmpfs /tmp/fill
	# Filled once, kept for all 8: the pressure is the same, and refilling
	# (copying most of the guest's memory) took minutes a round on the
	# debug kernel (KASAN under TCG).
	fill_memory
	echo "# resets: $(awk '/^Shmem:/ { print int($2 / 1024) }' /proc/meminfo) MiB pinned in tmpfs, $(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo) MiB available (uptime $(cut -d' ' -f1 /proc/uptime))"
	# r, not i: wait_for (guest-tap.sh) uses i.
	r=1
	while [ $r -le 8 ]; do
		echo 3 >/proc/sys/vm/drop_caches
		echo "# resets: reset $r of 8 (uptime $(cut -d' ' -f1 /proc/uptime))"
		io_round $((2 * r)) &
		io_pid=$!
		dd if=/tmp/p.bin of=/dev/nvme0n1 bs=65536 seek=$((640 + r * 8)) 2>/dev/null &
		dd_pid=$!
		echo 1 >/sys/class/nvme/nvme0/reset_controller || not_ok "reset $r: write reset_controller"
		# Not a bare wait: the trace_pipe reader runs to the end.
		wait "$io_pid" "$dd_pid"
		# shellcheck disable=SC2016 # evaluated by wait_for
		check "reset $r of 8 (tracing, I/O, $(awk '/^MemAvailable:/ { print int($2 / 1024) }' /proc/meminfo) MiB available): live again" \
			wait_for '[ "$(cat /sys/class/nvme/nvme0/state)" = live ]' 300
		check "reset $r: the trace area is back and read (resets $(cat $area/resets 2>/dev/null))" \
			wait_for "[ \"\$(cat $area/state 2>/dev/null)\" = attached ] && [ \"\$(cat $area/resets 2>/dev/null)\" = $r ]" 100
		r=$((r + 1))
	done
	rm -f /tmp/fill/f
	umount /tmp/fill
	sync
	echo 3 >/proc/sys/vm/drop_caches
	dd if=/dev/nvme0n1 of=/tmp/r2.bin bs=65536 skip=$((640 + 8 * 8)) count=8 2>/dev/null
	check "resets: the buffered write made during the last reset reads back" \
		cmp -s /tmp/r2.bin /tmp/p.bin
	;;
ctrl)
	check "control: STOP answered" sh -c "echo stop >$area/ctrl/tracing"
	io_round 2
	echo stopped-io-done >/mnt/ctrl-marks
	check "control: START answered" sh -c "echo start >$area/ctrl/tracing"
	check "control: ECHO 4242 on core 1 answered" sh -c "echo '4242 1' >$area/ctrl/echo"
	# With the freeze (ABI 1.1) STOP is a freeze when a ring is full
	# (reason RING_FULL, N = 0); no ring fills here, and OVERWRITE ends
	# the mode (verify_ssd.py: the device froze nothing).
	check "control: RING_MODE stop answered" sh -c "echo stop >$area/ctrl/ring_mode"
	check "control: RING_MODE overwrite answered" \
		sh -c "echo overwrite >$area/ctrl/ring_mode && [ \"\$(cat $area/ctrl/ring_mode)\" = overwrite ]"
	io_round 4
	;;
esac
if [ "$scenario" != record ] && [ "$scenario" != causes ]; then
	dd if=/dev/nvme0n1 of=/tmp/r.bin bs=16384 count=32 skip=0 iflag=direct 2>/dev/null
	check "disk data intact (what round 0 wrote on CPU 0 reads back)" cmp -s /tmp/r.bin /tmp/p.bin
	check "control: STOP, the drain caught up" stop_firmware "$area"
fi
clock_mark end
check "clock fits made over the control command ($(cat "$area/clock/fits" 2>/dev/null))" \
	wait_for "[ \"\$(cat $area/clock/fits 2>/dev/null || echo 0)\" -gt 0 ]" 50
for f in "$area"/*; do [ -f "$f" ] && echo "$(basename "$f"): $(head -n 1 "$f" 2>/dev/null)"; done >/mnt/area-status.txt
for f in "$area"/ctrl/* "$area"/clock/*; do [ -f "$f" ] && echo "$(basename "$(dirname "$f")")/$(basename "$f"): $(head -n 1 "$f" 2>/dev/null)"; done >>/mnt/area-status.txt
if [ "$scenario" != record ] && [ "$scenario" != causes ]; then
	echo 0 >$T/tracing_on
	if [ -n "${pipe_pid:-}" ]; then
		# shellcheck disable=SC2016 # evaluated by wait_for
		wait_for '! grep -q "^entries: [1-9]" $T/per_cpu/cpu*/stats' 100 ||
			not_ok "trace_pipe read the buffer empty"
		kill "$pipe_pid"
		wait "$pipe_pid" 2>/dev/null
	else
		cat $T/trace >/mnt/trace.txt
	fi
	# The module cannot go while its events are enabled.
	echo 0 >$T/events/hmb/enable
fi
cat /sys/kernel/tracing/instances/clk_local/trace >/mnt/clk-local.txt
cat /sys/kernel/tracing/instances/clk_mono/trace >/mnt/clk-mono.txt

if [ "$scenario" = ctrl ]; then
	# nvme_remove() with a subscriber: the controller's PCI function
	# removed while hmb_trace holds the area: DISABLING (suspend), then
	# FREEING, which unregisters it before the memory goes.
	dev=$(readlink -f /sys/class/nvme/nvme0/device)
	check "PCI remove of the controller while hmb_trace holds its area" \
		sh -c "echo 1 >$dev/remove"
	check "FREEING with a subscriber: the area was unregistered" \
		wait_for "dmesg | grep -q 'hmb_trace: nvme0: area [0-9]* unregistered'" 50
	check "PCI remove: a crash dump for devcoredump, saved" \
		wait_for "save_coredump /mnt/coredump-remove.bin" 100
fi
check "rmmod hmb_trace" rmmod hmb_trace
# nvme_remove(): shutdown, then nvme_free_host_mem() frees the trace area
# (FREEING, with no subscriber left).
check "rmmod nvme nvme_core (shutdown, HMB and trace area freed)" \
	sh -c "rmmod nvme && rmmod nvme_core"
dmesg_check
[ "$fails" -eq 0 ]
