#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The user-space tools on a newer Debian release: in that release's tools
# chroot (chroot.sh SUITE --tools), against its libtracefs, libtraceevent,
# libtracecmd, compiler, meson and protobuf,
#   1. meson setup + ninja into build/chroot-SUITE (warnings are errors;
#      no benchmarks: they are not tests),
#   2. meson test --suite unit there (the browser suite needs Chromium,
#      which the chroot does not have: it runs on the host, scripts/test.sh),
#   3. tests/install/run.sh --no-dkms: the Debian packages built with
#      dpkg-buildpackage, lintian, and used from a clean root (the DKMS
#      build and the guest need the headers of a kernel the chroot does
#      not run on: they run on the host and in the kernel matrix).
# Usage: mock/kernels/build-tools.sh [--make] [--no-packages] SUITE...
#   SUITE   trixie or sid (or 6.12, 7.2)
#   --make  make a missing tools chroot (mmdebstrap, ~6-9 min a suite);
#           without it a suite whose chroot is not cached is skipped
#   --no-packages  steps 1 and 2 only (step 3 is a second full build of
#           the installed targets, in a copy of the tree)
# Each step counts one result per meson test and per install check, plus
# one for the build. Ends with "tools-chroot: N passed, M failed"; exits 77
# (nothing run) when no chroot is cached and --make is not given.
set -euo pipefail
# shellcheck source=mock/kernels/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

make_chroot=0
packages=1
suites=()
for arg in "$@"; do
	case "$arg" in
	--make) make_chroot=1 ;;
	--no-packages) packages=0 ;;
	-h | --help) sed -n '3,/^set -euo/p' "$0" | sed '$d'; exit 0 ;;
	-*) hmbk_die "unknown option $arg (see --help)" ;;
	*)
		s=$(hmbk_release "$arg") || hmbk_die "unknown release '$arg'"
		suites+=("$s")
		;;
	esac
done
((${#suites[@]})) || suites=(trixie sid)
cd "$hmbk_repo"

passed=0
failed=0
ran=0
for suite in "${suites[@]}"; do
	if ((!make_chroot)) && ! "$hmbk_dir/chroot.sh" "$suite" --tools --cached >/dev/null; then
		echo "tools-chroot: $suite: SKIPPED (no $suite tools chroot cached): make it with" \
			"mock/kernels/chroot.sh $suite --tools --path, or run with --make" >&2
		continue
	fi
	ran=1
	t0=$SECONDS
	bdir=build/chroot-$suite
	log=build/chroot-$suite.log
	mkdir -p build
	echo "tools-chroot: $suite: building into $bdir (log: $log)"
	# The setup is redone when the chroot changed (new key: another
	# compiler or library version), as meson's cache would be stale.
	chroot_dir=$("$hmbk_dir/chroot.sh" "$suite" --tools --path)
	if [[ -f $bdir/build.ninja && $(cat "$bdir/.hmbtrace-chroot" 2>/dev/null) != "$chroot_dir" ]]; then
		rm -rf "$bdir"
	fi
	# shellcheck disable=SC2016 # expanded by the chroot's shell
	if nice -n 10 "$hmbk_dir/chroot.sh" "$suite" --tools -- /bin/bash -c '
		set -e
		[[ -f $1/build.ninja ]] || meson setup "$1" --werror -Dbenchmarks=disabled
		ninja -C "$1"' _ "$bdir" >"$log" 2>&1; then
		echo "$chroot_dir" >"$bdir/.hmbtrace-chroot"
		passed=$((passed + 1))
		echo "ok   $suite: build ($((SECONDS - t0)) s)"
		grep -E '^(C|C\+\+) compiler for the host|^Run-time dependency (libtrace|protobuf|GTest)|^ *Version:' \
			"$log" | sed 's/^/     /' || true
	else
		failed=$((failed + 1))
		echo "FAIL $suite: build (log: $log)"
		tail -n 30 "$log" | sed 's/^/     /'
		continue
	fi

	t1=$SECONDS
	rm -f "$bdir/meson-logs/testlog.json"
	"$hmbk_dir/chroot.sh" "$suite" --tools -- \
		meson test -C "$bdir" --suite unit --print-errorlogs >>"$log" 2>&1 || true
	tl=$bdir/meson-logs/testlog.json
	p=$(grep -c '"result": "OK"' "$tl" 2>/dev/null || true)
	f=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$tl" 2>/dev/null || true)
	p=${p:-0} f=${f:-0}
	((p + f)) || f=1 # no result: the suite did not run
	passed=$((passed + p))
	failed=$((failed + f))
	echo "$( ((f)) && echo FAIL || echo 'ok  ') $suite: unit suite: $p passed, $f failed ($((SECONDS - t1)) s)"
	((f == 0)) || grep -E '^ *[0-9]+/[0-9]+ .*(FAIL|TIMEOUT|ERROR)' "$log" | sed 's/^/     /' || true

	if ((!packages)); then
		echo "tools-chroot: $suite took $((SECONDS - t0)) s (packages not built: --no-packages)"
		continue
	fi
	t1=$SECONDS
	out=build/install-check-$suite
	"$hmbk_dir/chroot.sh" "$suite" --tools -- \
		tests/install/run.sh --no-dkms --out "$out" >"$out.log" 2>&1 || true
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$out.log" | tail -1 || true)
	if [[ -z $line || $line == "0 passed, 0 failed" ]]; then
		failed=$((failed + 1))
		echo "FAIL $suite: install check reported no results (log: $out.log)"
		tail -n 20 "$out.log" | sed 's/^/     /'
	else
		p=$(echo "$line" | cut -d' ' -f1) f=$(echo "$line" | cut -d' ' -f3)
		passed=$((passed + p))
		failed=$((failed + f))
		echo "$( ((f)) && echo FAIL || echo 'ok  ') $suite: install check: $line ($((SECONDS - t1)) s)"
		((f == 0)) || grep -E '^FAIL ' "$out.log" | sed 's/^/     /'
	fi
	echo "tools-chroot: $suite took $((SECONDS - t0)) s"
done
((ran)) || exit 77
echo "tools-chroot: $passed passed, $failed failed"
((failed == 0))
