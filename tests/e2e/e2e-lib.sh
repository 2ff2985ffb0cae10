# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# The host side of the e2e scenarios: every tests/e2e/scenarios/*/host.sh
# starts with this prologue (run-scenario.sh runs host.sh from its folder):
#
#   # shellcheck source=tests/e2e/e2e-lib.sh
#   source "${BASH_SOURCE[0]%/*}/../../e2e-lib.sh"
#
# It sets the shell options (-u, pipefail; not -e: every check runs),
# exports PYTHONPATH for the verifiers (tests/lib) and sources the
# harness's scenario-lib.sh (hmbq_*, HMBQ_*), then defines:
#
# e2e_boot FWSIM-ARGS  copy guest-lib.sh into the share, start hmb-fwsim
#                      (FWSIM-ARGS --quiet, truth in truth.json), boot the
#                      guest, stop hmb-fwsim, check the guest scenario ran
#                      to the end. With the array E2E_FWSIM2_ARGS set, a
#                      second simulated SSD too: hmb-fwsim E2E_FWSIM2_ARGS
#                      --quiet on a second area and ivshmem device, truth
#                      in truth2.json (the guest's wait_truth waits for both)
# e2e_prepare          copy guest-lib.sh into the share (the guest sources it)
# e2e_check DESC CMD.. like hmbq_check, but shows CMD's output (indented) so a
#                      failure says what was expected and what was seen
# e2e_verify DESC ARGS verify_trace.py ARGS as a check
# e2e_check_produced   check: hmb-fwsim produced its --count and wrote the truth
#                      (each of the two, with E2E_FWSIM2_ARGS)
# e2e_check_capture NAME
#                      check: NAME.dat came back and trace-cmd report on the
#                      host turns it into NAME.txt
# e2e_cmd_retime IN OUT
#                      check: hmbtrace-cmd retime of IN.dat writes OUT.dat
# e2e_check_stat NAME [--no-loss]
#                      check: hmbtrace-cmd stat --json of NAME.dat agrees with
#                      the truth (tests/e2e/verify_stat.py)
# e2e_finish           check: no kernel report (WARNING, BUG, lockdep, KASAN,
#                      ODEBUG, watchdogs); then exit 0 if every
#                      check passed, 1 otherwise
# e2e_sweep_start FUNC RATE...
#                      (measurements) one hmb-fwsim per rate, in turn
# e2e_sweep_stop       (measurements) stop what is left of the sweep
# e2e_report DAT TXT, e2e_guest_ok, e2e_cmd_stat DAT [--no-loss],
# e2e_no_kernel_errors, e2e_fwsim_finished REASON: the checks' commands

set -uo pipefail
# shellcheck source=mock/qemu/scenario-lib.sh
source "$HMBQ_LIB"

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_VERIFY="$E2E_DIR/verify_trace.py"
# The verifiers' helpers (tests/lib/hmbtest: report parser, format loader,
# truth, checks): imported through PYTHONPATH, the one way (tests/lib/README.md).
export PYTHONPATH="${E2E_DIR%/e2e}/lib${PYTHONPATH:+:$PYTHONPATH}"
E2E_FWSIM2_ARGS=()

e2e_boot() {
	e2e_prepare
	hmbq_fwsim_start "$@" --quiet --truth "$HMBQ_SHARE/truth.json" ||
		{ echo "FAIL: hmb-fwsim"; exit 1; }
	if ((${#E2E_FWSIM2_ARGS[@]})); then
		hmbq_fwsim2_start "${E2E_FWSIM2_ARGS[@]}" --quiet --truth "$HMBQ_SHARE/truth2.json" ||
			{ echo "FAIL: second hmb-fwsim"; exit 1; }
		echo "truth.json truth2.json" >"$HMBQ_SHARE/truth-files"
	fi
	# shellcheck disable=SC2119 # no extra run-guest.sh arguments
	hmbq_boot
	hmbq_fwsim_stop
	e2e_check "guest scenario ran to the end" e2e_guest_ok
}

e2e_prepare() {
	cp "$E2E_DIR/guest-lib.sh" "$HMBQ_SHARE/guest-lib.sh"
}

e2e_check() {
	local desc=$1 out rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	if ((rc == 0)); then
		echo "PASS: $desc"
	else
		echo "FAIL: $desc"
		HMBQ_FAILURES=$((HMBQ_FAILURES + 1))
	fi
	[[ -n "$out" ]] && printf '    %s\n' "${out//$'\n'/$'\n'    }"
	return "$rc"
}

e2e_verify() {
	local desc=$1
	shift
	e2e_check "$desc" python3 "$E2E_VERIFY" "$@"
}

e2e_check_produced() {
	e2e_check "hmb-fwsim produced its count and wrote the truth" e2e_fwsim_finished count
	((${#E2E_FWSIM2_ARGS[@]})) || return 0
	e2e_check "the second hmb-fwsim produced its count and wrote the truth" \
		e2e_fwsim_finished count truth2.json "${HMBQ_FWSIM2_STATUS:-0}" fwsim2.log
}

e2e_check_capture() {
	e2e_check "the capture came back and decodes on the host" e2e_report "$1.dat" "$1.txt"
}

e2e_check_stat() {
	local name=$1
	shift
	e2e_check "hmbtrace-cmd stat of the capture agrees with the truth" e2e_cmd_stat "$name.dat" "$@"
}

e2e_finish() {
	e2e_check "no kernel report (WARNING/BUG/Oops, lockdep, KASAN, ODEBUG, watchdogs)" e2e_no_kernel_errors
	hmbq_finish
}

# trace-cmd report on the host: raw fields (-R), nanosecond timestamps (-t),
# no plugins (-N), so the text does not depend on what is installed here.
e2e_report() {
	local dat=$HMBQ_SHARE/$1 txt=$HMBQ_SHARE/$2
	[[ -s "$dat" ]] || { echo "no capture $1 came back from the guest"; return 1; }
	trace-cmd report -R -t -N -i "$dat" >"$txt" 2>"$txt.err" ||
		{ echo "trace-cmd report -i $1 failed:"; cat "$txt.err"; return 1; }
	trace-cmd report --stat -i "$dat" >"${txt%.txt}.stat" 2>&1 || true
	# The event formats, for the names of values (verify_trace.py).
	# trace-cmd 3.1.6's `report --events` prints nothing; `dump --events` does.
	trace-cmd dump --events "$dat" >"${txt%.txt}.formats" 2>&1 ||
		{ echo "trace-cmd dump --events $1 failed"; return 1; }
}

e2e_cmd_stat() {
	local dat=$1 json=$HMBQ_SHARE/${1%.dat}-stat.json
	local cmd
	shift
	cmd=$(hmbq_build_dir)/tools/hmbtrace-cmd/hmbtrace-cmd
	[[ -x "$cmd" ]] || { echo "no $cmd: build it (ninja -C BUILD tools/hmbtrace-cmd/hmbtrace-cmd)"; return 1; }
	"$cmd" stat --json -i "$HMBQ_SHARE/$dat" >"$json" ||
		{ echo "hmbtrace-cmd stat -i $dat failed"; return 1; }
	python3 "$E2E_DIR/verify_stat.py" --stat "$json" --truth "$HMBQ_SHARE/truth.json" "$@"
}

# e2e_cmd_retime IN OUT: hmbtrace-cmd retime of IN into OUT (both in HMBQ_SHARE).
e2e_cmd_retime() {
	local cmd
	cmd=$(hmbq_build_dir)/tools/hmbtrace-cmd/hmbtrace-cmd
	[[ -x "$cmd" ]] || { echo "no $cmd: build it (ninja -C BUILD tools/hmbtrace-cmd/hmbtrace-cmd)"; return 1; }
	"$cmd" retime -i "$HMBQ_SHARE/$1" -o "$HMBQ_SHARE/$2" 2>"$HMBQ_SHARE/${2%.dat}.log" ||
		{ echo "hmbtrace-cmd retime -i $1 failed:"; cat "$HMBQ_SHARE/${2%.dat}.log"; return 1; }
	sed 's/^/    /' "$HMBQ_SHARE/${2%.dat}.log"
}

e2e_guest_ok() {
	if [[ "$HMBQ_GUEST_STATUS" == 0 ]]; then
		return 0
	fi
	echo "expected guest status 0, saw $HMBQ_GUEST_STATUS (124: timeout, 125: no status, e.g. panic); guest failures:"
	grep -E '^FAIL' "$HMBQ_SHARE/guest.log" 2>/dev/null | head -n 20
	echo "the guest's last lines:"
	tail -n 5 "$HMBQ_SHARE/guest.log" 2>/dev/null | sed 's/^/    /'
	# A hang: the guest's watchdog dumped its blocked tasks (guest-init.sh).
	if grep -q 'hmbtrace-init: watchdog' "$HMBQ_SHARE/console.log" 2>/dev/null; then
		echo "the guest's watchdog (whole dump in console.log):"
		sed -n '/hmbtrace-init: watchdog/,/hmbtrace-init: watchdog: end/p' "$HMBQ_SHARE/console.log" |
			grep -E 'watchdog|task:|NMI backtrace|\+0x[0-9a-f]+/0x' | grep -v '\]  [?] ' | head -n 80 | sed 's/^/    /'
	elif [[ "$HMBQ_GUEST_STATUS" == 124 ]]; then
		echo "no watchdog dump on the console: the guest did not run it (the whole guest hung?); its last console lines:"
		tail -n 15 "$HMBQ_SHARE/console.log" 2>/dev/null | sed 's/^/    /'
	fi
	return 1
}

# e2e_no_kernel_errors: no kernel report in console.log or dmesg.txt
# (hmbq_kernel_report_re of mock/qemu/lib.sh: WARNING, BUG, Oops, panic,
# lockdep, KASAN, ODEBUG, the workqueue and hung-task watchdogs); prints
# the offending lines.
e2e_no_kernel_errors() {
	if grep -Eh "$hmbq_kernel_report_re" "$HMBQ_SHARE/console.log" "$HMBQ_SHARE/dmesg.txt" 2>/dev/null |
		head -n 10 | grep .; then
		echo "expected no kernel report (WARNING, BUG, lockdep, KASAN, ...); saw the lines above"
		return 1
	fi
	[[ -s "$HMBQ_SHARE/dmesg.txt" ]] || { echo "dmesg.txt did not come back"; return 1; }
	return 0
}

# e2e_fwsim_finished REASON [TRUTH STATUS LOG]: hmb-fwsim exited 0 (or was
# stopped by us after finishing) and its truth says stop_reason REASON.
# TRUTH, STATUS, LOG: another simulator's (default: truth.json,
# HMBQ_FWSIM_STATUS, fwsim.log).
e2e_fwsim_finished() {
	local want=$1 truth=${2:-truth.json} status=${3:-${HMBQ_FWSIM_STATUS:-0}} log=${4:-fwsim.log} got
	[[ -s "$HMBQ_SHARE/$truth" ]] || { echo "no $truth from hmb-fwsim"; tail -n 5 "$HMBQ_SHARE/$log"; return 1; }
	got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stop_reason"])' \
		"$HMBQ_SHARE/$truth")
	[[ "$got" == "$want" ]] || { echo "expected hmb-fwsim stop_reason $want, saw $got ($truth)"; return 1; }
	[[ "$status" == 0 ]] || { echo "expected hmb-fwsim status 0, saw $status"; tail -n 5 "$HMBQ_SHARE/$log"; return 1; }
}

# e2e_sweep_start FUNC RATE...: the measurements' producer. Writes the
# rates to the share (sweep-rates, one a line; sweep-steps, their number);
# then, in the background, for each step i one hmb-fwsim on the area that
# waits for the guest's /mnt/ready.i and writes truth.i.json. FUNC i RATE
# sets the array E2E_STEP_ARGS to that step's other arguments (cores,
# rate, count or duration). Each step re-initialises the area, so the
# module sees a reset between steps.
e2e_sweep_start() {
	local fn=$1
	shift
	local rates=("$@")
	hmbq_have_fwsim || { echo "FAIL: hmb-fwsim not built"; exit 1; }
	printf '%s\n' "${rates[@]}" >"$HMBQ_SHARE/sweep-rates"
	echo "${#rates[@]}" >"$HMBQ_SHARE/sweep-steps"
	(
		for i in "${!rates[@]}"; do
			E2E_STEP_ARGS=()
			"$fn" "$i" "${rates[$i]}"
			"$HMBQ_FWSIM" --area "$HMBQ_AREA" --size "$HMBQ_AREA_SIZE" \
				"${E2E_STEP_ARGS[@]}" --seed "$((i + 1))" --quiet \
				--wait-for "$HMBQ_SHARE/ready.$i" \
				--truth "$HMBQ_SHARE/truth.$i.json" >>"$HMBQ_SHARE/fwsim.log" 2>&1 &
			echo $! >"$HMBQ_SHARE/fwsim.pid"
			wait $! || exit 1
		done
	) &
	E2E_SWEEPER=$!
}

# e2e_sweep_stop: after the guest ended, stop the sweep's current hmb-fwsim
# and the sweep itself if they still run.
e2e_sweep_stop() {
	if kill -0 "$E2E_SWEEPER" 2>/dev/null; then
		kill -TERM "$(cat "$HMBQ_SHARE/fwsim.pid")" 2>/dev/null
		kill -TERM "$E2E_SWEEPER" 2>/dev/null
	fi
	wait "$E2E_SWEEPER" 2>/dev/null
}
