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
# SIGINT); the not-loaded error names the fix.
set -uo pipefail
# shellcheck source=mock/qemu/scenario-lib.sh
source "$HMBQ_LIB"
# shellcheck source=tests/e2e/e2e-lib.sh
# shellcheck disable=SC2153 # HMBQ_REPO comes from run-scenario.sh
source "$HMBQ_REPO/tests/e2e/e2e-lib.sh"

rate=${E2E_CMD_RATE:-2000}
count=${E2E_CMD_COUNT:-8000}
duration=${E2E_CMD_DURATION:-12}
cmd=$(hmbq_build_dir)/tools/hmbtrace-cmd/hmbtrace-cmd
[[ -x "$cmd" ]] || { echo "FAIL: no $cmd: build it (ninja -C BUILD tools/hmbtrace-cmd/hmbtrace-cmd)"; exit 1; }
e2e_prepare
echo "$duration" >"$HMBQ_SHARE/stream-duration"
HMBQ_EXTRAS=("$cmd:/usr/bin/hmbtrace-cmd")
hmbq_fwsim_start --cores 4 --rate "$rate" --count "$count" --seed 11 --quiet \
	--truth "$HMBQ_SHARE/truth.json" || { echo "FAIL: hmb-fwsim"; exit 1; }
# shellcheck disable=SC2119
hmbq_boot
hmbq_fwsim_stop

e2e_check "guest scenario ran to the end" e2e_guest_ok
e2e_check "hmb-fwsim produced its count and wrote the truth" e2e_fwsim_finished count
e2e_check "hmbtrace-cmd status, stream, marker: $count records x 4 cores at $rate/s, exact" \
	python3 "$HMBQ_REPO/tests/e2e/verify_stream.py" --dir "$HMBQ_SHARE"
e2e_check "no kernel WARNING/BUG/Oops" e2e_no_kernel_errors
hmbq_finish
