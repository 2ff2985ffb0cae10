# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Host-side helpers for the e2e scenarios (mock/qemu/scenarios/*/host.sh),
# sourced after scenario-lib.sh:
#
#   source "$HMBQ_LIB"
#   source "$HMBQ_REPO/tests/e2e/e2e-lib.sh"
#
# e2e_prepare          copy guest-lib.sh into the share (the guest sources it)
# e2e_check DESC CMD.. like hmbq_check, but shows CMD's output (indented) so a
#                      failure says what was expected and what was seen
# e2e_verify DESC ARGS verify_trace.py ARGS as a check
# e2e_report DAT TXT   trace-cmd report of the guest's capture, on the host
# e2e_guest_ok         the guest scenario exited 0 (shows its FAIL lines if not)
# e2e_cmd_stat DAT [--no-loss]
#                      hmbtrace-cmd stat --json of the capture agrees with the
#                      truth (tests/e2e/verify_stat.py)

E2E_DIR="$HMBQ_REPO/tests/e2e"
E2E_VERIFY="$E2E_DIR/verify_trace.py"

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

# trace-cmd report on the host: raw fields (-R), nanosecond timestamps (-t),
# no plugins (-N), so the text does not depend on what is installed here.
e2e_report() {
	local dat=$HMBQ_SHARE/$1 txt=$HMBQ_SHARE/$2
	[[ -s "$dat" ]] || { echo "no capture $1 came back from the guest"; return 1; }
	trace-cmd report -R -t -N -i "$dat" >"$txt" 2>"$txt.err" ||
		{ echo "trace-cmd report -i $1 failed:"; cat "$txt.err"; return 1; }
	trace-cmd report --stat -i "$dat" >"${txt%.txt}.stat" 2>&1 || true
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

e2e_guest_ok() {
	if [[ "$HMBQ_GUEST_STATUS" == 0 ]]; then
		return 0
	fi
	echo "expected guest status 0, saw $HMBQ_GUEST_STATUS (124: timeout, 125: no status, e.g. panic); guest failures:"
	grep -E '^FAIL' "$HMBQ_SHARE/guest.log" 2>/dev/null | head -n 20
	return 1
}

# e2e_no_kernel_errors: no WARNING/BUG/Oops/panic in console.log or dmesg.txt;
# prints the offending lines.
e2e_no_kernel_errors() {
	local pat='WARNING:|BUG:|Oops|Kernel panic|KASAN|UBSAN|possible circular locking|hung_task|general protection'
	if grep -Eh "$pat" "$HMBQ_SHARE/console.log" "$HMBQ_SHARE/dmesg.txt" 2>/dev/null | head -n 10 | grep .; then
		echo "expected no kernel WARNING/BUG/Oops; saw the lines above"
		return 1
	fi
	[[ -s "$HMBQ_SHARE/dmesg.txt" ]] || { echo "dmesg.txt did not come back"; return 1; }
	return 0
}

# e2e_fwsim_finished REASON: hmb-fwsim exited 0 (or was stopped by us after
# finishing) and its truth says stop_reason REASON.
e2e_fwsim_finished() {
	local want=$1 got
	[[ -s "$HMBQ_SHARE/truth.json" ]] || { echo "no truth.json from hmb-fwsim"; tail -n 5 "$HMBQ_SHARE/fwsim.log"; return 1; }
	got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["stop_reason"])' \
		"$HMBQ_SHARE/truth.json")
	[[ "$got" == "$want" ]] || { echo "expected hmb-fwsim stop_reason $want, saw $got"; return 1; }
	[[ "${HMBQ_FWSIM_STATUS:-0}" == 0 ]] || { echo "expected hmb-fwsim status 0, saw $HMBQ_FWSIM_STATUS"; tail -n 5 "$HMBQ_SHARE/fwsim.log"; return 1; }
}
