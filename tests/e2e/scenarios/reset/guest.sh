#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# reset, guest side: trace-cmd records while hmb-fwsim resets the firmware
# (new producer generation) mid-run; then the guest shows it is still alive.
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

setup 16384
capture_all reset
alive
finish
