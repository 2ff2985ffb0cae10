#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# overrun, guest side: the module polls slowly (poll_interval_us from
# host.sh) while hmb-fwsim overruns a small ring; trace-cmd records with a
# large instance buffer so that ftrace itself loses nothing.
# shellcheck source=tests/e2e/guest-lib.sh
. /mnt/guest-lib.sh

setup 32768
echo "poll_interval_us=$(cat /sys/module/hmb_trace/parameters/poll_interval_us)"
capture_all overrun
finish
