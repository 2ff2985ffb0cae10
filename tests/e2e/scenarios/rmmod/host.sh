#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# rmmod: rmmod hmb_trace while hmb-fwsim produces at full rate (--rate 0)
# and readers hold the instance's trace_pipe_raw open. Checks: rmmod
# succeeds, the module is gone from /proc/modules, the guest keeps running
# (the scenario's final command ran), no Oops/WARN/BUG in the kernel log;
# records were really flowing when it was removed; the module loads again,
# delivers, and unloads cleanly (instance removed) without a reader; an
# instance the user made before insmod is adopted and left by rmmod.
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

cores=${E2E_RMMOD_CORES:-4}
# No --count: runs until stopped after the guest powered off.
e2e_boot --cores "$cores" --rate 0 --seed 13

# shellcheck disable=SC2317 # called through e2e_check
flowing() {
	local a b
	read -r _ a _ b _ < <(sed -n 's/^load_delivered_1s: \([0-9]*\) .*-> \([0-9]*\) .*/x \1 y \2 z/p' \
		"$HMBQ_SHARE/rmmod-load.txt")
	[[ -n "$a" && -n "$b" ]] || { echo "no load figures from the guest"; return 1; }
	echo "core 0 delivered $a -> $b in 1 s just before rmmod"
	((b > a)) || { echo "expected records flowing before rmmod, saw none"; return 1; }
}
e2e_check "records were flowing right before rmmod" flowing
e2e_check "rmmod under load with readers returned 0" hmbq_grep '^rmmod_status: 0' rmmod-load.txt
e2e_check "guest ran commands after rmmod" hmbq_nonempty after-rmmod.txt
e2e_check "final command ran (guest alive)" hmbq_nonempty alive
e2e_check "reloaded module delivered records" hmbq_grep '^reload_delivered: [1-9]' rmmod-load.txt
e2e_check "a user's instance (mkdir before insmod) is left in place by rmmod" \
	hmbq_grep '^adopted_kept: yes' rmmod-load.txt
e2e_check "reloaded module's events reached the ftrace buffer" hmbq_grep '^reload_cpu0_entries: [1-9]' rmmod-load.txt
e2e_finish
