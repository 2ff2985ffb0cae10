#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# freeze: the firmware freezes its rings on a latency outlier (ABI 1.1,
# hmb-trace-abi.rst "The freeze"). hmb-fwsim makes core 0's 150th host
# command 50 ms slow (--slow-cmd, --slow-us); the guest arms the freeze
# over the control channel (a 10 ms threshold, N = 16: ctrl/freeze_config)
# before the firmware produces, nobody traces. Checks
# (tests/e2e/verify_freeze.py): hmb_trace.ko noticed the freeze and left a
# crash dump of reason fw_freeze; its meta page says FROZEN, LATENCY, the
# outlier's qid/cid; the dump holds the outlier's cmd_fetch and its
# cmd_complete (the last record before the trigger on core 0) and exactly
# N records after the trigger on every core, the ring's end; after
# ctrl/freeze rearm the state is running and the firmware wrote again
# (its truth: more records than the frozen window's end).
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

e2e_prepare
hmbq_mailbox
hmbq_fwsim_start --cores 2 --rate 2000 --duration 15 --seed 37 --quiet \
	--slow-cmd 150 --slow-us 50000 \
	--mailbox "$HMBQ_MAILBOX" --truth "$HMBQ_SHARE/truth.json" ||
	{ echo "FAIL: hmb-fwsim"; exit 1; }
# shellcheck disable=SC2119 # no extra run-guest.sh arguments
hmbq_boot
hmbq_fwsim_stop
e2e_check "guest scenario ran to the end" e2e_guest_ok
e2e_check "the freeze: a crash dump with the outlier's records and N after per core; re-armed" \
	python3 "$E2E_DIR/verify_freeze.py" --dump "$HMBQ_SHARE/freeze.dump" \
	--ops "$HMBQ_SHARE/freeze-ops.txt" --truth "$HMBQ_SHARE/truth.json" \
	--n-after 16 --threshold-ns 10000000
e2e_finish
