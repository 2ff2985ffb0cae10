#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Tokenized printf in trace-cmd report: the sample firmware
# (producer/printf/printf_sample_fw, its printf sites left out of its
# image) runs, its trace area becomes a trace.dat as hmb_trace.ko would
# have republished it (make_printf_capture.py, on the formats of
# tests/data/clock-small.dat), and real `trace-cmd report` with
# plugin_hmb.so prints it:
#   - without a dictionary file: every record undecoded, with a mark that
#     says how to decode it;
#   - with -O hmb:dictionary=FILE (hmbtrace-cmd dict of the ELF), or
#     $HMB_TRACE_DICTIONARY (KernelShark's way): every record decoded;
#   - with the file of another build: refused, both build ids printed,
#     records undecoded; a damaged file: said, on stderr and in the report;
#   - the firmware embedding the blob: decoded with no file.
# Usage: plugin_hmb_printf_test.sh TRACE_CMD PLUGIN_DIR HMBTRACE_CMD \
#          SAMPLE_FW OTHER_FW AREA_DUMP MAKE_CAPTURE TEMPLATE.dat PYTHONPATH
# $PLUGIN_PRELOAD, if set, is preloaded into trace-cmd only (ASan).
set -euo pipefail
trace_cmd=$1 plugin_dir=$2 cmd=$3 fw=$4 other=$5 area_dump=$6 make_capture=$7 template=$8
export PYTHONPATH=$9
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export HOME=$tmp  # no plugin_hmb.so of ~/.local overrides ours
export TRACEEVENT_PLUGIN_DIR=$plugin_dir
unset HMB_TRACE_DICTIONARY
fail() { echo "FAIL: $*" >&2; exit 1; }

report() {
	if [[ -n ${PLUGIN_PRELOAD:-} ]]; then
		LD_PRELOAD=$PLUGIN_PRELOAD ASAN_OPTIONS=detect_leaks=0 "$trace_cmd" report "$@"
	else
		"$trace_cmd" report "$@"
	fi
}

capture() {  # capture OUT.dat [DICTIONARY.raw]: the sample firmware's run as a trace.dat
	"$fw" "$tmp/area" ${2:+"$2"}
	"$area_dump" "$tmp/area" "$tmp/area.hmbdump"
	python3 "$make_capture" "$tmp/area.hmbdump" "$template" "$1" > /dev/null
}

expect=(
	'seq=0 fw_ts=1000 printf_sample_sites_12: gc: victim=100 valid=0'
	'seq=1 fw_ts=2000 printf_sample_sites_17: thermal: delta=-5'
	'seq=2 fw_ts=3000 printf_sample_sites_27: erase block=0xdead0000 mask 10000000000'
	'seq=7 fw_ts=8000 printf_sample_sites_17: thermal: delta=15'
	'seq=8 fw_ts=9000 printf_sample_sites_27: erase block=0xdead0002 mask 40000000000'
	'seq=9 fw_ts=10000 printf_sample_sites_32: idle'
)
decoded() {  # decoded REPORT WHAT: all 10 records decoded as expected
	local line
	for line in "${expect[@]}"; do
		grep -qF "$line" "$1" || fail "$2: no '$line'"
	done
	[[ $(grep -c 'hmb_record:.*printf_sample_sites_' "$1") == 10 ]] ||
		fail "$2: not 10 decoded records"
	echo "ok: $2"
}

capture "$tmp/t.dat"
"$cmd" dict "$fw" -o "$tmp/fw.hmbdict" 2> "$tmp/dict.err"
id=$(sed -n 's/.*build id \([0-9a-f]*\)$/\1/p' "$tmp/dict.err")
[[ ${#id} == 40 ]] || fail "no build id in: $(cat "$tmp/dict.err")"
grep -q "hmb_state:.* build_id=$id " <(report -i "$tmp/t.dat" 2>/dev/null) ||
	fail "the capture's hmb_state does not carry the firmware's build id $id"

# No file: undecoded, and the line says why and what to do.
report -i "$tmp/t.dat" > "$tmp/plain.txt" 2> "$tmp/plain.err"
[[ ! -s $tmp/plain.err ]] || fail "stderr without a file: $(cat "$tmp/plain.err")"
[[ $(grep -c "hmb_record:.*unknown event 327[0-9][0-9] .*\[not in the trace's dictionary: printf sites kept in a file? -O hmb:dictionary=FILE\]" \
	"$tmp/plain.txt") == 10 ]] || fail "without a file: not 10 records marked undecoded"
if grep -q printf_sample_sites_ "$tmp/plain.txt"; then fail "decoded without a file"; fi
echo "ok: without a dictionary file, undecoded and marked"

report -O "hmb:dictionary=$tmp/fw.hmbdict" -i "$tmp/t.dat" > "$tmp/file.txt" 2> "$tmp/file.err"
[[ ! -s $tmp/file.err ]] || fail "stderr with the file: $(cat "$tmp/file.err")"
grep -qF 'dictionary complete: 4 events' "$tmp/file.txt" || fail "the file's 4 events not merged"
decoded "$tmp/file.txt" "-O hmb:dictionary=FILE decodes"
HMB_TRACE_DICTIONARY=$tmp/fw.hmbdict report -i "$tmp/t.dat" > "$tmp/env.txt" 2>/dev/null
decoded "$tmp/env.txt" "\$HMB_TRACE_DICTIONARY decodes"

# Another build's file: refused with both ids, nothing decoded.
"$cmd" dict "$other" -o "$tmp/other.hmbdict" 2> "$tmp/other.err"
other_id=$(sed -n 's/.*build id \([0-9a-f]*\)$/\1/p' "$tmp/other.err")
[[ $other_id != "$id" && ${#other_id} == 40 ]] || fail "the other build's id: '$other_id'"
report -O "hmb:dictionary=$tmp/other.hmbdict" -i "$tmp/t.dat" > "$tmp/other.txt" 2>/dev/null
grep -q "hmb_state:.*\[dictionary file $tmp/other.hmbdict is of build id $other_id, the trace's (dev 0, producer_gen 1) is $id: refused" \
	"$tmp/other.txt" || fail "another build's file: no refusal with both ids"
if grep -q printf_sample_sites_ "$tmp/other.txt"; then fail "decoded with another build's file"; fi
[[ $(grep -c "hmb_record:.*unknown event .*the dictionary file is of another build: refused" "$tmp/other.txt") == 10 ]] ||
	fail "another build's file: records not marked"
echo "ok: another build's dictionary file refused, both ids printed"

# A damaged file: said on stderr and in the report; records undecoded.
head -c 40 "$tmp/fw.hmbdict" > "$tmp/cut.hmbdict"
report -O "hmb:dictionary=$tmp/cut.hmbdict" -i "$tmp/t.dat" > "$tmp/cut.txt" 2> "$tmp/cut.err"
grep -qF "hmb: dictionary file not used: $tmp/cut.hmbdict: not a dictionary file" "$tmp/cut.err" ||
	fail "damaged file: stderr says $(cat "$tmp/cut.err")"
[[ $(grep -c "dictionary file not used: $tmp/cut.hmbdict" "$tmp/cut.txt") == 1 ]] ||
	fail "damaged file: not said once in the report"
if grep -q printf_sample_sites_ "$tmp/cut.txt"; then fail "decoded with a damaged file"; fi
echo "ok: a damaged dictionary file is said and not used"

# The blob embedded: the trace describes itself.
"$cmd" dict --raw -q "$fw" -o "$tmp/fw.raw"
capture "$tmp/embedded.dat" "$tmp/fw.raw"
report -i "$tmp/embedded.dat" > "$tmp/embedded.txt" 2>/dev/null
decoded "$tmp/embedded.txt" "the embedded dictionary decodes with no file"
