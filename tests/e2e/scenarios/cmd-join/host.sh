#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# cmd-join: every host NVMe command joined to the firmware work that
# served it, on a real emulated NVMe disk. The guest gets QEMU's -device
# nvme (hmbq_nvme), whose commands QEMU logs; hmb-fwsim follows that log
# (--follow-qemu-nvme) and writes cmd_fetch / NAND / cmd_complete records
# for those very commands with their real (sqid, cid), on a firmware clock
# that drifts (E2E_CMD_JOIN_PPM) and is fitted over the control channel.
# The guest records with `hmbtrace-cmd record` (nvme events + hmb records)
# while dd processes on every vCPU do O_DIRECT reads and writes. Checks
# (tests/e2e/verify_cmd_join.py on `hmbtrace-cmd stat --commands-json`):
# at least E2E_CMD_JOIN_MIN host commands, reads and writes, on more than
# one queue; every host command joined, or listed with a reason (at most
# 0.1%); every joined command's converted fetch and completion inside its
# [nvme_setup_cmd, nvme_complete_rq] widened by the stated bound; the
# simulator served as many commands as the host completed; no WARN/BUG;
# `hmbtrace-cmd export` shows every host command, with a flow for each
# joined one, in a trace protoc decodes. E2E_CMD_JOIN_CLOCK=mono (or
# another trace clock the module fits): both buffers recorded on it
# (hmbtrace-cmd record --clock), the same checks.
# shellcheck source=tests/e2e/e2e-lib.sh
source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"

count=${E2E_CMD_JOIN_COUNT:-1600}
jobs=${E2E_CMD_JOIN_JOBS:-4}
min=${E2E_CMD_JOIN_MIN:-10000}
cmd=$(hmbq_build_dir)/tools/hmbtrace-cmd/hmbtrace-cmd
[[ -x "$cmd" ]] || { echo "FAIL: no $cmd: build it (ninja -C BUILD tools/hmbtrace-cmd/hmbtrace-cmd)"; exit 1; }
e2e_prepare
echo "$count" >"$HMBQ_SHARE/count"
echo "$jobs" >"$HMBQ_SHARE/jobs"
echo "${E2E_CMD_JOIN_CLOCK:-}" >"$HMBQ_SHARE/clock"
hmbq_mailbox
hmbq_nvme
hmbq_fwsim_start --cores 2 --clock-hz 1000000000 --drift-ppm "${E2E_CMD_JOIN_PPM:-70}" \
	--mailbox "$HMBQ_MAILBOX" --follow-qemu-nvme "$HMBQ_NVME_TRACE" --quiet \
	--truth "$HMBQ_SHARE/truth.json" || { echo "FAIL: hmb-fwsim"; exit 1; }
HMBQ_EXTRAS=("$cmd:/usr/bin/hmbtrace-cmd")
HMBQ_TIMEOUT=$((HMBQ_TIMEOUT > 240 ? HMBQ_TIMEOUT : 240))
# No crash dump, so no calibration run at attach: the capture starts with
# the sync idle and its first records held until the first fit (the path
# this scenario joins through; the dump and quiet scenarios of the
# reference SSD cover the calibration).
HMBQ_MODULE_PARAMS="${HMBQ_MODULE_PARAMS:+$HMBQ_MODULE_PARAMS }coredump_kb=0"
# shellcheck disable=SC2119 # no extra run-guest.sh arguments
hmbq_boot
hmbq_fwsim_stop
e2e_check "guest scenario ran to the end" e2e_guest_ok
# shellcheck disable=SC2317 # called through e2e_check
join() {
	"$cmd" stat -i "$HMBQ_SHARE/cmd-join.dat" --commands-json "$HMBQ_SHARE/cmd-join-commands.json" \
		>"$HMBQ_SHARE/cmd-join-stat.txt" || { echo "hmbtrace-cmd stat failed"; return 1; }
	sed -n '/^NVMe commands/,$p' "$HMBQ_SHARE/cmd-join-stat.txt"
}
e2e_check "hmbtrace-cmd stat joins the capture's commands" join
e2e_check "every host command joined or listed with a reason; fetch and completion inside the host interval" \
	python3 "$E2E_DIR/verify_cmd_join.py" --commands "$HMBQ_SHARE/cmd-join-commands.json" \
	--truth "$HMBQ_SHARE/truth.json" --min-commands "$min" --max-unmatched 0.001
# shellcheck disable=SC2317 # called through e2e_check
export_story() {
	local out=$HMBQ_SHARE/cmd-join-export.txt host joined commands flows
	"$cmd" export -i "$HMBQ_SHARE/cmd-join.dat" -o "$HMBQ_SHARE/cmd-join.pftrace" >"$out" ||
		{ echo "hmbtrace-cmd export failed"; return 1; }
	cat "$out"
	protoc --proto_path="$E2E_DIR/../../tools/hmbtrace-cmd/export" --decode=perfetto.protos.Trace \
		perfetto_trace.proto <"$HMBQ_SHARE/cmd-join.pftrace" >/dev/null ||
		{ echo "protoc cannot decode the export"; return 1; }
	read -r host joined < <(sed -n 's/^  host commands \([0-9]*\), joined \([0-9]*\),.*/\1 \2/p' \
		"$HMBQ_SHARE/cmd-join-stat.txt")
	read -r commands flows < <(sed -n 's/.*: \([0-9]*\) host nvme commands .*, \([0-9]*\) flows .*/\1 \2/p' "$out")
	echo "stat: $host host commands, $joined joined; export: $commands commands, $flows flows"
	[[ -n $host && $commands == "$host" && $flows -ge $joined ]]
}
e2e_check "hmbtrace-cmd export: every host command on its queue's track, a flow for every joined one" \
	export_story
e2e_finish
