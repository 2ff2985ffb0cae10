#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# demo, host side: hmb-fwsim plays firmware on 4 cores, with a clock of its
# own (50 ppm fast) and a control channel (a mailbox), so the module fits
# firmware time to the host's; the guest records the hmb instance with
# trace-cmd; here we print an excerpt of the report, the same records
# decoded by plugin_hmb.so (with their converted time), hmbtrace-cmd stat
# and a Perfetto export of the capture, and the loss summary, next to what
# the firmware says it produced.
set -uo pipefail
# shellcheck source=mock/qemu/scenario-lib.sh
source "$HMBQ_LIB"

hmbq_mailbox
hmbq_fwsim_start --cores 4 --rate 2000 --duration 3 --seed 42 --quiet \
	--drift-ppm 50 --mailbox "$HMBQ_MAILBOX" --truth "$HMBQ_SHARE/truth.json"
hmbq_boot
hmbq_fwsim_stop

r=$HMBQ_SHARE/report.txt
if [[ "$HMBQ_GUEST_STATUS" != 0 || ! -s $r ]]; then
	echo "demo: the guest did not produce a report; see $HMBQ_SHARE/console.log"
	exit 1
fi
echo
echo "==== trace-cmd report (guest), first firmware events"
grep -m 3 ' hmb_state: ' "$r"
grep -m 12 ' hmb_record: ' "$r"
echo "   ... $(grep -c ' hmb_record: ' "$r") hmb_record, $(grep -c ' hmb_lost: ' "$r") hmb_lost," \
	"$(grep -c ' hmb_dict: ' "$r") hmb_dict events in $HMBQ_SHARE/demo.dat"
echo
echo "==== the same capture, trace-cmd report with plugin_hmb.so (host), decoded"
if hmbq_decoded_report demo.dat report-decoded.txt; then
	grep -m 1 'dictionary complete' "$HMBQ_SHARE/report-decoded.txt"
	awk '/dictionary complete/ { on = 1; next } on && / hmb_record: / && !/event_id=/' \
		"$HMBQ_SHARE/report-decoded.txt" | head -n 12
fi
cmd=$(hmbq_build_dir)/tools/hmbtrace-cmd/hmbtrace-cmd
if [[ -x "$cmd" ]]; then
	echo
	echo "==== hmbtrace-cmd stat -i demo.dat (host)"
	"$cmd" stat -i "$HMBQ_SHARE/demo.dat"
	echo
	echo "==== hmbtrace-cmd export -i demo.dat -o demo.pftrace (host)"
	if "$cmd" export -q -i "$HMBQ_SHARE/demo.dat" -o "$HMBQ_SHARE/demo.pftrace"; then
		echo "Perfetto trace: $(realpath "$HMBQ_SHARE/demo.pftrace")"
		echo "   open https://ui.perfetto.dev, then \"Open trace file\" and pick it"
		echo "   (or drag it onto the page); the trace stays in the browser."
	fi
fi
echo
echo "==== loss summary (module status, per firmware core)"
cat "$HMBQ_SHARE/status.txt"
echo
echo "==== what the firmware produced (hmb-fwsim ground truth)"
python3 - "$HMBQ_SHARE/truth.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
life = t["lives"][-1]
print("produced     " + " ".join(str(c["produced"]) for c in life["cores"]))
PY
