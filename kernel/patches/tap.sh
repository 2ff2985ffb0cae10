# SPDX-License-Identifier: GPL-2.0-only
#
# The checks' bookkeeping of the kernel-patch verifiers (verify.sh,
# verify-series.sh, tests/install/nvme-series.sh): one "ok - " or
# "not ok - " line per check, and the summary line scripts/test.sh counts
# (count_tagged): "NAME: N passed, M failed (S s)". Source it, then set
# tap_name.
#
#   ok WHAT / not_ok WHAT   one check
#   finish                  the summary; exit 0 if none failed, else 1
#   skip WHY                "NAME: SKIPPED: WHY", exit 77 (counted skipped)
# shellcheck shell=bash

tap_name=${tap_name:-checks}
tap_start=$SECONDS
passed=0
failed=0
ok() { echo "ok - $*"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $*"; failed=$((failed + 1)); }
finish() {
	echo "$tap_name: $passed passed, $failed failed ($((SECONDS - tap_start)) s)"
	((failed == 0)) || exit 1
	exit 0
}
skip() {
	echo "$tap_name: SKIPPED: $*"
	exit 77
}
