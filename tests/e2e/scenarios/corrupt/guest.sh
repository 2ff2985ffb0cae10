#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# corrupt, guest side: trace-cmd records while hmb-fwsim scribbles over the
# header of one ring page; then the guest shows it is still alive.
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

setup 16384
capture_all corrupt
alive
finish
