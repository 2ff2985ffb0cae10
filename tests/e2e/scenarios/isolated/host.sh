#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# isolated: a guest booted with isolcpus=1 nohz_full=1 (CPU 1 isolated
# from scheduler domains, timers and unbound work). hmb-fwsim writes 4
# cores with a control channel (mailbox), so the drains and the clock
# sync both run; the guest enables the events from CPU 1 (the kick path)
# and traces 5 s. A second instance records every hrtimer expiry and
# every work item run on each CPU (timer:hrtimer_expire_entry,
# workqueue:workqueue_execute_start). Checks (verify_isolated.py): no
# control request while nobody traced (the quiet channel); no
# hmb_trace timer or work on CPU 1, and on CPU 0 the drain timer, the
# drain work and the clock work (the method sees them); every drain
# context on CPU 0 (debugfs drains, core_cpu); records were delivered;
# no WARN/BUG/Oops.
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

e2e_prepare
hmbq_mailbox
hmbq_fwsim_start --cores 4 --rate 2000 --duration 20 --seed 41 --quiet \
	--mailbox "$HMBQ_MAILBOX" --truth "$HMBQ_SHARE/truth.json" ||
	{ echo "FAIL: hmb-fwsim"; exit 1; }
# No crash dump, so no calibration run at attach: "nobody traces" means
# no control request at all here (the reference SSD's quiet scenario
# covers the calibration run).
HMBQ_MODULE_PARAMS="${HMBQ_MODULE_PARAMS:+$HMBQ_MODULE_PARAMS }coredump_kb=0"
hmbq_boot --append "isolcpus=1 nohz_full=1"
hmbq_fwsim_stop
e2e_check "guest scenario ran to the end" e2e_guest_ok
e2e_check "isolcpus=1 nohz_full=1: no hmb_trace timer or work on CPU 1" \
	python3 "$E2E_DIR/verify_isolated.py" "$HMBQ_SHARE"
e2e_finish
