#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# hmb-fwsim and hmb-read as two processes over one shared area file, the way
# the demo runs them: the reader must account for every record the simulated
# firmware produced (delivered + lost == produced, per core), through a
# firmware reset and through a corrupted page.
# Usage: hmb_read_test.sh HMB-FWSIM HMB-READ
set -uo pipefail
fwsim=$1
reader=$2
dir=$(mktemp -d)
area=/dev/shm/hmb-read-test-$$
trap 'rm -rf "$dir" "$area"' EXIT
fails=0

# run NAME FWSIM-ARGS...: both processes at once; reader output in $dir/NAME.out
run() {
	local name=$1
	shift
	rm -f "$area"
	"$fwsim" --area "$area" --size 4M --cores 4 --quiet --start-delay 0.3 \
		--truth "$dir/$name.json" "$@" 2>"$dir/$name.fwsim.err" &
	local pid=$!
	"$reader" --area "$area" --truth "$dir/$name.json" --idle-exit 0.5 --quiet \
		>"$dir/$name.out" 2>&1 &
	local rpid=$!
	wait "$pid" || { echo "FAIL $name: hmb-fwsim failed"; cat "$dir/$name.fwsim.err"; }
	wait "$rpid"
	return $?
}

expect() {
	local name=$1 what=$2 pattern=$3
	if grep -Eq -- "$pattern" "$dir/$name.out"; then
		echo "ok   $name: $what"
	else
		echo "FAIL $name: $what (no /$pattern/ in the reader's output:)"
		sed 's/^/    /' "$dir/$name.out"
		fails=$((fails + 1))
	fi
}

run keeps-up --rate 20000 --count 20000
expect keeps-up "exact accounting" '^verify: ok: .* on 4 of 4 cores'
expect keeps-up "nothing lost" '^0 +20000 +0 +0 +0 +0$'

run overrun --rate 0 --count 200000 --pages-per-core 4
expect overrun "exact accounting under overrun" '^verify: ok: .* on 4 of 4 cores'

run reset --rate 20000 --count 10000 --reset-at 5000
expect reset "the reset is seen" 'producer generation [0-9]+, 1 resets seen'
expect reset "exact accounting in the new life" '^verify: ok: .* on 4 of 4 cores'

run corrupt --rate 20000 --count 10000 --corrupt-page 2:3000
expect corrupt "exact accounting with a corrupted page" '^verify: ok: .* on 4 of 4 cores'
expect corrupt "the corrupted page counted as invalid on core 2" '^2 +[0-9]+ +0 +[0-9]+ +[1-9][0-9]* +0$'
expect corrupt "an area error reported" '^area error bad_page_header: [1-9]'

exit $((fails != 0))
