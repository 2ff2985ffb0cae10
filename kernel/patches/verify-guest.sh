#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# Guest half of kernel/patches/verify.sh (runs as /mnt/scenario.sh in the
# QEMU guest, busybox sh): loads the patched nvme-core/nvme from
# /mnt/modules instead of Debian's and checks that QEMU's emulated NVMe disk
# (no HMB, no HMB trace capability) works as before. One "ok - " or
# "not ok - " line per check; exits 1 if any failed.
#
# Disk layout (1 MiB patterns from the host's share): A written at 0 before
# the reset, B put at 4 MiB by the host, C written at 8 MiB after the reset.

MB=1048576
# shellcheck source=mock/qemu/guest-tap.sh
. /mnt/guest-tap.sh

# Read 1 MiB at MiB offset $1 of the disk, bypassing the page cache, and
# compare it with the file $2.
mib_equals() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
	blockdev --flushbufs /dev/nvme0n1
	dd if=/dev/nvme0n1 of=/tmp/read.bin bs=$MB skip="$1" count=1 2>/dev/null &&
		cmp -s /tmp/read.bin "$2"
}

# Write the file $2 at MiB offset $1, synchronously, and read it back.
write_mib() {
	dd if="$2" of=/dev/nvme0n1 bs=$MB seek="$1" count=1 conv=fsync 2>/dev/null &&
		mib_equals "$1" "$2"
}

is_patched() {
	[ "$(cat /sys/module/nvme/srcversion)" = "$(cat /mnt/nvme.srcversion)" ] &&
		[ "$(cat /sys/module/nvme_core/srcversion)" = "$(cat /mnt/nvme-core.srcversion)" ] &&
		[ -f /sys/module/nvme/parameters/hmb_trace ]
}

nvme_gone() { [ ! -d /sys/module/nvme ] && [ ! -d /sys/module/nvme_core ]; }
no_hmb_trace_area() { [ -z "$(ls /sys/class/hmb_trace 2>/dev/null)" ]; }

for m in crct10dif_common crc-t10dif crc64 crc64-rocksoft t10-pi nvme-core nvme; do
	insmod "/mnt/modules/$m.ko" || die "insmod $m.ko"
done
is_patched ||
	die "the loaded nvme, nvme_core are not the patched ones (srcversion, hmb_trace parameter)"
ok "patched nvme-core and nvme loaded (srcversion matches, hmb_trace=$(cat /sys/module/nvme/parameters/hmb_trace))"

wait_for '[ -b /dev/nvme0n1 ]' 200 || die "no /dev/nvme0n1 20 s after insmod"
ok "nvme0n1 appeared: $(tr -s ' ' </sys/class/nvme/nvme0/model), $(cat /sys/block/nvme0n1/size) sectors"

check "1 MiB written at 0 reads back equal" write_mib 0 /mnt/a.bin
check "1 MiB the host put at 4 MiB reads equal" mib_equals 4 /mnt/b.bin

# hmb_trace.ko's nvme backend subscribes to the patched nvme's notifier;
# with no HMB-capable controller it gets no area, before or after a reset.
hmb=0
if [ ! -f /mnt/modules/hmb_trace.ko ]; then
	not_ok "no hmb_trace.ko with the nvme backend to load"
elif insmod /mnt/modules/hmb_trace.ko; then
	hmb=1
	check "hmb_trace.ko (nvme backend) loaded: subscribed, no trace area" no_hmb_trace_area
else
	not_ok "insmod hmb_trace.ko (nvme backend)"
fi

echo 1 >/sys/class/nvme/nvme0/reset_controller || not_ok "write reset_controller"
# shellcheck disable=SC2016 # evaluated by wait_for
check "controller reset through sysfs, live again" \
	wait_for '[ "$(cat /sys/class/nvme/nvme0/state)" = live ]' 300
wait_for '[ -b /dev/nvme0n1 ]' 100 || not_ok "nvme0n1 gone after the reset"

check "after the reset: 1 MiB written at 8 MiB reads back equal" write_mib 8 /mnt/c.bin
check "after the reset: the data written before it reads equal" mib_equals 0 /mnt/a.bin

if [ "$hmb" = 1 ]; then
	if rmmod nvme 2>/dev/null; then
		not_ok "nvme could be removed while hmb_trace uses it"
	fi
	check "hmb_trace registered no area after the reset" no_hmb_trace_area
	check "rmmod hmb_trace (nvme backend unsubscribed)" rmmod hmb_trace
fi
rmmod nvme && rmmod nvme_core
check "rmmod nvme nvme_core" nvme_gone

# The nvme backend with an area: nvme_hmb_fake.ko stands in for the patched
# nvme's API (same five functions, kernel/patches/test) with "fake0", a
# trace area the reference producer wrote (2 cores, 100 records each).
area=/sys/class/hmb_trace/fake0
action=/sys/module/nvme_hmb_fake/parameters/action
delivered_is() { [ "$(cat $area/delivered 2>/dev/null)" = "$1" ]; }
fits_made() { [ "$(cat $area/clock/fits 2>/dev/null || echo 0)" -gt 0 ]; }
no_fake_area() { [ ! -d $area ]; }
write_fails() { ! sh -c "echo $1 >$2" 2>/dev/null; }
if [ "$hmb" != 1 ] || [ ! -f /mnt/modules/nvme_hmb_fake.ko ]; then
	not_ok "no hmb_trace.ko or nvme_hmb_fake.ko: the backend with an area not run"
elif ! insmod /mnt/modules/nvme_hmb_fake.ko; then
	not_ok "insmod nvme_hmb_fake.ko"
elif ! insmod /mnt/modules/hmb_trace.ko; then
	not_ok "insmod hmb_trace.ko over nvme_hmb_fake.ko"
	rmmod nvme_hmb_fake
else
	# WQ_MEM_RECLAIM gives a workqueue its rescuer thread, named after it:
	# nvme-pci's reset path waits for work on hmb_trace_wq.
	check "hmb_trace_wq is WQ_MEM_RECLAIM (its rescuer thread hmb_trace exists)" \
		sh -c "cat /proc/[0-9]*/comm 2>/dev/null | grep -qx hmb_trace"
	check "late subscriber: the enabled area was replayed (fake0 registered)" \
		wait_for "[ \"\$(cat $area/state 2>/dev/null)\" = attached ]" 50
	# Nobody traces: no control request but the attach's one calibration
	# run for the crash dump's clock fit (at most 32 answered bursts of 4,
	# ~25 s, hmb_trace_clock.c), then none.
	check "nobody traces: the attach's calibration run ends (ctrl/sync idle)" \
		wait_for "[ \"\$(cat $area/ctrl/sync)\" = idle ]" 600
	calib=$(cat $area/ctrl/requests)
	sleep 2
	check "nobody traces: no control request after the calibration's $calib (at most 128; requests $(cat $area/ctrl/requests), sync $(cat $area/ctrl/sync))" \
		sh -c "[ $calib -le 128 ] && [ \"\$(cat $area/ctrl/requests)\" = $calib ] && [ \"\$(cat $area/ctrl/sync)\" = idle ]"
	echo always >$area/consume
	check "records delivered through the nvme backend: 100 per core" \
		wait_for 'delivered_is "100 100"' 50
	check "control channel available" [ "$(cat $area/ctrl/available)" = 1 ]
	check "control: STOP answered OK" sh -c "echo stop >$area/ctrl/tracing"
	check "control: RING_MODE stop answered SCT 7h SC 01h = unsupported (EOPNOTSUPP)" \
		write_fails stop $area/ctrl/ring_mode
	check "control: ECHO answered Invalid Opcode = unsupported" write_fails "1 0" $area/ctrl/echo
	check "control: failed counts both ($(cat $area/ctrl/failed))" [ "$(cat $area/ctrl/failed)" -ge 2 ]
	check "clock sync over the control command: fits made" wait_for fits_made 50
	echo reset >$action
	check "reset: the new generation is read (producer_gen 2)" \
		wait_for "[ \"\$(cat $area/producer_gen 2>/dev/null)\" = 2 ]" 50
	# DISABLING suspended the area, ENABLED on the same memory resumed it:
	# the consumer lived through the reset and counts it (a new
	# registration would know nothing of the old generation's tail).
	check "reset: DISABLING suspended the area, ENABLED on the same memory resumed it (resets $(cat $area/resets))" \
		[ "$(cat $area/resets)" = 1 ]
	check "after the reset: the new generation's 50 50 records delivered (150 150 in all)" \
		wait_for 'delivered_is "150 150"' 50
	# DISABLING took a crash dump of the ending generation for
	# devcoredump (of the area's status device: the fake has no parent).
	# Everything was delivered, so it holds no record: per core
	# start_seq == end_seq == 100 (verify.sh reads the copy on the host).
	# The 20 resets below come within coredump_interval_s: no dump.
	check "reset: a crash dump for devcoredump (HMBTDUMP), saved and dismissed" \
		wait_for "save_coredump /mnt/coredump.bin" 50
	# 20 resets from a WQ_MEM_RECLAIM work (as nvme-pci's reset work),
	# each after 2000 records per core, while the drains and the clock
	# sync run: DISABLING must not wait for non-reclaim work (the
	# dmesg check below: check_flush_dependency() warns).
	check "20 resets from a WQ_MEM_RECLAIM work while draining" sh -c "echo resets >$action"
	# Resets closer together than a pass show as one (the consumer counts
	# those it saw): the last generation is what must be read.
	check "after 21 resets: the last generation is read (producer_gen $(cat $area/producer_gen 2>/dev/null), resets $(cat $area/resets 2>/dev/null))" \
		wait_for "[ \"\$(cat $area/producer_gen 2>/dev/null)\" = 22 ] && [ \"\$(cat $area/state 2>/dev/null)\" = attached ]" 100
	check "20 resets within coredump_interval_s: no other crash dump" \
		sh -c '! ls -d /sys/class/devcoredump/devcd* >/dev/null 2>&1'
	# A firmware that stops answering: its first command stays in
	# flight, every later one is refused (-EBUSY) as nvme-pci does; the
	# sync gives up after 10 silent bursts, once in the log, and starts
	# again only when tracing starts again.
	silent=/sys/module/nvme_hmb_fake/parameters/silent
	echo 1 >$silent
	echo traced >$area/consume
	echo always >$area/consume
	# shellcheck disable=SC2016 # evaluated by wait_for
	check "firmware silent: the clock sync stops (ctrl/sync: stopped: no answer)" \
		wait_for '[ "$(cat '$area'/ctrl/sync)" = "stopped: no answer" ]' 100
	check "firmware silent: one log line ($(dmesg | grep -c 'clock sync stopped'))" \
		[ "$(dmesg | grep -c 'fake0: clock sync stopped: no answer')" = 1 ]
	check "firmware silent: after the timeout nothing sent (timeouts $(cat $area/ctrl/timeouts), not_sent $(cat $area/ctrl/not_sent))" \
		sh -c "[ \"\$(cat $area/ctrl/not_sent)\" -gt 0 ] && [ \"\$(cat $area/ctrl/timeouts)\" -le 2 ]"
	r=$(cat $area/ctrl/requests)
	sleep 1
	check "firmware silent, sync stopped: no request in 1 s ($r, then $(cat $area/ctrl/requests))" \
		[ "$(cat $area/ctrl/requests)" = "$r" ]
	echo 0 >$silent
	f=$(cat $area/clock/fits)
	echo traced >$area/consume
	echo always >$area/consume
	check "tracing starts again: the sync runs and fits again ($(cat $area/ctrl/sync))" \
		wait_for "[ \"\$(cat $area/clock/fits)\" -gt $f ]" 100
	echo free >$action
	# FREEING forgets the area; hmb_trace's work unregisters it (a device
	# removal allocates, which a reset path must not).
	check "FREEING: the area is gone" wait_for no_fake_area 50
	check "rmmod hmb_trace, nvme_hmb_fake" sh -c "rmmod hmb_trace && rmmod nvme_hmb_fake"
fi

dmesg >/mnt/dmesg.txt
bad=$(grep -E 'WARNING:|BUG:|Oops|Call Trace|general protection' /mnt/dmesg.txt)
if [ -z "$bad" ]; then
	ok "dmesg: no WARNING, BUG, Oops or call trace"
else
	not_ok "dmesg: $bad"
fi
# A controller without the capability: the patched nvme says nothing new.
bad=$(grep -E 'nvme nvme[0-9]+: .*(HMB trace|host memory)' /mnt/dmesg.txt)
if [ -z "$bad" ]; then
	ok "dmesg: nvme0 logged no HMB or HMB trace message"
else
	not_ok "dmesg: $bad"
fi
grep -E 'nvme' /mnt/dmesg.txt | sed 's/^/dmesg: /'

[ "$fails" -eq 0 ]
