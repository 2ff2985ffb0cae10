#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# decoders: one firmware run, decoded three ways, must read the same. The
# firmware resets mid-run and comes back as another build
# (--new-build-at-reset: every event renamed, two formats changed), so a
# decoder that picks the wrong generation's dictionary prints other text.
#   - trace-cmd report with plugin_hmb.so, on the guest's capture
#   - hmbtrace-cmd report, on the same capture
#   - hmb-read --records, reading the area on the host while the guest's
#     module drains it (both only read the HMB)
# Checks (verify_decoders.py): every record the plugin decodes reads as
# hmbtrace-cmd prints it, and it decodes every record (the firmware starts
# after the capture: the module puts hmb_state and the dictionary before
# the first record after a quiet spell); hmbtrace-cmd decodes every record; every
# record hmb-read and hmbtrace-cmd both have reads the same; records of both
# builds are among them.
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

read_bin=$(hmbq_build_dir)/tools/hmb-read/hmb-read
cmd_bin=$(hmbq_build_dir)/tools/hmbtrace-cmd/hmbtrace-cmd

# hmbtrace-cmd report of the capture into decoders-cmd.txt.
cmd_report() {
	"$cmd_bin" report -i "$HMBQ_SHARE/decoders.dat" >"$HMBQ_SHARE/decoders-cmd.txt"
}

e2e_prepare
hmbq_fwsim_start --cores 2 --rate 2000 --count 6000 --reset-at 3000 --new-build-at-reset \
	--seed 7 --quiet --truth "$HMBQ_SHARE/truth.json" || { echo "FAIL: hmb-fwsim"; exit 1; }
# Until stopped: the guest boots for longer than any idle time would allow.
"$read_bin" --area "$HMBQ_AREA" --wait-attach 60 --idle-exit 600 --show 0 --quiet \
	--records "$HMBQ_SHARE/decoders-read.txt" >"$HMBQ_SHARE/hmb-read.log" 2>&1 &
read_pid=$!
# shellcheck disable=SC2119 # no extra run-guest.sh arguments
hmbq_boot
hmbq_fwsim_stop
kill -TERM "$read_pid" 2>/dev/null
wait "$read_pid"
echo "hmb-read ended with status $? (143 or 0 expected after SIGTERM)" >>"$HMBQ_SHARE/hmb-read.log"
e2e_check "guest scenario ran to the end" e2e_guest_ok

e2e_check_produced
e2e_check "trace-cmd report with plugin_hmb.so decodes the capture" \
	hmbq_decoded_report decoders.dat decoders-plugin.txt
e2e_check "hmbtrace-cmd report decodes the capture" cmd_report
e2e_check "plugin_hmb.so, hmbtrace-cmd and hmb-read print the same text for the same record" \
	python3 "$E2E_DIR/verify_decoders.py" --plugin "$HMBQ_SHARE/decoders-plugin.txt" \
	--cmd "$HMBQ_SHARE/decoders-cmd.txt" --read "$HMBQ_SHARE/decoders-read.txt" \
	--truth "$HMBQ_SHARE/truth.json" --plugin-decodes-all
e2e_finish
