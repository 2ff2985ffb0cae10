#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# What a user sees: host trace-cmd report, with plugin_hmb.so found through
# $TRACEEVENT_PLUGIN_DIR, on a small real capture of the QEMU guest
# (tests/data/record-small.dat, made by tests/data/make_fixture.py): records
# before the first complete dictionary print as hex, the dictionary's
# completion is announced, every record after it is decoded, and
# -O hmb:hex=1 appends the raw payload; and on tests/data/clock-small.dat
# (synthetic, with the module's hmb_clock events: make_clock_capture.py),
# every record says its converted firmware time or why it has none, the
# clock fits read as offset/rate/bound, and -O hmb:fw_time=0 turns the
# converted time off.
# Usage: plugin_hmb_report_test.sh TRACE_CMD PLUGIN_DIR FIXTURE.dat CLOCK_FIXTURE.dat
# $PLUGIN_PRELOAD, if set, is preloaded into trace-cmd only: the sanitizer
# runtime that an ASan-built plugin needs.
set -euo pipefail

trace_cmd=$1 plugin_dir=$2 fixture=$3 clock_fixture=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A plugin_hmb.so in ~/.local/lib/traceevent/plugins would override ours.
export HOME=$tmp
export TRACEEVENT_PLUGIN_DIR=$plugin_dir

report() {
	if [[ -n ${PLUGIN_PRELOAD:-} ]]; then
		LD_PRELOAD=$PLUGIN_PRELOAD ASAN_OPTIONS=detect_leaks=0 \
			"$trace_cmd" report "$@"
	else
		"$trace_cmd" report "$@"
	fi
}

fail=0
expect() {  # expect FILE TEXT: TEXT is a substring of some line of FILE
	if grep -qF -- "$2" "$1"; then
		echo "ok: $2"
	else
		echo "FAIL: '$2' not in $(basename "$1")" >&2
		fail=1
	fi
}

report -i "$fixture" >"$tmp/report.txt" 2>"$tmp/report.err"
if [[ -s $tmp/report.err ]]; then
	echo "FAIL: trace-cmd report wrote to stderr:" >&2
	cat "$tmp/report.err" >&2
	fail=1
fi

# Before the dictionary: the kernel's own rendering.
expect "$tmp/report.txt" "dev=0 core=0 seq=2997 fw_ts=9655378033 event_id=1 len=21 payload=01 00 1e 04 02 01 00 00 00 e8 2a cd 26 00 00 00 00 3f 00 00 00"
expect "$tmp/report.txt" "dev=0 producer_gen=1 build_id=5b9b38b82b841265842dfd3b20dfd149a59ed6ea total_len=3888 offset=3072 len=816 [dictionary complete: 10 events]"
# After it: event names and fields from the firmware's dictionary.
expect "$tmp/report.txt" "dev=0 core=1 seq=2997 fw_ts=9655377612 nand_program: die=5 plane=3 block=176 page=179 latency=807868"
expect "$tmp/report.txt" "dev=0 core=3 seq=2997 fw_ts=9655387190 cmd_complete: qid=8 cid=1032 status=SUCCESS latency=97249"
undecoded=$(awk '/dictionary complete/ { done = 1 } done && /hmb_record:/ && /event_id=/' "$tmp/report.txt" | wc -l)
decoded=$(awk '/dictionary complete/ { done = 1 } done && /hmb_record:/' "$tmp/report.txt" | wc -l)
if ((undecoded != 0 || decoded < 100)); then
	echo "FAIL: after the dictionary, $undecoded of $decoded records undecoded" >&2
	fail=1
else
	echo "ok: all $decoded records after the dictionary decoded"
fi

report -O hmb:hex=1 -i "$fixture" >"$tmp/hex.txt" 2>/dev/null
expect "$tmp/hex.txt" "nand_program: die=5 plane=3 block=176 page=179 latency=807868 payload=0503b000b300bc530c00"
# A capture without hmb_clock in its formats has no converted time to show.
if grep -q "fw_time=" "$tmp/report.txt"; then
	echo "FAIL: fw_time= in the report of a capture without hmb_clock" >&2
	fail=1
fi

report -i "$clock_fixture" >"$tmp/clock.txt" 2>"$tmp/clock.err"
if [[ -s $tmp/clock.err ]]; then
	echo "FAIL: trace-cmd report wrote to stderr:" >&2
	cat "$tmp/clock.err" >&2
	fail=1
fi
expect "$tmp/clock.txt" "dev=0 core=0 seq=0 fw_ts=8998999950 cmd_complete: qid=1 cid=966 status=SUCCESS latency=28987 fw_time=? (no clock fit)"
expect "$tmp/clock.txt" "hmb_clock:            dev=0 producer_gen=1 offset=-7.999550021 ns_per_tick=0.999950002 rate=+50.000ppm bound=3us slope_err=1.000ppm samples=16 window=0.900s rtt_min=3us"
expect "$tmp/clock.txt" "dev=0 core=0 seq=3 fw_ts=9001700086 nand_read: die=1 plane=2 block=1205 page=317 latency=83640 fw_time=1.001700000 ±3us"
expect "$tmp/clock.txt" "rtt_min=3us stale"
expect "$tmp/clock.txt" "dev=0 core=0 seq=5 fw_ts=9100105006 nand_read: die=1 plane=0 block=1009 page=487 latency=54807 fw_time=1.100100000 ±3us (stale fit)"
expect "$tmp/clock.txt" "dev=0 core=0 seq=0 fw_ts=200011 cmd_complete: qid=1 cid=971 status=SUCCESS latency=23848 fw_time=? (no clock fit of producer_gen 2)"
expect "$tmp/clock.txt" "dev=0 core=1 seq=0 fw_ts=100005001 cmd_fetch: qid=1 cid=1018 opc=read nsid=1 slba=284535352 nlb=31 fw_time=1.299999999 ±7us"
records=$(grep -c "hmb_record:" "$tmp/clock.txt")
timed=$(grep "hmb_record:" "$tmp/clock.txt" | grep -c " fw_time=")
if ((records != 11 || timed != records)); then
	echo "FAIL: $timed of $records records (11 expected) say fw_time" >&2
	fail=1
else
	echo "ok: every record of the clock capture says fw_time"
fi
report -O hmb:fw_time=0 -i "$clock_fixture" >"$tmp/off.txt" 2>/dev/null
if grep -q "fw_time=" "$tmp/off.txt"; then
	echo "FAIL: -O hmb:fw_time=0 left fw_time= in the report" >&2
	fail=1
else
	echo "ok: -O hmb:fw_time=0 turns fw_time off"
fi
expect "$tmp/off.txt" "nand_read: die=1 plane=2 block=1205 page=317 latency=83640"

# The fixture's fits are for "local" (no hmb_clock.clock: a module before
# per-clock fits): told the capture is on mono, the plugin converts nothing.
report -O hmb:clock=mono -i "$clock_fixture" >"$tmp/mono.txt" 2>/dev/null
expect "$tmp/mono.txt" "nand_read: die=1 plane=2 block=1205 page=317 latency=83640 fw_time=? (no clock fit for the capture's trace clock)"
if grep "hmb_record:" "$tmp/mono.txt" | grep -q "fw_time=[0-9]"; then
	echo "FAIL: -O hmb:clock=mono converted a record with a local fit" >&2
	fail=1
else
	echo "ok: -O hmb:clock=mono converts no record with the local fits"
fi

exit $fail
