#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# cmd: hmbtrace-cmd's live subcommands (status, marker, stream) in the
# guest on the real instance, while hmb-fwsim produces E2E_CMD_COUNT
# records on each of 4 cores at E2E_CMD_RATE records/s. Checks
# (tests/e2e/verify_stream.py): stream printed every record of every core
# exactly once, in sequence order per core, all decoded, with the
# mid-stream marker line; its summary agrees; status --json at the end has
# delivered = the truth's produced per core and no loss; the hmb events'
# enable state is restored after stream (ended by --duration and by
# SIGINT); the not-loaded error names the fix. `hmbtrace-cmd record` runs
# after production is over (stream consumes every record), so its capture
# holds the module's periodic hmb_state/hmb_dict and no records: checked
# are its exit status and summary, that the capture holds those events
# (only `-e hmb` after `-B hmb` records them), decodes cleanly, and that
# stat --json says seq_check agrees and 0 lost on every core it has.
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

rate=${E2E_CMD_RATE:-2000}
count=${E2E_CMD_COUNT:-8000}
duration=${E2E_CMD_DURATION:-12}
cmd=$(hmbq_build_dir)/tools/hmbtrace-cmd/hmbtrace-cmd
[[ -x "$cmd" ]] || { echo "FAIL: no $cmd: build it (ninja -C BUILD tools/hmbtrace-cmd/hmbtrace-cmd)"; exit 1; }
# check_record: the guest's `hmbtrace-cmd record --duration 3`.
# shellcheck disable=SC2317 # called through e2e_check
check_record() {
	local rc dat=$HMBQ_SHARE/cmd-record.dat json=$HMBQ_SHARE/cmd-record-stat.json
	rc=$(cat "$HMBQ_SHARE/cmd-record.rc" 2>/dev/null)
	[[ "$rc" == 0 ]] || { echo "expected record to exit 0, saw '$rc':"; cat "$HMBQ_SHARE/cmd-record.err"; return 1; }
	grep -q '^decode with: hmbtrace-cmd report -i /tmp/cmd-record.dat$' "$HMBQ_SHARE/cmd-record.err" ||
		{ echo "expected the summary on stderr, saw:"; cat "$HMBQ_SHARE/cmd-record.err"; return 1; }
	[[ -s "$dat" ]] || { echo "no cmd-record.dat came back from the guest"; return 1; }
	"$cmd" stat --json -i "$dat" >"$json" || { echo "hmbtrace-cmd stat -i cmd-record.dat failed"; return 1; }
	python3 - "$json" <<-'EOF'
		import json, sys
		s = json.load(open(sys.argv[1]))
		bad = []
		if s["hmb_state_events"] < 1 or s["hmb_dict_events"] < 1:
		    bad.append(f"expected hmb_state and hmb_dict events, saw {s['hmb_state_events']} and {s['hmb_dict_events']}")
		if s["malformed"] or any(s["dictionary_problems"].values()):
		    bad.append(f"expected no malformed events or dictionary problems, saw {s['malformed']} {s['dictionary_problems']}")
		for d in s["devices"]:
		    for c in d["cores"]:
		        if c["seq_check"] != "agrees" or c["lost"]["total"] != 0:
		            bad.append(f"dev {d['dev']} core {c['core']}: seq_check {c['seq_check']}, lost {c['lost']['total']}")
		print(f"{s['records']} records, {s['hmb_state_events']} hmb_state, {s['hmb_dict_events']} hmb_dict")
		print("\n".join(bad))
		sys.exit(1 if bad else 0)
	EOF
}

echo "$duration" >"$HMBQ_SHARE/stream-duration"
HMBQ_EXTRAS=("$cmd:/usr/bin/hmbtrace-cmd")
e2e_boot --cores 4 --rate "$rate" --count "$count" --seed 11

e2e_check_produced
e2e_check "hmbtrace-cmd status, stream, marker: $count records x 4 cores at $rate/s, exact" \
	python3 "$E2E_DIR/verify_stream.py" --dir "$HMBQ_SHARE"
e2e_check "hmbtrace-cmd record --duration 3: exit 0, summary, hmb events, no loss" check_record
e2e_finish
