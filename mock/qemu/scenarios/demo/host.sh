#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# demo, host side: the guest gets QEMU's emulated NVMe disk; hmb-fwsim
# follows QEMU's log of that disk's commands (--follow-qemu-nvme) and, as
# its firmware, writes cmd_fetch / NAND / cmd_complete records for those
# very commands, on a clock of its own (50 ppm fast) fitted by the module
# over the control channel (a mailbox). The guest records with
# `hmbtrace-cmd record` while dd reads and writes the disk between two
# trace_marker lines (guest.sh). Here: what plain trace-cmd shows, one
# joined command in one timeline with a marker, the slowest command's
# split, the per-opcode split, the loss against the simulator's truth and
# the Perfetto export. Each step prints one line saying what it shows;
# details go to files in $HMBQ_SHARE. Checks (the demo fails without
# them): a marker and a joined command in the timeline, and per core
# delivered + lost <= produced (records written after the capture ended
# are the difference).
set -uo pipefail
# shellcheck source=mock/qemu/scenario-lib.sh
source "$HMBQ_LIB"

cmd=$(hmbq_build_dir)/tools/hmbtrace-cmd/hmbtrace-cmd
[[ -x "$cmd" ]] || { echo "demo: no $cmd: build it (scripts/build.sh demo)"; exit 1; }
hmbq_mailbox
hmbq_nvme
hmbq_fwsim_start --cores 2 --clock-hz 1000000000 --drift-ppm 50 --seed 42 \
	--mailbox "$HMBQ_MAILBOX" --follow-qemu-nvme "$HMBQ_NVME_TRACE" --quiet \
	--truth "$HMBQ_SHARE/truth.json" || { echo "demo: hmb-fwsim did not start"; exit 1; }
HMBQ_EXTRAS=("$cmd:/usr/bin/hmbtrace-cmd")
HMBQ_TIMEOUT=$((HMBQ_TIMEOUT > 240 ? HMBQ_TIMEOUT : 240))
# shellcheck disable=SC2119 # no extra run-guest.sh arguments
hmbq_boot
hmbq_fwsim_stop

d=$HMBQ_SHARE
dat=$d/demo.dat
if [[ "$HMBQ_GUEST_STATUS" != 0 || ! -s $dat ]]; then
	echo "demo: the guest did not record a capture; see $d/console.log"
	exit 1
fi
step() { printf '\n==== %s\n     -> %s\n' "$1" "$2"; }
fail() {
	echo "demo: FAIL: $*"
	HMBQ_FAILURES=$((HMBQ_FAILURES + 1))
}

# The files every step reads: the merged timeline, the joined commands.
"$cmd" report -i "$dat" >"$d/report.txt" 2>"$d/report.err" || fail "hmbtrace-cmd report"
"$cmd" stat -i "$dat" --commands-json "$d/commands.json" >"$d/stat.txt" 2>&1 ||
	fail "hmbtrace-cmd stat"
trace-cmd report -N -i "$dat" >"$d/report-raw.txt" 2>/dev/null || true

step "the capture: $(cat "$d/demo-workload.txt"), recorded in the guest by hmbtrace-cmd record" \
	"$(grep -c ' nvme_setup_cmd: ' "$d/report-raw.txt") host NVMe commands and $(grep -c ' hmb_record: ' \
		"$d/report-raw.txt") firmware records in one trace.dat: $dat"

step "trace-cmd report without our plugin: a firmware record is an ordinary ftrace event, its payload raw hex" \
	"any trace-cmd reads the capture; plugin_hmb.so or hmbtrace-cmd decode it (next steps)"
grep -m 2 ' hmb_record: ' "$d/report-raw.txt" | cut -c1-150

# The first joined command after the first marker, and the slowest one.
read -r marker_line < <(grep -m 1 ' MARKER ' "$d/report.txt")
marker_s=${marker_line%% *}
read -r first slowest < <(python3 - "$d/commands.json" "${marker_s:-0}" <<'PY'
import json, sys
cmds = [c for c in json.load(open(sys.argv[1]))["commands"]
        if c["fetch"] and c["complete"] and c["complete_ns"] and c["qid"] != 0]
after = [c for c in cmds if c["setup_ns"] >= float(sys.argv[2]) * 1e9] or cmds
if not cmds:
    print("- -")
else:
    first = min(after, key=lambda c: c["setup_ns"])
    slow = max(cmds, key=lambda c: c["complete_ns"] - c["setup_ns"])
    print("%d:%d %d:%d" % (first["qid"], first["cid"], slow["qid"], slow["cid"]))
PY
)

# cmd_block FILE N: the Nth command block of `report --cmd` (a qid:cid is
# reused: it may match several commands); N=max: the one of largest total.
cmd_block() {
	awk -v want="$2" '
		/^nvme/ { n++ }
		{ block[n] = block[n] $0 "\n" }
		/^  split:/ { t = $NF; sub(/us$/, "", t); if (t + 0 > max) { max = t + 0; slow = n } }
		END { printf "%s", block[want == "max" ? slow : want] }' "$1"
}

step "one timeline: a trace_marker, host command $first's setup, the firmware's fetch / NAND / complete at converted time ± bound, the host completion" \
	"markers, host events and firmware records share the host's trace clock (firmware time converted by the module's clock fit)"
if [[ $first == - || -z $marker_line ]]; then
	fail "no marker or no joined command in the capture (see $d/report.txt, $d/stat.txt)"
else
	"$cmd" report -i "$dat" --cmd "$first" >"$d/cmd-first.txt" 2>&1 || fail "report --cmd $first"
	cmd_block "$d/cmd-first.txt" 1 | sed -n 1p
	echo "  $marker_line"
	cmd_block "$d/cmd-first.txt" 1 | sed -n '2,$p' | head -n 9
	echo "  (fw * = this command's records, fw = its core meanwhile; whole story: $d/cmd-first.txt)"
fi

step "hmbtrace-cmd report --cmd $slowest: the slowest command, where its time went" \
	"host submit -> firmware fetch, firmware fetch -> completion, completion -> host: the split a firmware engineer asks for"
if [[ $slowest != - ]]; then
	"$cmd" report -i "$dat" --cmd "$slowest" >"$d/cmd-slowest.txt" 2>&1 || fail "report --cmd $slowest"
	cmd_block "$d/cmd-slowest.txt" max | grep -E '^nvme|host  |fw  \*|split:'
fi

step "hmbtrace-cmd stat: per-opcode latency split of every joined command" \
	"where host I/O time goes, per opcode: host queue -> firmware -> completion delivery (full stat: $d/stat.txt)"
grep -m 1 '^  host commands' "$d/stat.txt"
sed -n '/^    opcode  /,/^  [^ ]/p' "$d/stat.txt" | grep '^    '

step "loss: the module's counters against what the firmware says it wrote (hmb-fwsim truth)" \
	"every record the firmware produced was delivered or counted lost, per core and why"
python3 - "$d/truth.json" "$d/status.txt" <<'PY' || fail "loss summary"
import json, sys
life = json.load(open(sys.argv[1]))["lives"][-1]
status = {}
for line in open(sys.argv[2]):
    k, *v = line.split()
    status[k] = [int(x) for x in v]
ok = True
for c in life["cores"]:
    k = c["core"]
    lost = {r: status["lost_" + r][k] for r in ("overwritten", "torn", "invalid", "reset")}
    rest = c["produced"] - status["delivered"][k] - sum(lost.values())
    print("  core %d: produced %d, delivered %d, lost %d (%s)%s" % (
        k, c["produced"], status["delivered"][k], sum(lost.values()),
        ", ".join("%s %d" % kv for kv in lost.items()),
        ", %d written after the capture ended" % rest if rest else ""))
    ok &= rest >= 0
sys.exit(0 if ok else 1)
PY

step "HTML report: hmbtrace-cmd stat --html" \
	"one self-contained file for a browser with no network: the split per opcode (reads and writes), latency histograms, activity per core, the slowest commands with their stories"
if "$cmd" stat -i "$dat" --html "$d/demo.html" >/dev/null 2>"$d/html.err"; then
	# The split of reads and writes is what the page is for: the data it
	# draws must have both opcodes.
	for op in read write; do
		grep -q "\"opcode\":\"$op\"" "$d/demo.html" ||
			fail "the HTML report has no $op split (see $d/demo.html)"
	done
	echo "  open in any browser: $(realpath "$d/demo.html") ($(($(stat -c %s "$d/demo.html") / 1024)) KiB)"
else
	fail "hmbtrace-cmd stat --html (see $d/html.err)"
fi

step "Perfetto: hmbtrace-cmd export" \
	"the same story in Perfetto: group \"hmb dev 0\" (a track per firmware core: command and NAND slices), group \"nvme0\" (a track per queue: a slice per host command), track \"trace_marker\"; an arrow (flow) from each host command to the firmware fetch that served it"
if "$cmd" export -i "$dat" -o "$d/demo.pftrace" >"$d/export.txt" 2>&1; then
	sed -n 's|^[^:]*: ||p' "$d/export.txt" | grep -E 'records|flows' | sed 's/^/  /'
	echo "  open https://ui.perfetto.dev, \"Open trace file\": $(realpath "$d/demo.pftrace")"
else
	fail "hmbtrace-cmd export (see $d/export.txt)"
fi
hmbq_finish
