#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
# Tokenized printf end to end: the sample firmware (producer/printf/) runs,
# its trace area is made a crash dump, and hmbtrace-cmd decodes it with
# the dictionary built from the firmware's ELF (--dictionary), or with the
# dictionary the firmware embedded; a dictionary of another build, or a
# damaged one, is refused. retime --dictionary writes a capture that
# carries the file (the sample's run as a trace.dat: MAKE_CAPTURE,
# plugins/traceevent/make_printf_capture.py, on TEMPLATE.dat's formats).
# Usage: printf_trace_test.sh HMBTRACE_CMD SAMPLE_FW OTHER_FW AREA_DUMP \
#          MAKE_CAPTURE TEMPLATE.dat PYTHONPATH
set -euo pipefail
cmd=$1 fw=$2 other=$3 area_dump=$4 make_capture=$5 template=$6
export PYTHONPATH=$7
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The sites are in the ELF, not in what is loaded.
flags=$(readelf -SW "$fw" | sed -n 's/.*\] \.hmb_trace_printf *PROGBITS *[0-9a-f]* [0-9a-f]* [0-9a-f]* [0-9a-f]* *\([A-Z]*\) .*/\1/p')
[[ $flags != *A* ]] || fail ".hmb_trace_printf is loaded (flags $flags)"
if readelf -lW "$fw" | grep -q hmb_trace_printf; then fail ".hmb_trace_printf in a segment"; fi

# Not embedded: undecoded without the file, decoded with it.
"$fw" "$tmp/area"
"$area_dump" "$tmp/area" "$tmp/t.hmbdump"
"$cmd" report -i "$tmp/t.hmbdump" > "$tmp/plain.txt"
grep -q 'event_id=32768 (not in the dictionary)' "$tmp/plain.txt" || fail "decoded without a dictionary"
"$cmd" dict "$fw" -o "$tmp/fw.hmbdict" 2> "$tmp/dict.err"
id=$(sed -n 's/.*build id \([0-9a-f]*\)$/\1/p' "$tmp/dict.err")
[[ ${#id} == 40 ]] || fail "no build id in: $(cat "$tmp/dict.err")"
"$cmd" report -i "$tmp/t.hmbdump" --dictionary "$tmp/fw.hmbdict" > "$tmp/file.txt"
expect=(
	'seq=0 fw_ts=1000 printf_sample_sites_12: gc: victim=100 valid=0 '
	'seq=1 fw_ts=2000 printf_sample_sites_17: thermal: delta=-5 '
	'seq=2 fw_ts=3000 printf_sample_sites_27: erase block=0xdead0000 mask 10000000000 '
	'seq=7 fw_ts=8000 printf_sample_sites_17: thermal: delta=15 '
	'seq=8 fw_ts=9000 printf_sample_sites_27: erase block=0xdead0002 mask 40000000000 '
	'seq=9 fw_ts=10000 printf_sample_sites_32: idle '
)
for line in "${expect[@]}"; do
	grep -qF "$line" "$tmp/file.txt" || fail "report --dictionary lacks '$line'"
done
[[ $(grep -c 'printf_sample_sites_' "$tmp/file.txt") == 10 ]] || fail "not 10 decoded records"
"$cmd" stat -i "$tmp/t.hmbdump" --dictionary "$tmp/fw.hmbdict" > "$tmp/stat.txt"
grep -q 'printf_sample_sites_12' "$tmp/stat.txt" || fail "stat --dictionary: no event names"
"$cmd" export -i "$tmp/t.hmbdump" --dictionary "$tmp/fw.hmbdict" -o "$tmp/t.pftrace" 2>/dev/null
grep -qa 'victim' "$tmp/t.pftrace" || fail "export --dictionary: no decoded field"

# retime --dictionary: the retimed capture carries the file's events.
python3 "$make_capture" "$tmp/t.hmbdump" "$template" "$tmp/t.dat" > /dev/null
"$cmd" retime -q -i "$tmp/t.dat" -o "$tmp/plain-retimed.dat"
"$cmd" report -i "$tmp/plain-retimed.dat" > "$tmp/plain-retimed.txt"
if grep -q printf_sample_sites_ "$tmp/plain-retimed.txt"; then fail "retime without a file decoded"; fi
"$cmd" retime -q -i "$tmp/t.dat" -o "$tmp/retimed.dat" --dictionary "$tmp/fw.hmbdict"
"$cmd" report -i "$tmp/retimed.dat" > "$tmp/retimed.txt"
for line in "${expect[@]}"; do
	grep -qF "$line" "$tmp/retimed.txt" || fail "retime --dictionary: its report lacks '$line'"
done
[[ $(grep -c 'printf_sample_sites_' "$tmp/retimed.txt") == 10 ]] || fail "retimed: not 10 decoded records"

# Embedded: the trace describes itself.
"$cmd" dict --raw -q "$fw" -o "$tmp/fw.raw"
"$fw" "$tmp/area2" "$tmp/fw.raw"
"$area_dump" "$tmp/area2" "$tmp/t2.hmbdump"
"$cmd" report -i "$tmp/t2.hmbdump" > "$tmp/embedded.txt"
for line in "${expect[@]}"; do
	grep -qF "$line" "$tmp/embedded.txt" || fail "embedded report lacks '$line'"
done

# Another build's dictionary: refused, both ids printed.
"$cmd" dict "$other" -o "$tmp/other.hmbdict" 2> "$tmp/other.err"
other_id=$(sed -n 's/.*build id \([0-9a-f]*\)$/\1/p' "$tmp/other.err")
[[ $other_id != "$id" ]] || fail "the other build has the same build id"
for sub in report stat "export -o $tmp/x.pftrace" "retime -o $tmp/x.dat"; do
	in=$tmp/t.hmbdump
	[[ $sub != retime* ]] || in=$tmp/t.dat  # retime works on captures only
	rc=0
	"$cmd" $sub -i "$in" --dictionary "$tmp/other.hmbdict" \
		> /dev/null 2> "$tmp/refused.err" || rc=$?
	[[ $rc == 1 ]] || fail "$sub: a dictionary of another build: exit $rc"
	grep -q "build id $other_id, the trace's (dev 0, producer_gen 1) is $id: refused" \
		"$tmp/refused.err" || fail "$sub: refusal without both ids: $(cat "$tmp/refused.err")"
done

# A damaged dictionary file.
head -c 40 "$tmp/fw.hmbdict" > "$tmp/cut.hmbdict"
rc=0
"$cmd" report -i "$tmp/t.hmbdump" --dictionary "$tmp/cut.hmbdict" > /dev/null 2> "$tmp/cut.err" || rc=$?
[[ $rc == 1 ]] && grep -q 'not a dictionary file' "$tmp/cut.err" || fail "cut dictionary: $(cat "$tmp/cut.err")"
echo "ok: printf trace decoded with --dictionary, retime --dictionary and embedded; other build and damaged file refused"
