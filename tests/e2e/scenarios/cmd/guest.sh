#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# cmd, guest side: the live subcommands of hmbtrace-cmd on the real
# instance. status (text and --json) before anything flows; a mixed enable
# state of the hmb events (hmb_lost and hmb_dict off) to see that stream
# puts it back; `hmbtrace-cmd stream --duration` while hmb-fwsim (host)
# produces a known count per core, with status in the middle and
# `hmbtrace-cmd marker` written mid-stream; status at the end; a second
# stream ended by SIGINT; `hmbtrace-cmd record --duration 3`; the error of
# a missing status directory.
# host.sh checks it all against the truth (tests/e2e/verify_stream.py).
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

C=/usr/bin/hmbtrace-cmd
dur=$(cat /mnt/stream-duration 2>/dev/null || echo 12)

# enable_state FILE: "event value" for every hmb event of the instance.
enable_state() {
	for e in "$I"/events/hmb/*/enable; do
		n=${e%/enable}
		echo "${n##*/} $(cat "$e")"
	done >"$1"
}

# wait_enabled SECONDS: until stream has enabled hmb_lost (off before it).
wait_enabled() {
	n=0
	while [ "$(cat "$I/events/hmb/hmb_lost/enable")" != 1 ]; do
		n=$((n + 1))
		[ "$n" -gt $(($1 * 10)) ] && return 1
		sleep 0.1
	done
	return 0
}

setup 16384
[ -x "$C" ] || { fail "no $C in the initramfs"; finish; }

step "hmbtrace-cmd status (before producing)"
$C status >/mnt/status-start.txt 2>&1 || fail "hmbtrace-cmd status (start)"
cat /mnt/status-start.txt
$C status --json >/mnt/status-start.json 2>/mnt/status-start.err || fail "hmbtrace-cmd status --json (start)"

echo 0 >"$I/events/hmb/hmb_lost/enable" || fail "disable hmb_lost"
echo 0 >"$I/events/hmb/hmb_dict/enable" || fail "disable hmb_dict"
enable_state /mnt/enable-before.txt
cat /mnt/enable-before.txt

step "hmbtrace-cmd stream --duration $dur"
$C stream --duration "$dur" >/tmp/stream.txt 2>/mnt/stream.err &
spid=$!
wait_enabled 30 || fail "stream did not enable the hmb events within 30 s"
enable_state /mnt/enable-during.txt
touch /mnt/ready
sleep 1
# The marker first: two status runs can take seconds under a loaded TCG
# host, and the marker must land while the firmware still produces.
step "hmbtrace-cmd marker"
$C marker HMBCMD marker mid-stream || fail "hmbtrace-cmd marker"
step "hmbtrace-cmd status (mid-stream)"
$C status >/mnt/status-mid.txt 2>&1 || fail "hmbtrace-cmd status (mid)"
cat /mnt/status-mid.txt
$C status --json >/mnt/status-mid.json 2>&1 || fail "hmbtrace-cmd status --json (mid)"
wait_truth 120
step "producer finished; waiting for stream to end"
wait "$spid"
echo "$?" >/mnt/stream.rc
cp /tmp/stream.txt /mnt/stream.txt || fail "copy stream.txt"
rm -f /tmp/stream.txt
cat /mnt/stream.err
enable_state /mnt/enable-after.txt

step "hmbtrace-cmd status (end)"
$C status >/mnt/status-end.txt 2>&1 || fail "hmbtrace-cmd status (end)"
cat /mnt/status-end.txt
$C status --json >/mnt/status-end.json 2>/mnt/status-end.err || fail "hmbtrace-cmd status --json (end)"

step "hmbtrace-cmd stream, ended by SIGINT"
$C stream >/tmp/stream-sigint.txt 2>/mnt/stream-sigint.err &
spid=$!
wait_enabled 30 || fail "second stream did not enable the hmb events"
sleep 1
kill -INT "$spid"
wait "$spid"
echo "$?" >/mnt/stream-sigint.rc
wc -l </tmp/stream-sigint.txt >/mnt/stream-sigint.lines
rm -f /tmp/stream-sigint.txt
enable_state /mnt/enable-after-sigint.txt
cat /mnt/stream-sigint.err

# record runs after production is over (stream must see every record):
# its capture holds the module's periodic hmb_state/hmb_dict, which only
# -e hmb after -B hmb records. Written to /tmp: trace-cmd's per-CPU files
# do not go to 9p.
step "hmbtrace-cmd record --duration 3"
$C record -o /tmp/cmd-record.dat --duration 3 >/mnt/cmd-record.out 2>/mnt/cmd-record.err
echo "$?" >/mnt/cmd-record.rc
cat /mnt/cmd-record.err
cp /tmp/cmd-record.dat /mnt/cmd-record.dat || fail "copy cmd-record.dat"
rm -f /tmp/cmd-record.dat /tmp/cmd-record.dat.cpu*

step "hmbtrace-cmd status with no module status directory"
$C status --sysfs /nonexistent >/dev/null 2>/mnt/status-notloaded.err
echo "$?" >/mnt/status-notloaded.rc
cat /mnt/status-notloaded.err
finish
