#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# smoke, host side: hmb-fwsim (when built) fills the area once the guest says
# ready; the guest proves trace-cmd works; here we check the files came back.
set -uo pipefail
# shellcheck source=mock/qemu/scenario-lib.sh
source "$HMBQ_LIB"

fwsim=0
if hmbq_have_fwsim; then
	# Runs until stopped (SIGTERM: it still writes the truth file).
	hmbq_fwsim_start --cores 2 --rate 2000 --seed 1 \
		--truth "$HMBQ_SHARE/truth.json" && fwsim=1
fi

# shellcheck disable=SC2119 # no extra run-guest.sh arguments
hmbq_boot
hmbq_fwsim_stop

hmbq_check "guest scenario exited 0" test "$HMBQ_GUEST_STATUS" = 0
hmbq_check "guest.log came back over 9p" hmbq_nonempty guest.log
hmbq_check "no WARNING/BUG/Oops in the guest kernel log" hmbq_no_kernel_errors
hmbq_check "ivshmem-plain 1af4:1110 visible in the guest" hmbq_grep '0x1af4 0x1110' pci.txt
hmbq_check "trace-cmd recorded smoke.dat" hmbq_nonempty smoke.dat
hmbq_check "trace-cmd report shows sched_switch" hmbq_grep 'sched_switch' smoke-report.txt
hmbq_check "guest created ready" test -e "$HMBQ_SHARE/ready"
if [[ -n "$HMBQ_MODULE" ]]; then
	hmbq_check "module loaded" hmbq_nonempty lsmod.txt
	hmbq_check "trace instance hmb exists" hmbq_grep '^hmb$' instances.txt
	hmbq_check "trace-cmd recorded the hmb instance" hmbq_nonempty hmb.dat
	if ((fwsim)); then
		hmbq_check "hmb events in the report" hmbq_grep ' hmb_' hmb-report.txt
	else
		hmbq_skip "hmb events (hmb-fwsim not built)"
	fi
else
	hmbq_skip "module steps (no module: build kernel/hmb_trace first)"
fi
if ((fwsim)); then
	hmbq_check "hmb-fwsim ended cleanly" test "$HMBQ_FWSIM_STATUS" = 0
	hmbq_check "hmb-fwsim wrote its truth file" hmbq_nonempty truth.json
else
	hmbq_skip "hmb-fwsim (not built)"
fi
hmbq_finish
