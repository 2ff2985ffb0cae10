#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# corrupt, guest side: trace-cmd records while hmb-fwsim scribbles over the
# header of one ring page; then the guest shows it is still alive.
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

load_module || finish
echo 16384 >"$I/buffer_size_kb" || fail "buffer_size_kb"
capture corrupt 'wait_truth; sleep 2'
collect corrupt
step "still alive: $(cat /proc/loadavg)"
echo alive >/mnt/alive
finish
